/**
 * Small typed views of the VirtualService and DestinationRule specs the gRPC generators read
 * (field names as in the reference networking API). Views read defensively: a field of the
 * wrong shape counts as absent, so generators never throw on a spec the schemas let through.
 */
import { Either } from "effect"
import { parseGoDurationNanos } from "../../config/duration.js"
import { ignoredDestinationRuleFields } from "../grpcgen/grpc-ignored.js"

export interface StringMatch {
  readonly exact?: string
  readonly prefix?: string
  readonly regex?: string
}

export interface HttpMatch {
  readonly uri?: StringMatch
  readonly headers: Readonly<Record<string, StringMatch>>
  readonly queryParams: Readonly<Record<string, StringMatch>>
}

export interface Destination {
  readonly host: string
  readonly subset?: string
  readonly port?: number
}

export interface RouteDestination {
  readonly destination: Destination
  readonly weight?: number
}

export interface Percent {
  /** 0..100 */
  readonly value: number
}

export interface Fault {
  readonly delay?: { readonly fixedDelayNanos: bigint; readonly percentage?: Percent }
  readonly abort?: { readonly httpStatus?: number; readonly grpcStatus?: string; readonly percentage?: Percent }
}

export interface Retries {
  readonly attempts: number
  readonly perTryTimeoutNanos?: bigint
  readonly retryOn?: string
}

export interface HttpRoute {
  readonly name?: string
  readonly match: ReadonlyArray<HttpMatch>
  readonly route: ReadonlyArray<RouteDestination>
  readonly timeoutNanos?: bigint
  readonly retries?: Retries
  readonly fault?: Fault
}

export interface VirtualServiceView {
  readonly name: string
  readonly namespace: string
  readonly hosts: ReadonlyArray<string>
  readonly http: ReadonlyArray<HttpRoute>
}

export interface LoadBalancerView {
  readonly simple?: string
  readonly consistentHash?: {
    readonly httpHeaderName?: string
    readonly useSourceIp?: boolean
    readonly minimumRingSize?: number
  }
}

export interface OutlierDetectionView {
  readonly consecutive5xxErrors?: number
  readonly consecutiveGatewayErrors?: number
  readonly intervalNanos?: bigint
  readonly baseEjectionTimeNanos?: bigint
  readonly maxEjectionPercent?: number
}

export interface TrafficPolicyView {
  readonly loadBalancer?: LoadBalancerView
  readonly outlierDetection?: OutlierDetectionView
  readonly maxRequests?: number
  readonly tlsMode?: string
}

export interface SubsetView {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly trafficPolicy?: TrafficPolicyView
}

export interface DestinationRuleView {
  readonly name: string
  readonly namespace: string
  readonly host: string
  readonly trafficPolicy?: TrafficPolicyView
  readonly subsets: ReadonlyArray<SubsetView>
  /** Spec fields proxyless gRPC clients do not get (grpc-ignored.ts); empty when none. */
  readonly ignored: ReadonlyArray<string>
}

type Obj = Readonly<Record<string, unknown>>
const obj = (value: unknown): Obj | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : undefined
const arr = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value)
    ? value
    : typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))
      ? Number(value)
      : undefined
const bool = (value: unknown): boolean | undefined => (typeof value === "boolean" ? value : undefined)
const nanos = (value: unknown): bigint | undefined => {
  const text = str(value)
  if (text === undefined) return undefined
  const parsed = parseGoDurationNanos(text)
  return Either.isRight(parsed) ? parsed.right : undefined
}
const strMap = (value: unknown): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(obj(value) ?? {})) if (typeof v === "string") out[k] = v
  return out
}
/** Copies only defined values, keeping exactOptionalPropertyTypes happy. */
const defined = <T extends object>(value: { [K in keyof T]: T[K] | undefined }): T => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v
  return out as T
}

const stringMatch = (value: unknown): StringMatch | undefined => {
  const o = obj(value)
  if (o === undefined) return undefined
  const m = defined<StringMatch>({ exact: str(o.exact), prefix: str(o.prefix), regex: str(o.regex) })
  return Object.keys(m).length === 0 ? undefined : m
}

const matchMap = (value: unknown): Record<string, StringMatch> => {
  const out: Record<string, StringMatch> = {}
  for (const [k, v] of Object.entries(obj(value) ?? {})) {
    const m = stringMatch(v)
    if (m !== undefined) out[k] = m
  }
  return out
}

const percent = (value: unknown): Percent | undefined => {
  const v = num(obj(value)?.value)
  return v === undefined ? undefined : { value: v }
}

const fault = (value: unknown): Fault | undefined => {
  const o = obj(value)
  if (o === undefined) return undefined
  const d = obj(o.delay)
  const a = obj(o.abort)
  const delayNanos = d !== undefined ? nanos(d.fixedDelay) : undefined
  const delay =
    d !== undefined && delayNanos !== undefined
      ? defined<NonNullable<Fault["delay"]>>({
          fixedDelayNanos: delayNanos,
          percentage: percent(d.percentage) ?? (num(d.percent) !== undefined ? { value: num(d.percent)! } : undefined),
        })
      : undefined
  const abort =
    a !== undefined
      ? defined<NonNullable<Fault["abort"]>>({
          httpStatus: num(a.httpStatus),
          grpcStatus: str(a.grpcStatus),
          percentage: percent(a.percentage),
        })
      : undefined
  const f = defined<Fault>({
    delay,
    abort:
      abort !== undefined && (abort.httpStatus !== undefined || abort.grpcStatus !== undefined) ? abort : undefined,
  })
  return f.delay === undefined && f.abort === undefined ? undefined : f
}

