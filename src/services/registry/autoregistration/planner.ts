/**
 * WorkloadEntry auto-registration, as pure decisions (spec 000 part 1 rule 5; the reference's
 * autoregistration controller): which entry a connecting proxy stands for, the entry created
 * from its WorkloadGroup, how connect and disconnect mark it, when a disconnected entry is
 * cleaned up, and the `Healthy` condition a health report sets. Times are epoch milliseconds
 * and RFC 3339 strings; the layer (src/layers/registry/autoregistration.ts) reads the clock.
 */
import type { WorkloadEntrySpec } from "../../config-model/schemas/workload-entry.js"
import type { ObjectMeta } from "../../orchestrator/objects.js"
import { apiVersionOf } from "../../orchestrator/resources.js"
import {
  AUTO_REGISTRATION_GROUP_ANNOTATION,
  CONNECTED_AT_ANNOTATION,
  type Condition,
  DISCONNECTED_AT_ANNOTATION,
  HEALTH_CHECK_ANNOTATION,
  HEALTHY_CONDITION,
  isAutoRegistered,
  isHealthChecked,
  type OrchWorkloadEntry,
  type OrchWorkloadGroup,
  WORKLOAD_CONTROLLER_ANNOTATION,
  WorkloadEntries,
  WorkloadGroups,
} from "./objects.js"

/** What the xDS server knows of a connected proxy (a `ProxyInfo` fits, plus the node's locality). */
export interface ConnectedProxy {
  /** The node id, `type~ip~pod.namespace~domain`. */
  readonly id: string
  /** The node metadata as plain values. */
  readonly metadata: Readonly<Record<string, unknown>>
  readonly locality?: { readonly region?: string; readonly zone?: string; readonly sub_zone?: string }
}

/** The entry a proxy's connection keeps alive, if any. */
export type Target =
  | { readonly _tag: "None" }
  | { readonly _tag: "Invalid"; readonly reason: string }
  /** `AUTO_REGISTER_GROUP`: created from the group when missing. */
  | { readonly _tag: "Auto"; readonly namespace: string; readonly name: string; readonly group: string }
  /** `WORKLOAD_ENTRY`: an existing entry whose health the proxy reports; never created or deleted. */
  | { readonly _tag: "HealthChecked"; readonly namespace: string; readonly name: string }

/** Longest orchestrator object name. */
const MAX_NAME = 253

const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** The proxy's addresses: `INSTANCE_IPS` (comma-separated) when set, else the node id's ip part. */
export const proxyAddresses = (proxy: ConnectedProxy): ReadonlyArray<string> => {
  const listed = text(proxy.metadata.INSTANCE_IPS)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  if (listed.length > 0) return listed
  const fromId = proxy.id.split("~")[1] ?? ""
  return fromId === "" ? [] : [fromId]
}

/** `NAMESPACE` metadata, else the namespace of the node id's `pod.namespace`. */
export const proxyNamespace = (proxy: ConnectedProxy): string =>
  text(proxy.metadata.NAMESPACE) || (proxy.id.split("~")[2]?.split(".")[1] ?? "")

/** `<group>-<ip>[-<network>]`, the IPv6 colons made dashes, cut from the front to 253 characters. */
export const autoRegisteredName = (group: string, ip: string, network: string): string => {
  const name = [group, ip.replaceAll(":", "-"), ...(network === "" ? [] : [network])].join("-")
  return name.length > MAX_NAME ? name.slice(name.length - MAX_NAME) : name
}

export const targetOf = (
  proxy: ConnectedProxy,
  enabled: { readonly autoRegistration: boolean; readonly healthChecks: boolean },
): Target => {
  const group = text(proxy.metadata.AUTO_REGISTER_GROUP)
  const healthEntry = text(proxy.metadata.WORKLOAD_ENTRY)
  if (enabled.autoRegistration && group !== "") {
    const addresses = proxyAddresses(proxy)
    const namespace = proxyNamespace(proxy)
    if (addresses.length === 0) return { _tag: "Invalid", reason: `auto-registration of ${proxy.id}: no IP address` }
    if (namespace === "") return { _tag: "Invalid", reason: `auto-registration of ${proxy.id}: no namespace` }
    const name = autoRegisteredName(group, addresses[0]!, text(proxy.metadata.NETWORK))
    return { _tag: "Auto", namespace, name, group }
  }
  if (enabled.healthChecks && healthEntry !== "") {
    const namespace = proxyNamespace(proxy)
    if (namespace === "") return { _tag: "Invalid", reason: `health checks of ${proxy.id}: no namespace` }
    return { _tag: "HealthChecked", namespace, name: healthEntry }
  }
  return { _tag: "None" }
}

