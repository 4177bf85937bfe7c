/**
 * Sidecar and Telemetry selectors, as the reference checks them: a selector must select a Pod of
 * its namespace (MSH0101); no Pod may be selected by two of one kind (MSH0110/0159, reported per
 * Pod); at most one of a kind per namespace has no selector (MSH0111/0160). A Sidecar whose
 * selector has no labels counts as having none; a Telemetry counts as having none only without
 * a `selector` field (an empty one selects nothing to check). Names are listed sorted, as `[a b]`.
 * Sidecars have no effect on ambient workloads: a Sidecar selecting a pod redirected to the node
 * proxy, or without a selector in an ambient namespace, is ineffective instead (MSH0167).
 * Also Telemetry access logging with no provider to use (MSH0157).
 */
import type { Analyzer } from "../analyzer.js"
import { type MessageType, MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  type FieldPath,
  groupBy,
  type Message,
  message,
  podsByNamespace,
  rec,
  type Snapshot,
  selects,
  stringMap,
} from "../snapshot.js"
import { namespaceInAmbient, podInAmbient } from "./in-mesh.js"

interface Family {
  readonly kind: string
  readonly plural: string
  /** The selector's labels, or undefined when the resource has no selector. */
  readonly selector: (entry: Entry) => Readonly<Record<string, string>> | undefined
  /** Whether the resource counts as having no selector for the one-per-namespace rule. */
  readonly bare: (entry: Entry) => boolean
  readonly selectorPath: FieldPath
  readonly conflict: MessageType
  readonly withoutSelector: MessageType
  /** Whether ambient workloads (which run no sidecar) make the resource ineffective (MSH0167). */
  readonly ambientAware: boolean
}

const labelsOrUndefined = (labels: Readonly<Record<string, string>>) =>
  Object.keys(labels).length === 0 ? undefined : labels

const SIDECAR: Family = {
  kind: "Sidecar",
  plural: "Sidecars",
  selector: (e) => labelsOrUndefined(stringMap(rec(e.body.workloadSelector).labels)),
  bare: (e) => Object.keys(stringMap(rec(e.body.workloadSelector).labels)).length === 0,
  selectorPath: ["spec", "workloadSelector", "labels"],
  conflict: MessageTypes.ConflictingSidecarWorkloadSelectors,
  withoutSelector: MessageTypes.MultipleSidecarsWithoutWorkloadSelectors,
  ambientAware: true,
}

const TELEMETRY: Family = {
  kind: "Telemetry",
  plural: "Telemetries",
  selector: (e) => labelsOrUndefined(stringMap(rec(e.body.selector).matchLabels)),
  bare: (e) => e.body.selector === undefined || e.body.selector === null,
  selectorPath: ["spec", "selector", "matchLabels"],
  conflict: MessageTypes.ConflictingTelemetryWorkloadSelectors,
  withoutSelector: MessageTypes.MultipleTelemetriesWithoutWorkloadSelectors,
  ambientAware: false,
}

/** `k=v,k2=v2`, keys sorted: how a label selector is written. */
export const selectorString = (labels: Readonly<Record<string, string>>): string =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(",")

const nameList = (entries: ReadonlyArray<Entry>) =>
  `[${entries
    .map((e) => e.name)
    .sort()
    .join(" ")}]`

/** Selectors that select nothing, and Pods selected twice. */
const selections =
  (family: Family) =>
  (snapshot: Snapshot): ReadonlyArray<Message> => {
    const out: Array<Message> = []
    const pods = podsByNamespace(snapshot)
    const byPod = new Map<Entry, Array<Entry>>()
    for (const e of snapshot.ofKind(family.kind)) {
      const selector = family.selector(e)
      if (selector === undefined) continue
      const selected = (pods.get(e.namespace) ?? []).filter((p) => selects(selector, p.labels))
      if (selected.length === 0) {
        out.push(
          message(
            MessageTypes.ReferencedResourceNotFound,
            e,
            `Referenced selector not found: "${selectorString(selector)}"`,
            family.selectorPath,
          ),
        )
        continue
      }
      for (const pod of selected) {
        const list = byPod.get(pod)
        if (list === undefined) byPod.set(pod, [e])
        else list.push(e)
      }
    }
    const ineffective = new Set<Entry>()
    for (const [pod, list] of byPod) {
      if (family.ambientAware && podInAmbient(pod)) {
        for (const e of list)
          if (!ineffective.has(e)) {
            ineffective.add(e)
            out.push(
              message(
                MessageTypes.IneffectivePolicy,
                e,
                "The policy has no impact: selected workload is in ambient mode, the policy has no impact.",
              ),
            )
          }
        continue
      }
      if (list.length < 2) continue
      const names = nameList(list)
      for (const e of list)
        out.push(
          message(
            family.conflict,
            e,
            `The ${family.plural} ${names} in namespace "${pod.namespace}" select the same workload pod "${pod.name}", which can lead to undefined behavior.`,
            ["metadata", "name"],
          ),
        )
    }
    return out
  }