const httpRoute = (value: unknown): HttpRoute | undefined => {
  const o = obj(value)
  if (o === undefined) return undefined
  const route = arr(o.route).flatMap((r): ReadonlyArray<RouteDestination> => {
    const ro = obj(r)
    const d = obj(ro?.destination)
    const host = str(d?.host)
    if (ro === undefined || d === undefined || host === undefined) return []
    const destination = defined<Destination>({ host, subset: str(d.subset), port: num(obj(d.port)?.number) })
    return [defined<RouteDestination>({ destination, weight: num(ro.weight) })]
  })
  const r = obj(o.retries)
  const attempts = r !== undefined ? num(r.attempts) : undefined
  return defined<HttpRoute>({
    name: str(o.name),
    match: arr(o.match).flatMap((m) => {
      const mo = obj(m)
      if (mo === undefined) return []
      return [
        defined<HttpMatch>({
          uri: stringMatch(mo.uri),
          headers: matchMap(mo.headers),
          queryParams: matchMap(mo.queryParams),
        }),
      ]
    }),
    route,
    timeoutNanos: nanos(o.timeout),
    retries:
      r !== undefined && attempts !== undefined
        ? defined<Retries>({ attempts, perTryTimeoutNanos: nanos(r.perTryTimeout), retryOn: str(r.retryOn) })
        : undefined,
    fault: fault(o.fault),
  })
}

export const virtualServiceView = (
  meta: { readonly name: string; readonly namespace: string },
  spec: unknown,
): VirtualServiceView => {
  const o = obj(spec) ?? {}
  return {
    name: meta.name,
    namespace: meta.namespace,
    hosts: arr(o.hosts).flatMap((h) => (typeof h === "string" ? [h] : [])),
    http: arr(o.http).flatMap((h) => {
      const r = httpRoute(h)
      return r === undefined ? [] : [r]
    }),
  }
}

const trafficPolicy = (value: unknown): TrafficPolicyView | undefined => {
  const o = obj(value)
  if (o === undefined) return undefined
  const lb = obj(o.loadBalancer)
  const ch = obj(lb?.consistentHash)
  const od = obj(o.outlierDetection)
  const pool = obj(o.connectionPool)
  return defined<TrafficPolicyView>({
    loadBalancer:
      lb !== undefined
        ? defined<LoadBalancerView>({
            simple: str(lb.simple),
            consistentHash:
              ch !== undefined
                ? defined<NonNullable<LoadBalancerView["consistentHash"]>>({
                    httpHeaderName: str(ch.httpHeaderName),
                    useSourceIp: bool(ch.useSourceIp),
                    minimumRingSize: num(ch.minimumRingSize) ?? num(obj(ch.ringHash)?.minimumRingSize),
                  })
                : undefined,
          })
        : undefined,
    outlierDetection:
      od !== undefined
        ? defined<OutlierDetectionView>({
            consecutive5xxErrors: num(od.consecutive5xxErrors),
            consecutiveGatewayErrors: num(od.consecutiveGatewayErrors),
            intervalNanos: nanos(od.interval),
            baseEjectionTimeNanos: nanos(od.baseEjectionTime),
            maxEjectionPercent: num(od.maxEjectionPercent),
          })
        : undefined,
    maxRequests: num(obj(pool?.http)?.http2MaxRequests) ?? num(obj(pool?.tcp)?.maxConnections),
    tlsMode: str(obj(o.tls)?.mode),
  })
}

export const destinationRuleView = (
  meta: { readonly name: string; readonly namespace: string },
  spec: unknown,
): DestinationRuleView => {
  const o = obj(spec) ?? {}
  return defined<DestinationRuleView>({
    name: meta.name,
    namespace: meta.namespace,
    host: str(o.host) ?? "",
    trafficPolicy: trafficPolicy(o.trafficPolicy),
    subsets: arr(o.subsets).flatMap((s) => {
      const so = obj(s)
      const name = str(so?.name)
      if (so === undefined || name === undefined) return []
      return [defined<SubsetView>({ name, labels: strMap(so.labels), trafficPolicy: trafficPolicy(so.trafficPolicy) })]
    }),
    ignored: ignoredDestinationRuleFields(spec),
  })
}

export interface PeerAuthenticationView {
  readonly name: string
  readonly namespace: string
  /** `selector.matchLabels`; undefined when the policy has no selector (namespace- or mesh-wide). */
  readonly selector?: Readonly<Record<string, string>>
  /** `mtls.mode` (STRICT, PERMISSIVE, DISABLE); undefined or UNSET inherits. */
  readonly mode?: string
  /** `portLevelMtls`: workload port → mode. */
  readonly portLevel: Readonly<Record<string, string>>
}

export const peerAuthenticationView = (
  meta: { readonly name: string; readonly namespace: string },
  spec: unknown,
): PeerAuthenticationView => {
  const o = obj(spec) ?? {}
  const selector = obj(o.selector)
  const labels = strMap(selector?.matchLabels)
  const portLevel: Record<string, string> = {}
  for (const [port, value] of Object.entries(obj(o.portLevelMtls) ?? {})) {
    const mode = str(obj(value)?.mode)
    if (mode !== undefined) portLevel[port] = mode
  }
  return defined<PeerAuthenticationView>({
    name: meta.name,
    namespace: meta.namespace,
    selector: selector !== undefined && Object.keys(labels).length > 0 ? labels : undefined,
    mode: str(obj(o.mtls)?.mode),
    portLevel,
  })
}