/** The node's locality as an entry's `region/zone/subzone`. */
const localityText = (locality: ConnectedProxy["locality"]): string => {
  if (locality === undefined) return ""
  const parts = [locality.region ?? "", locality.zone ?? "", locality.sub_zone ?? ""]
  while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop()
  return parts.join("/")
}

const stringMap = (value: unknown): Record<string, string> => {
  const out: Record<string, string> = {}
  if (typeof value === "object" && value !== null && !Array.isArray(value))
    for (const [k, v] of Object.entries(value)) if (typeof v === "string") out[k] = v
  return out
}

/** Whether the proxy's PROXY_CONFIG carries a readiness probe: the agent will report health. */
const reportsHealth = (proxy: ConnectedProxy): boolean => {
  const config = proxy.metadata.PROXY_CONFIG
  return typeof config === "object" && config !== null && "readinessProbe" in config
}

/**
 * The entry created for a proxy from its group: the group's template with the proxy's address,
 * labels (node metadata over group metadata over template), network and locality, owned by the
 * group, annotated with the group (auto-registered) and the connection.
 */
export const entryFromGroup = (
  name: string,
  proxy: ConnectedProxy,
  group: OrchWorkloadGroup,
  controller: string,
  connectedAt: string,
): OrchWorkloadEntry => {
  const spec = group.spec
  const template: WorkloadEntrySpec = spec?.template ?? {}
  const labels: Record<string, string> = {
    ...template.labels,
    ...spec?.metadata?.labels,
    ...stringMap(proxy.metadata.LABELS),
  }
  // The agent's locality label is derived, not a workload label; the entry has `locality`.
  delete labels["mesh-locality"]
  delete labels["istio-locality"]
  const annotations: Record<string, string> = {
    ...spec?.metadata?.annotations,
    [AUTO_REGISTRATION_GROUP_ANNOTATION]: group.metadata.name,
    [WORKLOAD_CONTROLLER_ANNOTATION]: controller,
    [CONNECTED_AT_ANNOTATION]: connectedAt,
  }
  if (reportsHealth(proxy) || spec?.probe !== undefined) annotations[HEALTH_CHECK_ANNOTATION] = "true"
  const network = text(proxy.metadata.NETWORK)
  const locality = localityText(proxy.locality)
  const entry: WorkloadEntrySpec = {
    ...template,
    address: proxyAddresses(proxy)[0] ?? "",
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(network !== "" ? { network } : {}),
    ...(locality !== "" ? { locality } : {}),
  }
  const metadata: ObjectMeta = {
    name,
    namespace: group.metadata.namespace ?? proxyNamespace(proxy),
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    annotations,
    ownerReferences: [
      {
        apiVersion: group.apiVersion ?? apiVersionOf(WorkloadGroups),
        kind: group.kind ?? WorkloadGroups.kind,
        name: group.metadata.name,
        uid: group.metadata.uid ?? "",
        controller: true,
      },
    ],
  }
  return { apiVersion: apiVersionOf(WorkloadEntries), kind: WorkloadEntries.kind, metadata, spec: entry }
}

const parseTime = (value: string | undefined): number | undefined => {
  if (value === undefined || value === "") return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : ms
}

const withAnnotations = (
  entry: OrchWorkloadEntry,
  set: Readonly<Record<string, string>>,
  drop: ReadonlyArray<string>,
): OrchWorkloadEntry => {
  const annotations: Record<string, string> = { ...entry.metadata.annotations, ...set }
  for (const key of drop) delete annotations[key]
  return { ...entry, metadata: { ...entry.metadata, annotations } }
}

/**
 * The entry marked connected to `controller` at `at`; undefined when nothing is to be written:
 * a later connection (to another instance) already holds it, or it is marked so already.
 */
export const markConnected = (
  entry: OrchWorkloadEntry,
  controller: string,
  at: { readonly ms: number; readonly text: string },
): OrchWorkloadEntry | undefined => {
  const a = entry.metadata.annotations ?? {}
  const last = parseTime(a[CONNECTED_AT_ANNOTATION])
  if (last !== undefined && at.ms < last) return undefined
  if (
    a[WORKLOAD_CONTROLLER_ANNOTATION] === controller &&
    a[CONNECTED_AT_ANNOTATION] === at.text &&
    a[DISCONNECTED_AT_ANNOTATION] === undefined
  )
    return undefined
  return withAnnotations(entry, { [WORKLOAD_CONTROLLER_ANNOTATION]: controller, [CONNECTED_AT_ANNOTATION]: at.text }, [
    DISCONNECTED_AT_ANNOTATION,
  ])
}

