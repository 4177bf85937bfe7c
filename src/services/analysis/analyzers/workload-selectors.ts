/**
 * Sidecar and Telemetry: at most one resource per namespace without a workload selector, and no
 * two selecting the same pod (MSH0110/0111, MSH0159/0160). Pods are matched per namespace.
 */
import type { Analyzer } from "../analyzer.js"
import { type MessageType, MessageTypes } from "../message-types.js"
import {
  type Entry,
  groupBy,
  type Message,
  matchLabels,
  message,
  podsByNamespace,
  type Snapshot,
  selects,
} from "../snapshot.js"

const selectorOf = (kind: string, entry: Entry) =>
  matchLabels(kind === "Sidecar" ? entry.body.workloadSelector : entry.body.selector)

const byNamespace = (entries: ReadonlyArray<Entry>) => groupBy(entries, (e) => e.namespace)

const withoutSelector =
  (kind: string, plural: string, type: MessageType) =>
  (snapshot: Snapshot): ReadonlyArray<Message> => {
    const out: Array<Message> = []
    for (const [namespace, list] of byNamespace(snapshot.ofKind(kind))) {
      const bare = list.filter((e) => selectorOf(kind, e) === undefined)
      if (bare.length < 2) continue
      const names = bare.map((e) => `${e.name}.${namespace}`).join(", ")
      for (const e of bare)
        out.push(
          message(
            type,
            e,
            `The ${plural} [${names}] in namespace "${namespace}" have no workload selector, which can lead to undefined behavior.`,
          ),
        )
    }
    return out
  }

const conflicting =
  (kind: string, plural: string, type: MessageType) =>
  (snapshot: Snapshot): ReadonlyArray<Message> => {
    const out: Array<Message> = []
    const pods = podsByNamespace(snapshot)
    for (const [namespace, list] of byNamespace(snapshot.ofKind(kind))) {
      const selective = list.flatMap((e) => {
        const selector = selectorOf(kind, e)
        return selector === undefined ? [] : [{ e, selector }]
      })
      if (selective.length < 2) continue
      const reported = new Set<Entry>()
      for (const pod of pods.get(namespace) ?? []) {
        const matching = selective.filter(({ selector }) => selects(selector, pod.labels))
        if (matching.length < 2) continue
        const names = matching.map(({ e }) => `${e.name}.${namespace}`).join(", ")
        for (const { e } of matching) {
          if (reported.has(e)) continue
          reported.add(e)
          out.push(
            message(
              type,
              e,
              `The ${plural} [${names}] in namespace "${namespace}" select the same workload pod "${pod.name}", which can lead to undefined behavior.`,
            ),
          )
        }
      }
    }
    return out
  }

export const workloadSelectorAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "sidecar.SelectorAnalyzer",
    description: "Validates that at most one Sidecar per namespace has no workload selector",
    types: [MessageTypes.MultipleSidecarsWithoutWorkloadSelectors],
    run: withoutSelector("Sidecar", "Sidecars", MessageTypes.MultipleSidecarsWithoutWorkloadSelectors),
  },
  {
    name: "sidecar.ConflictingSelectorAnalyzer",
    description: "Validates that no two Sidecars select the same workload",
    types: [MessageTypes.ConflictingSidecarWorkloadSelectors],
    run: conflicting("Sidecar", "Sidecars", MessageTypes.ConflictingSidecarWorkloadSelectors),
  },
  {
    name: "telemetry.SelectorAnalyzer",
    description: "Validates that at most one Telemetry per namespace has no workload selector",
    types: [MessageTypes.MultipleTelemetriesWithoutWorkloadSelectors],
    run: withoutSelector("Telemetry", "Telemetries", MessageTypes.MultipleTelemetriesWithoutWorkloadSelectors),
  },
  {
    name: "telemetry.ConflictingSelectorAnalyzer",
    description: "Validates that no two Telemetries select the same workload",
    types: [MessageTypes.ConflictingTelemetryWorkloadSelectors],
    run: conflicting("Telemetry", "Telemetries", MessageTypes.ConflictingTelemetryWorkloadSelectors),
  },
]
