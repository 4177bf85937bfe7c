/**
 * A request to push configuration: full (config changed: every type may change) or
 * incremental (endpoints only: EDS), which configs changed, why, and since when. Requests that
 * arrive while one waits are merged into it.
 */
import { HashMap, HashSet, Option } from "effect"
import { TypeUrl } from "../protocol/type-urls.js"

const ENDPOINT_TYPE: string = TypeUrl.Endpoint

export type TriggerReason =
  | "config"
  | "endpoint"
  | "service"
  | "proxy"
  | "global"
  | "unknown"
  | "debug"
  | "secret"
  | "networks"

/** Identity of a changed config: kind, namespace and name (hosts for services/endpoints). */
export interface ConfigKey {
  readonly kind: string
  readonly namespace: string
  readonly name: string
}

export const configKeyString = (key: ConfigKey): string => `${key.kind}/${key.namespace}/${key.name}`

export interface PushRequest {
  readonly full: boolean
  /** Changed configs (keys as `kind/namespace/name`); empty with `full` means "everything". */
  readonly configsUpdated: HashSet.HashSet<string>
  readonly reasons: HashMap.HashMap<TriggerReason, number>
  /** Epoch millis of the first event merged in. */
  readonly start: number
  /** Hosts whose resources may have changed (set when the push is built); absent = any host. */
  readonly changedHosts?: ReadonlySet<string>
  /**
   * The only type URLs the change can affect; absent = any. A change of the pods alone touches
   * only the node proxy's workload API, so sidecars and gateways are not pushed for it.
   */
  readonly onlyTypes?: ReadonlySet<string>
}

export const makePushRequest = (options: {
  readonly full: boolean
  readonly configsUpdated?: Iterable<ConfigKey>
  readonly reason: TriggerReason
  readonly start: number
  readonly onlyTypes?: ReadonlySet<string>
}): PushRequest => ({
  ...(options.onlyTypes !== undefined ? { onlyTypes: options.onlyTypes } : {}),
  full: options.full,
  configsUpdated: HashSet.fromIterable([...(options.configsUpdated ?? [])].map(configKeyString)),
  reasons: HashMap.make([options.reason, 1]),
  start: options.start,
})

/** Merges two requests: full if either is, configs and reasons unioned, earliest start. */
export const mergePushRequest = (a: PushRequest, b: PushRequest): PushRequest => ({
  ...(a.changedHosts !== undefined && b.changedHosts !== undefined
    ? { changedHosts: new Set([...a.changedHosts, ...b.changedHosts]) }
    : {}),
  // An endpoint-only request (not full) may affect EDS, which a types restriction must keep.
  ...(a.onlyTypes !== undefined && b.onlyTypes !== undefined
    ? { onlyTypes: new Set([...a.onlyTypes, ...b.onlyTypes]) }
    : a.onlyTypes !== undefined && !b.full
      ? { onlyTypes: new Set([...a.onlyTypes, ENDPOINT_TYPE]) }
      : b.onlyTypes !== undefined && !a.full
        ? { onlyTypes: new Set([...b.onlyTypes, ENDPOINT_TYPE]) }
        : {}),
  full: a.full || b.full,
  configsUpdated: HashSet.union(a.configsUpdated, b.configsUpdated),
  reasons: HashMap.reduce(b.reasons, a.reasons, (acc, count, reason) =>
    HashMap.set(acc, reason, Option.getOrElse(HashMap.get(acc, reason), () => 0) + count),
  ),
  start: Math.min(a.start, b.start),
})

export const reasonCounts = (request: PushRequest): Record<string, number> =>
  Object.fromEntries(HashMap.toEntries(request.reasons))

/** Kinds of the changed configs (`ServiceEntry`, `VirtualService`, ...). */
export const updatedKinds = (request: PushRequest): ReadonlySet<string> =>
  new Set([...request.configsUpdated].map((key) => key.slice(0, key.indexOf("/"))))

/** Whether the request is endpoints-only (EDS pushed immediately when EDS debounce is off). */
export const isEdsOnly = (request: PushRequest): boolean => !request.full