/**
 * The entry marked disconnected at `at`; undefined when it is not ours to mark: another
 * instance holds it now, or it was connected again after `at`.
 */
export const markDisconnected = (
  entry: OrchWorkloadEntry,
  controller: string,
  at: { readonly ms: number; readonly text: string },
): OrchWorkloadEntry | undefined => {
  const a = entry.metadata.annotations ?? {}
  if (a[WORKLOAD_CONTROLLER_ANNOTATION] !== controller) return undefined
  const connected = parseTime(a[CONNECTED_AT_ANNOTATION])
  if (connected !== undefined && at.ms < connected) return undefined
  if (a[CONNECTED_AT_ANNOTATION] === undefined && a[DISCONNECTED_AT_ANNOTATION] !== undefined) return undefined
  return withAnnotations(entry, { [DISCONNECTED_AT_ANNOTATION]: at.text }, [CONNECTED_AT_ANNOTATION])
}

const hasHealthCondition = (entry: OrchWorkloadEntry): boolean =>
  (entry.status?.conditions ?? []).some((c) => c.type === HEALTHY_CONDITION)

export type Cleanup =
  /** Not managed here, or connected with no age limit: never. */
  { readonly _tag: "Never" } | { readonly _tag: "Later"; readonly at: number } | { readonly _tag: "Now" }

export interface CleanupSettings {
  /** `PILOT_WORKLOAD_ENTRY_GRACE_PERIOD` in milliseconds. */
  readonly gracePeriodMs: number
  /**
   * A connection older than this is presumed lost with the instance that held it (both went
   * down before it could mark the disconnect); undefined: connected entries are never cleaned up.
   */
  readonly maxConnectionAgeMs?: number
}

/**
 * When an entry is cleaned up: auto-registered entries (deleted) and health-checked ones with a
 * health condition (the condition is cleared), once disconnected for the grace period. An
 * unreadable disconnect time counts as long ago, as the reference does.
 */
export const cleanupOf = (entry: OrchWorkloadEntry, now: number, settings: CleanupSettings): Cleanup => {
  if (!isAutoRegistered(entry) && !(isHealthChecked(entry) && hasHealthCondition(entry))) return { _tag: "Never" }
  const a = entry.metadata.annotations ?? {}
  const connected = a[CONNECTED_AT_ANNOTATION]
  if (connected !== undefined && connected !== "") {
    const at = parseTime(connected)
    if (at === undefined || settings.maxConnectionAgeMs === undefined) return { _tag: "Never" }
    const due = at + settings.maxConnectionAgeMs
    return now > due ? { _tag: "Now" } : { _tag: "Later", at: due + 1 }
  }
  const disconnected = a[DISCONNECTED_AT_ANNOTATION]
  if (disconnected === undefined || disconnected === "") return { _tag: "Never" }
  const at = parseTime(disconnected)
  if (at === undefined) return { _tag: "Now" }
  const due = at + settings.gracePeriodMs
  return now >= due ? { _tag: "Now" } : { _tag: "Later", at: due }
}

export interface HealthReport {
  readonly healthy: boolean
  /** Why not, as the agent said. */
  readonly message?: string
}

/**
 * The entry's conditions after a health report, or undefined when nothing changes (the same
 * status and message). The transition time moves only when the status flips.
 */
export const conditionsAfter = (
  entry: OrchWorkloadEntry,
  report: HealthReport,
  now: string,
): ReadonlyArray<Condition> | undefined => {
  const conditions = entry.status?.conditions ?? []
  const previous = conditions.find((c) => c.type === HEALTHY_CONDITION)
  const status = report.healthy ? "True" : "False"
  const message = report.healthy ? undefined : report.message
  if (previous !== undefined && previous.status === status && previous.message === message) return undefined
  const next: Condition = {
    type: HEALTHY_CONDITION,
    status,
    lastProbeTime: now,
    lastTransitionTime:
      previous !== undefined && previous.status === status ? (previous.lastTransitionTime ?? now) : now,
    ...(message !== undefined && message !== "" ? { message } : {}),
  }
  return [...conditions.filter((c) => c.type !== HEALTHY_CONDITION), next]
}

/** The entry's conditions without `Healthy` (a health-checked entry whose proxy is gone). */
export const conditionsWithoutHealth = (entry: OrchWorkloadEntry): ReadonlyArray<Condition> =>
  (entry.status?.conditions ?? []).filter((c) => c.type !== HEALTHY_CONDITION)
