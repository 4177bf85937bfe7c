/**
 * `meshctl x precheck`: what could go wrong installing or upgrading the mesh on a cluster, as
 * analysis messages (printed and thresholded like `analyze`'s). Pure: the run module gathers a
 * `PrecheckInput` from the cluster and these functions judge it.
 *
 * Checks:
 *   - control plane (skipped with --skip-controlplane): the orchestrator answered and its version
 *     is at least MIN_ORCHESTRATOR_VERSION; the user may create the kinds an install creates
 *     (SelfSubjectAccessReview; a server without that API gives one Info "cannot check"); a
 *     control plane of the requested revision already runs (upgrade in place) or of others;
 *   - data plane: namespaces carrying both injection labels; injected pods whose revision has no
 *     control plane any more;
 *   - with --from-version: settings of the mesh config deprecated or removed since that version.
 *
 * The message codes of the checks the analyzers do not have are the mesh's own (MSH08xx).
 */

import type { Level, MessageType } from "../analysis/message-types.js"
import { MessageTypes } from "../analysis/message-types.js"
import type { Entry, Message } from "../analysis/snapshot.js"
import { message } from "../analysis/snapshot.js"
import { Annotations, Labels } from "../constants.js"
import { parseStatus } from "../injection/status.js"

const type = (code: string, name: string, level: Level): MessageType => ({ code: `MSH${code}`, name, level })

export const PrecheckMessageTypes = {
  UnsupportedOrchestratorVersion: type("0144", "UnsupportedOrchestratorVersion", "Error"),
  OrchestratorUnreachable: type("0801", "OrchestratorUnreachable", "Error"),
  InsufficientPermissions: type("0802", "InsufficientPermissions", "Error"),
  PermissionsNotChecked: type("0803", "PermissionsNotChecked", "Info"),
  RevisionAlreadyInstalled: type("0804", "RevisionAlreadyInstalled", "Info"),
  OtherRevisionInstalled: type("0805", "OtherRevisionInstalled", "Info"),
  PodInjectedByMissingRevision: type("0806", "PodInjectedByMissingRevision", "Warning"),
  RemovedSetting: type("0807", "RemovedSetting", "Error"),
} as const

/** The oldest orchestrator minor version the mesh supports (the reference's floor for its current release). */
export const MIN_ORCHESTRATOR_VERSION = { major: 1, minor: 28 } as const

export const NAMESPACE_INJECTION_LABEL = "mesh-injection"

export interface ObjectSummary {
  readonly name: string
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
}

export type PermissionResult =
  | { readonly _tag: "Checked"; readonly denied: ReadonlyArray<string> }
  | { readonly _tag: "Unavailable"; readonly reason: string }

export interface PrecheckInput {
  /** undefined: the orchestrator did not answer (`reachError` says why). */
  readonly serverVersion: { readonly major: string; readonly minor: string; readonly gitVersion?: string } | undefined
  readonly reachError?: string
  readonly permissions: PermissionResult
  /** The revision to install ("" or "default" for the default one). */
  readonly revision: string
  /** Revisions of the control-plane pods present (`mesh.io/rev`, "default" when unlabelled). */
  readonly installedRevisions: ReadonlyArray<string>
  /** Revision tags present (tag → revision), which also keep a revision's injection alive. */
  readonly tags: Readonly<Record<string, string>>
  readonly namespaces: ReadonlyArray<ObjectSummary>
  readonly pods: ReadonlyArray<ObjectSummary>
  readonly skipControlPlane: boolean
  /** `--from-version` ("" when not given). */
  readonly fromVersion: string
  /** The mesh config (the mesh ConfigMap's `mesh` document) as installed, for the settings check. */
  readonly meshConfig: Readonly<Record<string, unknown>>
}

const entry = (kind: string, o: ObjectSummary): Entry => ({
  kind,
  group: "",
  name: o.name,
  namespace: o.namespace,
  labels: o.labels,
  annotations: o.annotations,
  body: {},
})

const revisionName = (revision: string) => (revision === "" ? "default" : revision)

/** "1", "28+" (some providers suffix a plus) → numbers; undefined when unreadable. */
const versionNumbers = (major: string, minor: string) => {
  const ma = Number.parseInt(major, 10)
  const mi = Number.parseInt(minor, 10)
  return Number.isNaN(ma) || Number.isNaN(mi) ? undefined : { major: ma, minor: mi }
}

