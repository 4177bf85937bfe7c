/**
 * The VirtualService, DestinationRule and PeerAuthentication specs as the gRPC generators read
 * them, derived from the decoded (typed) specs: durations as nanoseconds, defaults applied,
 * empty matches dropped, and the DestinationRule fields gRPC clients ignore listed. A PushContext
 * derives each view once per resource (push-context.ts).
 */
import { Either } from "effect"
import { parseGoDurationNanos } from "../../config/duration.js"
import type { ResourceMeta } from "../../config-model/resource.js"
import type { StringMatch as StringMatchSpec } from "../../config-model/schemas/common.js"
import type { DestinationRuleSpec, TrafficPolicy } from "../../config-model/schemas/destination-rule.js"
import type { PeerAuthenticationSpec } from "../../config-model/schemas/peer-authentication.js"
import type { HTTPRoute, VirtualServiceSpec } from "../../config-model/schemas/virtual-service.js"
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

type Meta = Pick<ResourceMeta, "name" | "namespace">

/**
 * Copies only defined values: views leave absent fields out (exactOptionalPropertyTypes), and
 * their key order is fixed here, whatever the order of the spec's keys (views are fingerprinted).
 */
const defined = <T extends object>(value: { [K in keyof T]: T[K] | undefined }): T => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v
  return out as T
}

/** Durations are validated by the schema (common.ts `Duration`): parsing cannot fail on them. */
const nanos = (duration: string | undefined): bigint | undefined => {
  if (duration === undefined) return undefined
  const parsed = parseGoDurationNanos(duration)
  return Either.isRight(parsed) ? parsed.right : undefined
}

/** `Percent.value` is any number to the schema (YAML `.nan` included): only a finite one counts. */
const percent = (value: { readonly value?: number } | undefined): Percent | undefined =>
  value?.value !== undefined && Number.isFinite(value.value) ? { value: value.value } : undefined

/** A match with none of exact/prefix/regex (`{}` is valid) matches as if absent. */
const stringMatch = (match: StringMatchSpec | undefined): StringMatch | undefined =>
  match === undefined || (match.exact === undefined && match.prefix === undefined && match.regex === undefined)
    ? undefined
    : defined<StringMatch>({ exact: match.exact, prefix: match.prefix, regex: match.regex })

const matchMap = (matches: Readonly<Record<string, StringMatchSpec>> | undefined): Record<string, StringMatch> => {
  const out: Record<string, StringMatch> = {}
  for (const [name, match] of Object.entries(matches ?? {})) {
    const m = stringMatch(match)
    if (m !== undefined) out[name] = m
  }
  return out
}

const fault = (spec: HTTPRoute["fault"]): Fault | undefined => {
  if (spec === undefined) return undefined
  const d = spec.delay
  const a = spec.abort
  const delayNanos = nanos(d?.fixedDelay)
  const delay =
    d !== undefined && delayNanos !== undefined
      ? defined<NonNullable<Fault["delay"]>>({
          fixedDelayNanos: delayNanos,
          percentage: percent(d.percentage) ?? (d.percent !== undefined ? { value: d.percent } : undefined),
        })
      : undefined
  // An abort needs a status gRPC clients can return (an HTTP/2 error alone is not one).
  const abort =
    a !== undefined && (a.httpStatus !== undefined || a.grpcStatus !== undefined)
      ? defined<NonNullable<Fault["abort"]>>({
          httpStatus: a.httpStatus,
          grpcStatus: a.grpcStatus,
          percentage: percent(a.percentage),
        })
      : undefined
  return delay === undefined && abort === undefined ? undefined : defined<Fault>({ delay, abort })
}

const httpRoute = (spec: HTTPRoute): HttpRoute => {
  const retries = spec.retries
  return defined<HttpRoute>({
    name: spec.name,
    match: (spec.match ?? []).map((m) =>
      defined<HttpMatch>({
        uri: stringMatch(m.uri),
        headers: matchMap(m.headers),
        queryParams: matchMap(m.queryParams),
      }),
    ),
    route: (spec.route ?? []).map(({ destination, weight }) =>
      defined<RouteDestination>({
        destination: defined<Destination>({
          host: destination.host,
          subset: destination.subset,
          port: destination.port?.number,
        }),
        weight,
      }),
    ),
    timeoutNanos: nanos(spec.timeout),
    retries:
      retries?.attempts !== undefined
        ? defined<Retries>({
            attempts: retries.attempts,
            perTryTimeoutNanos: nanos(retries.perTryTimeout),
            retryOn: retries.retryOn,
          })
        : undefined,
    fault: fault(spec.fault),
  })
}

export const virtualServiceView = (meta: Meta, spec: VirtualServiceSpec): VirtualServiceView => ({
  name: meta.name,
  namespace: meta.namespace,
  hosts: spec.hosts ?? [],
  http: (spec.http ?? []).map(httpRoute),
})

const trafficPolicy = (policy: TrafficPolicy | undefined): TrafficPolicyView | undefined => {
  if (policy === undefined) return undefined
  const lb = policy.loadBalancer
  const ch = lb?.consistentHash
  const od = policy.outlierDetection
  const pool = policy.connectionPool
  return defined<TrafficPolicyView>({
    loadBalancer:
      lb !== undefined
        ? defined<LoadBalancerView>({
            simple: lb.simple,
            consistentHash:
              ch !== undefined
                ? defined<NonNullable<LoadBalancerView["consistentHash"]>>({
                    httpHeaderName: ch.httpHeaderName,
                    useSourceIp: ch.useSourceIp,
                    minimumRingSize: ch.minimumRingSize ?? ch.ringHash?.minimumRingSize,
                  })
                : undefined,
          })
        : undefined,
    outlierDetection:
      od !== undefined
        ? defined<OutlierDetectionView>({
            consecutive5xxErrors: od.consecutive5xxErrors,
            consecutiveGatewayErrors: od.consecutiveGatewayErrors,
            intervalNanos: nanos(od.interval),
            baseEjectionTimeNanos: nanos(od.baseEjectionTime),
            maxEjectionPercent: od.maxEjectionPercent,
          })
        : undefined,
    maxRequests: pool?.http?.http2MaxRequests ?? pool?.tcp?.maxConnections,
    tlsMode: policy.tls?.mode,
  })
}

export const destinationRuleView = (meta: Meta, spec: DestinationRuleSpec): DestinationRuleView =>
  defined<DestinationRuleView>({
    name: meta.name,
    namespace: meta.namespace,
    host: spec.host,
    trafficPolicy: trafficPolicy(spec.trafficPolicy),
    subsets: (spec.subsets ?? []).map((subset) =>
      defined<SubsetView>({
        name: subset.name,
        labels: subset.labels ?? {},
        trafficPolicy: trafficPolicy(subset.trafficPolicy),
      }),
    ),
    ignored: ignoredDestinationRuleFields(spec),
  })

export const peerAuthenticationView = (meta: Meta, spec: PeerAuthenticationSpec): PeerAuthenticationView => {
  const labels = spec.selector?.matchLabels ?? {}
  const portLevel: Record<string, string> = {}
  for (const [port, mtls] of Object.entries(spec.portLevelMtls ?? {}))
    if (mtls.mode !== undefined) portLevel[port] = mtls.mode
  return defined<PeerAuthenticationView>({
    name: meta.name,
    namespace: meta.namespace,
    // An empty selector selects every workload: the policy is namespace- or mesh-wide.
    selector: Object.keys(labels).length > 0 ? labels : undefined,
    mode: spec.mtls?.mode,
    portLevel,
  })
}
