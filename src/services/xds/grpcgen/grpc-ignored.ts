/**
 * DestinationRule fields proxyless gRPC clients do not get, or get only in part. The gRPC
 * generator (grpc-gen.ts) maps what @grpc/grpc-js-xds implements — `lb_policy` ROUND_ROBIN and
 * RING_HASH (no least-request balancer), outlier detection by success rate and failure
 * percentage (no consecutive-error ejection), `max_requests` circuit breaking, mesh mTLS — and
 * drops the rest. Without a word a user only finds that out from traffic, so the fields are
 * listed per resource (the server logs them once, at info, scope `grpcgen`). The README's table
 * "DestinationRule/VirtualService fields proxyless gRPC clients ignore" lists the same.
 */

type Obj = Readonly<Record<string, unknown>>
const obj = (value: unknown): Obj | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : undefined
const has = (o: Obj | undefined, key: string): boolean => o !== undefined && o[key] !== undefined && o[key] !== null

/** Balancers gRPC clients have: anything else is served as ROUND_ROBIN. */
const SERVED_SIMPLE = new Set(["ROUND_ROBIN", "UNSPECIFIED"])
/** Mesh mTLS (and none) are served; other TLS modes would need certificates the client lacks. */
const SERVED_TLS_MODES = new Set(["ISTIO_MUTUAL", "MESH_MUTUAL", "DISABLE"])

/** Fields of a traffic policy that are simply dropped, by object path. */
const DROPPED: ReadonlyArray<readonly [section: string, fields: ReadonlyArray<string>]> = [
  ["loadBalancer", ["localityLbSetting", "warmupDurationSecs", "warmup"]],
  ["connectionPool.tcp", ["connectTimeout", "tcpKeepalive", "maxConnectionDuration", "idleTimeout"]],
  [
    "connectionPool.http",
    [
      "http1MaxPendingRequests",
      "maxRequestsPerConnection",
      "maxRetries",
      "idleTimeout",
      "h2UpgradePolicy",
      "useClientProtocol",
      "maxConcurrentStreams",
    ],
  ],
  [
    "outlierDetection",
    ["consecutiveLocalOriginFailures", "splitExternalLocalOriginErrors", "minHealthPercent", "consecutiveErrors"],
  ],
  ["", ["portLevelSettings", "tunnel", "proxyProtocol", "retryBudget"]],
]

const at = (policy: Obj, section: string): Obj | undefined =>
  section === "" ? policy : section.split(".").reduce<Obj | undefined>((o, key) => obj(o?.[key]), policy)

/** What one traffic policy (at `prefix`) loses or gets changed on its way to a gRPC client. */
const trafficPolicyFields = (prefix: string, value: unknown): ReadonlyArray<string> => {
  const policy = obj(value)
  if (policy === undefined) return []
  const out: Array<string> = []
  const path = (field: string) => `${prefix}.${field}`
  for (const [section, fields] of DROPPED) {
    const o = at(policy, section)
    for (const field of fields) if (has(o, field)) out.push(path(section === "" ? field : `${section}.${field}`))
  }
  const lb = obj(policy.loadBalancer)
  const simple = typeof lb?.simple === "string" ? lb.simple : undefined
  if (simple !== undefined && !SERVED_SIMPLE.has(simple))
    out.push(`${path("loadBalancer.simple")} ${simple} (served as ROUND_ROBIN: gRPC clients have no such balancer)`)
  const hash = obj(lb?.consistentHash)
  for (const key of ["httpHeaderName", "httpCookie", "useSourceIp", "httpQueryParameterName"])
    if (has(hash, key))
      out.push(`${path(`loadBalancer.consistentHash.${key}`)} (ring hash without a hash key: requests hash at random)`)
  if (has(hash, "maglev")) out.push(`${path("loadBalancer.consistentHash.maglev")} (served as ring hash)`)
  const od = obj(policy.outlierDetection)
  for (const key of ["consecutive5xxErrors", "consecutiveGatewayErrors"])
    if (has(od, key))
      out.push(`${path(`outlierDetection.${key}`)} (gRPC clients eject by success rate, not by consecutive errors)`)
  const tls = obj(policy.tls)
  const mode = typeof tls?.mode === "string" ? tls.mode : undefined
  if (mode !== undefined && !SERVED_TLS_MODES.has(mode))
    out.push(`${path("tls.mode")} ${mode} (served as plaintext: proxyless clients get mesh mTLS only)`)
  for (const key of Object.keys(tls ?? {}).sort()) if (key !== "mode" && has(tls, key)) out.push(path(`tls.${key}`))
  return out
}

/**
 * The fields of a DestinationRule spec proxyless gRPC clients ignore (or get in another form,
 * said in parentheses), as spec paths; empty when the client gets all of it.
 */
export const ignoredDestinationRuleFields = (spec: unknown): ReadonlyArray<string> => {
  const dr = obj(spec)
  if (dr === undefined) return []
  const out = [...trafficPolicyFields("trafficPolicy", dr.trafficPolicy)]
  const subsets = Array.isArray(dr.subsets) ? dr.subsets : []
  subsets.forEach((subset, i) => {
    out.push(...trafficPolicyFields(`subsets[${i}].trafficPolicy`, obj(subset)?.trafficPolicy))
  })
  if (has(dr, "workloadSelector")) out.push("workloadSelector")
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