const controlPlaneChecks = (input: PrecheckInput): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  if (input.serverVersion === undefined) {
    out.push(
      message(
        PrecheckMessageTypes.OrchestratorUnreachable,
        undefined,
        `The orchestrator API server could not be reached: ${input.reachError ?? "no answer"}`,
      ),
    )
    return out
  }
  const v = versionNumbers(input.serverVersion.major, input.serverVersion.minor)
  const min = MIN_ORCHESTRATOR_VERSION
  if (v === undefined || v.major < min.major || (v.major === min.major && v.minor < min.minor))
    out.push(
      message(
        PrecheckMessageTypes.UnsupportedOrchestratorVersion,
        undefined,
        `The orchestrator version ${input.serverVersion.gitVersion ?? `${input.serverVersion.major}.${input.serverVersion.minor}`} is not supported by the mesh. The minimum supported version is ${min.major}.${min.minor}.`,
      ),
    )
  if (input.permissions._tag === "Unavailable")
    out.push(
      message(
        PrecheckMessageTypes.PermissionsNotChecked,
        undefined,
        `Install permissions could not be checked: ${input.permissions.reason}`,
      ),
    )
  else
    for (const what of input.permissions.denied)
      out.push(
        message(
          PrecheckMessageTypes.InsufficientPermissions,
          undefined,
          `Missing required permission to create resource "${what}"`,
        ),
      )
  const wanted = revisionName(input.revision)
  const installed = [...new Set(input.installedRevisions)].sort()
  if (installed.includes(wanted))
    out.push(
      message(
        PrecheckMessageTypes.RevisionAlreadyInstalled,
        undefined,
        `A control plane of revision "${wanted}" is already installed: installing it again upgrades it in place.`,
      ),
    )
  const others = installed.filter((r) => r !== wanted)
  if (others.length > 0)
    out.push(
      message(
        PrecheckMessageTypes.OtherRevisionInstalled,
        undefined,
        `Control plane revision(s) ${others.map((r) => `"${r}"`).join(", ")} also installed: revision "${wanted}" will run beside them.`,
      ),
    )
  return out
}

const multipleLabels = (namespaces: ReadonlyArray<ObjectSummary>): ReadonlyArray<Message> =>
  namespaces
    .filter((ns) => ns.labels[NAMESPACE_INJECTION_LABEL] !== undefined && ns.labels[Labels.revision] !== undefined)
    .map((ns) =>
      message(
        MessageTypes.NamespaceMultipleInjectionLabels,
        entry("Namespace", ns),
        `The namespace has both new and legacy injection labels. Run 'kubectl label namespace ${ns.name} ${Labels.revision}-' or 'kubectl label namespace ${ns.name} ${NAMESPACE_INJECTION_LABEL}-'`,
      ),
    )

/** The revision that injected a pod (its status annotation, else its label, else default); undefined when not injected. */
export const podRevision = (pod: Pick<ObjectSummary, "labels" | "annotations">): string | undefined => {
  const status = pod.annotations[Annotations.sidecarStatus]
  if (status === undefined) return undefined
  const fromStatus = parseStatus(status)?.revision ?? ""
  return fromStatus !== "" ? fromStatus : (pod.labels[Labels.revision] ?? "default")
}

const orphanedPods = (input: PrecheckInput): ReadonlyArray<Message> => {
  const live = new Set([...input.installedRevisions, ...Object.values(input.tags), revisionName(input.revision)])
  const tags = new Set(Object.keys(input.tags))
  return input.pods.flatMap((pod) => {
    const revision = podRevision(pod)
    if (revision === undefined || live.has(revision) || tags.has(revision)) return []
    return [
      message(
        PrecheckMessageTypes.PodInjectedByMissingRevision,
        entry("Pod", pod),
        `The pod's sidecar was injected by revision "${revision}", which is no longer installed. Restart the pod to inject it with a running revision.`,
      ),
    ]
  })
}

/** A mesh config setting the reference deprecated or removed, with the release that did it. */
export interface SettingChange {
  /** Dotted path in the mesh config. */
  readonly path: string
  readonly deprecatedIn?: string
  readonly removedIn?: string
  readonly advice: string
}