const withoutSelectors =
  (family: Family) =>
  (snapshot: Snapshot): ReadonlyArray<Message> => {
    const out: Array<Message> = []
    const ambientNamespaces = new Set(
      family.ambientAware
        ? snapshot
            .ofKind("Namespace", "")
            .filter(namespaceInAmbient)
            .map((n) => n.name)
        : [],
    )
    for (const [namespace, list] of groupBy(snapshot.ofKind(family.kind), (e) => e.namespace)) {
      const bare = list.filter(family.bare)
      if (ambientNamespaces.has(namespace)) {
        for (const e of bare)
          out.push(
            message(
              MessageTypes.IneffectivePolicy,
              e,
              "The policy has no impact: namespace is in ambient mode, the policy has no impact.",
            ),
          )
        continue
      }
      if (bare.length < 2) continue
      const names = nameList(bare)
      for (const e of bare)
        out.push(
          message(
            family.withoutSelector,
            e,
            `The ${family.plural} ${names} in namespace "${namespace}" have no workload selector, which can lead to undefined behavior.`,
          ),
        )
    }
    return out
  }

/**
 * A Telemetry access-logging entry that is not disabled and names no provider is ignored when
 * the mesh config has no default access-logging provider either (MSH0157, once per entry).
 */
const emptyProviders = (snapshot: Snapshot): ReadonlyArray<Message> => {
  if ((snapshot.meshConfig.defaultProviders.accessLogging ?? []).length > 0) return []
  const out: Array<Message> = []
  for (const t of snapshot.ofKind("Telemetry"))
    for (const logging of arr(t.body.accessLogging)) {
      const entry = rec(logging)
      if (entry.disabled === true || arr(entry.providers).length > 0) continue
      out.push(
        message(
          MessageTypes.InvalidTelemetryProvider,
          t,
          `The Telemetry ${t.name} in namespace "${t.namespace}" with empty providers will be ignored.`,
        ),
      )
    }
  return out
}

export const workloadSelectorAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "sidecar.SelectorAnalyzer",
    description:
      "Validates that sidecars that define a workload selector match at least one pod, and that there aren't multiple sidecar resources that select overlapping pods",
    types: [
      MessageTypes.ReferencedResourceNotFound,
      MessageTypes.ConflictingSidecarWorkloadSelectors,
      MessageTypes.MultipleSidecarsWithoutWorkloadSelectors,
      MessageTypes.IneffectivePolicy,
    ],
    run: (snapshot) => [...selections(SIDECAR)(snapshot), ...withoutSelectors(SIDECAR)(snapshot)],
  },
  {
    name: "telemetry.SelectorAnalyzer",
    description:
      "Validates that telemetries that define a selector match at least one pod, and that there aren't multiple telemetry resources that select overlapping pods",
    types: [MessageTypes.ReferencedResourceNotFound, MessageTypes.ConflictingTelemetryWorkloadSelectors],
    run: selections(TELEMETRY),
  },
  {
    name: "telemetry.DefaultSelectorAnalyzer",
    description:
      "Validates that there aren't multiple telemetry resources that have no selector and apply to the same namespace",
    types: [MessageTypes.MultipleTelemetriesWithoutWorkloadSelectors],
    run: withoutSelectors(TELEMETRY),
  },
  {
    name: "telemetry.ProviderAnalyzer",
    description: "Validates that providers in telemetry resource is valid",
    types: [MessageTypes.InvalidTelemetryProvider],
    run: emptyProviders,
  },
]
