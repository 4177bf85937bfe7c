/**
 * DestinationRule fields proxyless gRPC clients do not get, or get only in part. The gRPC
 * generator (grpc-gen.ts) maps what @grpc/grpc-js-xds implements — `lb_policy` ROUND_ROBIN and
 * RING_HASH (no least-request balancer), outlier detection by success rate and failure
 * percentage (no consecutive-error ejection), `max_requests` circuit breaking, mesh mTLS — and
 * drops the rest. Without a word a user only finds that out from traffic, so the fields are
 * listed per resource (the server logs them once, at info, scope `grpcgen`). The README's table
 * "DestinationRule/VirtualService fields proxyless gRPC clients ignore" lists the same.
 */

import type { DestinationRuleSpec, TrafficPolicy } from "../../config-model/schemas/destination-rule.js"

/** Whether a field of a decoded section is set (absent sections have no fields). */
const has = <S extends object>(section: S | undefined, field: keyof S): boolean =>
  section !== undefined && section[field] !== undefined && section[field] !== null

/** Balancers gRPC clients have: anything else is served as ROUND_ROBIN. */
const SERVED_SIMPLE = new Set(["ROUND_ROBIN", "UNSPECIFIED"])
/** Mesh mTLS (and none) are served; other TLS modes would need certificates the client lacks. */
const SERVED_TLS_MODES = new Set(["ISTIO_MUTUAL", "MESH_MUTUAL", "DISABLE"])

/** Fields of one section of a traffic policy that are simply dropped; `path` is the section's. */
interface Dropped {
  readonly path: string
  readonly fields: (policy: TrafficPolicy) => ReadonlyArray<string>
}

/** The names among `fields` set in the section `select` picks; field names checked against the schema types. */
const dropped =
  <S extends object>(select: (policy: TrafficPolicy) => S | undefined, fields: ReadonlyArray<keyof S & string>) =>
  (policy: TrafficPolicy): ReadonlyArray<string> => {
    const section = select(policy)
    return fields.filter((field) => has(section, field))
  }

const DROPPED: ReadonlyArray<Dropped> = [
  {
    path: "loadBalancer",
    fields: dropped((p) => p.loadBalancer, ["localityLbSetting", "warmupDurationSecs", "warmup"]),
  },
  {
    path: "connectionPool.tcp",
    fields: dropped(
      (p) => p.connectionPool?.tcp,
      ["connectTimeout", "tcpKeepalive", "maxConnectionDuration", "idleTimeout"],
    ),
  },
  {
    path: "connectionPool.http",
    fields: dropped(
      (p) => p.connectionPool?.http,
      [
        "http1MaxPendingRequests",
        "maxRequestsPerConnection",
        "maxRetries",
        "idleTimeout",
        "h2UpgradePolicy",
        "useClientProtocol",
        "maxConcurrentStreams",
      ],
    ),
  },
  {
    path: "outlierDetection",
    fields: dropped(
      (p) => p.outlierDetection,
      ["consecutiveLocalOriginFailures", "splitExternalLocalOriginErrors", "minHealthPercent", "consecutiveErrors"],
    ),
  },
  { path: "", fields: dropped((p) => p, ["portLevelSettings", "tunnel", "proxyProtocol", "retryBudget"]) },
]

/** What one traffic policy (at `prefix`) loses or gets changed on its way to a gRPC client. */
const trafficPolicyFields = (prefix: string, policy: TrafficPolicy | undefined): ReadonlyArray<string> => {
  if (policy === undefined) return []
  const out: Array<string> = []
  const path = (field: string) => `${prefix}.${field}`
  for (const section of DROPPED)
    for (const field of section.fields(policy)) out.push(path(section.path === "" ? field : `${section.path}.${field}`))
  const lb = policy.loadBalancer
  const simple = lb?.simple
  if (simple !== undefined && !SERVED_SIMPLE.has(simple))
    out.push(`${path("loadBalancer.simple")} ${simple} (served as ROUND_ROBIN: gRPC clients have no such balancer)`)
  const hash = lb?.consistentHash
  for (const key of ["httpHeaderName", "httpCookie", "useSourceIp", "httpQueryParameterName"] as const)
    if (has(hash, key))
      out.push(`${path(`loadBalancer.consistentHash.${key}`)} (ring hash without a hash key: requests hash at random)`)
  if (has(hash, "maglev")) out.push(`${path("loadBalancer.consistentHash.maglev")} (served as ring hash)`)
  const od = policy.outlierDetection
  for (const key of ["consecutive5xxErrors", "consecutiveGatewayErrors"] as const)
    if (has(od, key))
      out.push(`${path(`outlierDetection.${key}`)} (gRPC clients eject by success rate, not by consecutive errors)`)
  const tls = policy.tls
  const mode = tls?.mode
  if (mode !== undefined && !SERVED_TLS_MODES.has(mode))
    out.push(`${path("tls.mode")} ${mode} (served as plaintext: proxyless clients get mesh mTLS only)`)
  if (tls !== undefined)
    for (const key of (Object.keys(tls) as Array<keyof typeof tls>).sort())
      if (key !== "mode" && has(tls, key)) out.push(path(`tls.${key}`))
  return out
}

/**
 * The fields of a DestinationRule spec proxyless gRPC clients ignore (or get in another form,
 * said in parentheses), as spec paths; empty when the client gets all of it.
 */
export const ignoredDestinationRuleFields = (spec: DestinationRuleSpec): ReadonlyArray<string> => {
  const out = [...trafficPolicyFields("trafficPolicy", spec.trafficPolicy)]
  ;(spec.subsets ?? []).forEach((subset, i) => {
    out.push(...trafficPolicyFields(`subsets[${i}].trafficPolicy`, subset.trafficPolicy))
  })
  if (has(spec, "workloadSelector")) out.push("workloadSelector")
  return out
}

/** The notice text for a DestinationRule, undefined when nothing is ignored. */
export const ignoredFieldsNotice = (
  namespace: string,
  name: string,
  ignored: ReadonlyArray<string>,
): string | undefined =>
  ignored.length === 0
    ? undefined
    : `DestinationRule ${namespace}/${name}: proxyless gRPC clients ignore ${ignored.join("; ")}`