/** Mesh config settings the reference deprecated or removed (a small table of well-known ones). */
export const SETTING_CHANGES: ReadonlyArray<SettingChange> = [
  { path: "mixerCheckServer", removedIn: "1.8", advice: "the policy checks it served are gone" },
  { path: "mixerReportServer", removedIn: "1.8", advice: "use Telemetry resources" },
  { path: "disablePolicyChecks", removedIn: "1.8", advice: "the policy checks it governed are gone" },
  { path: "policyCheckFailOpen", removedIn: "1.8", advice: "the policy checks it governed are gone" },
  { path: "sidecarToTelemetrySessionAffinity", removedIn: "1.8", advice: "remove it" },
  { path: "thriftConfig", removedIn: "1.9", advice: "Thrift support was removed" },
  { path: "sdsUdsPath", removedIn: "1.8", advice: "the agent serves SDS itself" },
  { path: "enableSdsTokenMount", removedIn: "1.8", advice: "the agent serves SDS itself" },
  { path: "sdsUseK8sSaJwt", removedIn: "1.8", advice: "the agent serves SDS itself" },
  { path: "authPolicy", deprecatedIn: "1.5", advice: "use PeerAuthentication resources" },
  { path: "enableTracing", deprecatedIn: "1.22", advice: "use the Telemetry API" },
  { path: "defaultConfig.tracing", deprecatedIn: "1.22", advice: "use the Telemetry API with extensionProviders" },
  { path: "localityLbSetting.enabled", deprecatedIn: "1.20", advice: "locality load balancing is on by default" },
]

/** "1.22.3" → [1, 22, 3]; undefined when not a version. */
export const parseVersion = (text: string): ReadonlyArray<number> | undefined => {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim())
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)]
}

const compareVersions = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0)
  return 0
}

const hasPath = (config: Readonly<Record<string, unknown>>, path: string): boolean => {
  let cursor: unknown = config
  for (const key of path.split(".")) {
    if (typeof cursor !== "object" || cursor === null || !(key in cursor)) return false
    cursor = (cursor as Record<string, unknown>)[key]
  }
  return cursor !== undefined && cursor !== null
}

/** The settings in use that changed after `fromVersion` (or before: a removed one still set is always reported). */
const settingChecks = (input: PrecheckInput): ReadonlyArray<Message> => {
  const from = parseVersion(input.fromVersion)
  if (from === undefined) return []
  return SETTING_CHANGES.flatMap((change) => {
    if (!hasPath(input.meshConfig, change.path)) return []
    const removed = change.removedIn === undefined ? undefined : parseVersion(change.removedIn)
    if (removed !== undefined)
      return [
        message(
          PrecheckMessageTypes.RemovedSetting,
          undefined,
          `The mesh config setting "${change.path}" was removed in ${change.removedIn}${compareVersions(from, removed) < 0 ? ` (after ${input.fromVersion})` : ""}: ${change.advice}.`,
        ),
      ]
    const deprecated = change.deprecatedIn === undefined ? undefined : parseVersion(change.deprecatedIn)
    if (deprecated === undefined) return []
    return [
      message(
        MessageTypes.Deprecated,
        undefined,
        `The mesh config setting "${change.path}" is deprecated since ${change.deprecatedIn}: ${change.advice}.`,
      ),
    ]
  })
}

/** Every finding, in check order. */
export const runPrechecks = (input: PrecheckInput): ReadonlyArray<Message> => [
  ...(input.skipControlPlane ? [] : controlPlaneChecks(input)),
  ...(input.serverVersion === undefined && !input.skipControlPlane
    ? []
    : [...multipleLabels(input.namespaces), ...orphanedPods(input), ...settingChecks(input)]),
]

/** The version check's message for `--from-version` values that are not versions. */
export const invalidFromVersion = (text: string): string | undefined =>
  text === "" || parseVersion(text) !== undefined
    ? undefined
    : `invalid --from-version "${text}": expected a version like 1.22 or 1.22.3`

/** What an install must be allowed to create (group, plural), as the SelfSubjectAccessReview asks. */
export const INSTALL_RESOURCES: ReadonlyArray<{ readonly group: string; readonly resource: string }> = [
  { group: "", resource: "namespaces" },
  { group: "", resource: "serviceaccounts" },
  { group: "", resource: "services" },
  { group: "", resource: "configmaps" },
  { group: "", resource: "secrets" },
  { group: "apps", resource: "deployments" },
  { group: "autoscaling", resource: "horizontalpodautoscalers" },
  { group: "policy", resource: "poddisruptionbudgets" },
  { group: "rbac.authorization.k8s.io", resource: "clusterroles" },
  { group: "rbac.authorization.k8s.io", resource: "clusterrolebindings" },
  { group: "rbac.authorization.k8s.io", resource: "roles" },
  { group: "rbac.authorization.k8s.io", resource: "rolebindings" },
  { group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations" },
  { group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations" },
  { group: "apiextensions.k8s.io", resource: "customresourcedefinitions" },
]

/** `deployments.apps`, `services` — how a denied resource is named. */
export const resourceName = (r: { readonly group: string; readonly resource: string }): string =>
  r.group === "" ? r.resource : `${r.resource}.${r.group}`
