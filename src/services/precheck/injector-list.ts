/**
 * `meshctl x injector list`: two tables. First the namespaces with injection enabled (labelled
 * `mesh-injection=enabled`, or `mesh.io/rev=<revision>`), the revision that serves them and the
 * revisions their pods were injected by (counted; `<non-mesh>` for pods without a sidecar).
 * Then one row per injector webhook configuration (those of install/webhooks.ts and revision
 * tags): its revision, its tag, and the namespaces its webhooks' namespace selectors select.
 */
import { Either } from "effect"
import { Labels } from "../constants.js"
import { parseLabelSelector, selectorMatches } from "../injection/label-selector.js"
import { INJECTION_WEBHOOK_NAME } from "../install/names.js"
import { formatTable } from "../proxy-config/table.js"
import { TAG_LABEL } from "../revision-tags/names.js"
import { NAMESPACE_INJECTION_LABEL, type ObjectSummary, podRevision } from "./checks.js"

export const NON_MESH = "<non-mesh>"
export const NO_TAG = "<no tag>"

/** The revision serving a namespace; undefined when injection is not enabled there. */
export const namespaceRevision = (ns: Pick<ObjectSummary, "labels">): string | undefined => {
  const rev = ns.labels[Labels.revision]
  if (ns.labels[NAMESPACE_INJECTION_LABEL] === "disabled") return undefined
  if (rev !== undefined && rev !== "") return rev
  return ns.labels[NAMESPACE_INJECTION_LABEL] === "enabled" ? "default" : undefined
}

const countRevisions = (pods: ReadonlyArray<ObjectSummary>): string => {
  const counts = new Map<string, number>()
  for (const pod of pods) {
    const rev = podRevision(pod) ?? NON_MESH
    counts.set(rev, (counts.get(rev) ?? 0) + 1)
  }
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([rev, n]) => `${rev}: ${n}`)
    .join(" ")
}

export const namespaceTable = (
  namespaces: ReadonlyArray<ObjectSummary>,
  pods: ReadonlyArray<ObjectSummary>,
): string => {
  const rows = namespaces
    .flatMap((ns) => {
      const revision = namespaceRevision(ns)
      return revision === undefined
        ? []
        : [[ns.name, revision, countRevisions(pods.filter((p) => p.namespace === ns.name))]]
    })
    .sort((a, b) => a[0]!.localeCompare(b[0]!))
  return formatTable([["NAMESPACE", "MESH-REVISION", "POD-REVISIONS"], ...rows])
}

export interface WebhookConfiguration {
  readonly metadata: {
    readonly name?: string
    readonly labels?: Readonly<Record<string, string>>
  }
  readonly webhooks?: ReadonlyArray<{ readonly name?: string; readonly namespaceSelector?: unknown }>
}

/** Whether a mutating webhook configuration is one of the mesh's injectors. */
export const isInjector = (config: WebhookConfiguration): boolean =>
  (config.metadata.name ?? "").startsWith(INJECTION_WEBHOOK_NAME) ||
  config.metadata.labels?.[TAG_LABEL] !== undefined ||
  (config.webhooks ?? []).some((w) => (w.name ?? "").endsWith("sidecar-injector.mesh.io"))

/** The namespaces any webhook of the configuration selects (a missing or empty selector selects all). */
export const selectedNamespaces = (
  config: WebhookConfiguration,
  namespaces: ReadonlyArray<Pick<ObjectSummary, "name" | "labels">>,
): ReadonlyArray<string> => {
  const selectors = (config.webhooks ?? []).map((w) => {
    if (w.namespaceSelector === undefined) return "all" as const
    const parsed = parseLabelSelector(w.namespaceSelector)
    if (Either.isLeft(parsed)) return undefined
    return parsed.right.requirements.length === 0 ? ("all" as const) : parsed.right
  })
  return namespaces
    .filter((ns) => selectors.some((s) => s === "all" || (s !== undefined && selectorMatches(s, ns.labels))))
    .map((ns) => ns.name)
    .sort()
}

export const webhookTable = (
  configs: ReadonlyArray<WebhookConfiguration>,
  namespaces: ReadonlyArray<Pick<ObjectSummary, "name" | "labels">>,
): string => {
  const rows = configs
    .filter(isInjector)
    .map((config) => {
      const selected = selectedNamespaces(config, namespaces)
      return [
        config.metadata.labels?.[Labels.revision] ?? "default",
        config.metadata.labels?.[TAG_LABEL] ?? NO_TAG,
        selected.length === 0 ? "<none>" : selected.join(","),
      ]
    })
    .sort((a, b) => a[0]!.localeCompare(b[0]!) || a[1]!.localeCompare(b[1]!))
  return formatTable([["MESH-REVISION", "TAG", "NAMESPACES"], ...rows])
}
