/** networking.mesh.io VirtualService: routing rules for hosts. */
import { Schema } from "effect"
import {
  checked,
  Duration,
  Enum,
  exportToProblems,
  fqdnProblem,
  HEADER_NAME,
  Int32,
  int32Within,
  ipOrCidrProblem,
  isDns1123Label,
  isIP,
  Labels,
  opt,
  Percent,
  PortNumber,
  percentageProblem,
  type Report,
  regexProblem,
  StringList,
  StringMap,
  StringMatch,
  structuralKeywords,
  UInt,
  UriMatch,
  wildcardDomainProblem,
} from "./common.js"
import { subsetNameProblem } from "./destination-rule.js"

// ---------------------------------------------------------------------------------------------
// Destinations

export const Destination = Schema.Struct({
  host: Schema.String,
  subset: opt(Schema.String),
  port: opt(Schema.Struct({ number: PortNumber })),
}).pipe(
  checked((d, report) => {
    const problem = d.host === "*" ? `invalid destination host ${d.host}` : wildcardDomainProblem(d.host)
    if (problem !== undefined) report(["host"], problem)
    if (d.subset !== undefined && d.subset !== "") {
      const subsetProblem = subsetNameProblem(d.subset)
      if (subsetProblem !== undefined) report(["subset"], subsetProblem)
    }
  }),
)
export type Destination = typeof Destination.Type

const HeaderOperations = Schema.Struct({ set: opt(StringMap), add: opt(StringMap), remove: opt(StringList) })

export const Headers = Schema.Struct({ request: opt(HeaderOperations), response: opt(HeaderOperations) }).pipe(
  checked((headers, report) => {
    const validValue = (value: string) =>
      [...value].every((c) => {
        const code = c.charCodeAt(0)
        return code === 9 || (code >= 32 && code !== 127)
      })
    const checkName = (name: string, at: ReadonlyArray<PropertyKey>, allowAuthority: boolean) => {
      if (name === "") report(at, "header name cannot be empty")
      else if (name.startsWith(":") && !(allowAuthority && name.toLowerCase() === ":authority")) {
        report(at, `invalid header "${name}": header cannot have ":" prefix`)
      } else if (!allowAuthority && name.toLowerCase() === "host")
        report(at, `invalid header "${name}": cannot set Host header`)
    }
    for (const side of ["request", "response"] as const) {
      const ops = headers[side]
      if (ops === undefined) continue
      for (const op of ["set", "add"] as const) {
        for (const [name, value] of Object.entries(ops[op] ?? {})) {
          checkName(name, [side, op, name], side === "request")
          if (!validValue(value)) report([side, op, name], `header value configuration ${value} is invalid`)
        }
      }
      for (const [i, name] of (ops.remove ?? []).entries()) checkName(name, [side, "remove", i], false)
    }
  }),
)

const weightsProblems = (
  routes: ReadonlyArray<{ readonly weight?: number | undefined }>,
  report: Report,
  field: string,
) => {
  let total = 0
  routes.forEach((r, i) => {
    const weight = r.weight ?? 0
    if (weight < 0) report([field, i, "weight"], `weight ${weight} < 0`)
    total += weight
  })
  if (routes.length > 1) {
    if (total === 0) report([field], "total destination weight = 0")
    else if (total !== 100) report([field], `total destination weight ${total} != 100`)
  }
}

export const HTTPRouteDestination = Schema.Struct({
  destination: Destination,
  weight: opt(Int32),
  headers: opt(Headers),
})

export const RouteDestination = Schema.Struct({ destination: Destination, weight: opt(Int32) })

// ---------------------------------------------------------------------------------------------
// Matches

const gatewayNameProblems = (
  names: ReadonlyArray<string> | undefined,
  report: Report,
  at: ReadonlyArray<PropertyKey>,
) => {
  names?.forEach((name, i) => {
    const slash = name.indexOf("/")
    if (slash < 0) {
      const problem = fqdnProblem(name)
      if (problem !== undefined) report([...at, i], problem)
      return
    }
    const ns = name.slice(0, slash)
    const gw = name.slice(slash + 1)
    if (ns === "" || gw === "") report([...at, i], "config namespace and gateway name cannot be empty")
    else {
      if (!isDns1123Label(ns)) report([...at, i], `invalid value for namespace: "${ns}"`)
      if (!isDns1123Label(gw)) report([...at, i], `invalid value for gateway name: "${gw}"`)
    }
  })
}

const headerMatchProblems = (
  headers: Readonly<Record<string, StringMatchType>> | undefined,
  report: Report,
  at: ReadonlyArray<PropertyKey>,
) => {
  for (const name of Object.keys(headers ?? {})) {
    if (name === "") report(at, "header name cannot be empty")
    else if (!HEADER_NAME.test(name) && !/^@request\.auth\.claims(\.|\[)/.test(name)) {
      report([...at, name], `header name ${name} is not a valid header name`)
    }
  }
}
type StringMatchType = typeof StringMatch.Type

export const HTTPMatchRequest = Schema.Struct({
  name: opt(Schema.String),
  uri: opt(UriMatch),
  scheme: opt(StringMatch),
  method: opt(StringMatch),
  authority: opt(StringMatch),
  headers: opt(Schema.Record({ key: Schema.String, value: StringMatch })),
  port: opt(PortNumber),
  sourceLabels: opt(Labels),
  gateways: opt(StringList),
  queryParams: opt(Schema.Record({ key: Schema.String, value: StringMatch })),
  ignoreUriCase: opt(Schema.Boolean),
  withoutHeaders: opt(Schema.Record({ key: Schema.String, value: StringMatch })),
  sourceNamespace: opt(Schema.String),
  statPrefix: opt(Schema.String),
}).pipe(
  checked((m, report) => {
    headerMatchProblems(m.headers, report, ["headers"])
    headerMatchProblems(m.withoutHeaders, report, ["withoutHeaders"])
    gatewayNameProblems(m.gateways, report, ["gateways"])
    if (m.sourceNamespace !== undefined && m.sourceNamespace !== "" && !isDns1123Label(m.sourceNamespace)) {
      report(["sourceNamespace"], `sourceNamespace match ${m.sourceNamespace} is invalid`)
    }
  }),
)

// ---------------------------------------------------------------------------------------------
// HTTP route actions

const HTTPRedirect = Schema.Struct({
  uri: opt(Schema.String),
  authority: opt(Schema.String),
  port: opt(PortNumber),
  derivePort: opt(Enum("FROM_PROTOCOL_DEFAULT", "FROM_REQUEST_PORT")),
  scheme: opt(Schema.String),
  redirectCode: opt(UInt),
  /** The matched prefix replaced by this (a prefix match only); mutually exclusive with `uri`. */
  prefixRewrite: opt(Schema.String),
}).pipe(
  checked((r, report) => {
    if (!r.uri && !r.prefixRewrite && !r.authority && r.port === undefined && r.derivePort === undefined && !r.scheme) {
      report([], "redirect must specify URI, authority, scheme, or port")
    }
    if (r.uri && r.prefixRewrite) report([], "only one of uri or prefixRewrite may be set")
    if (r.redirectCode !== undefined && r.redirectCode !== 0 && (r.redirectCode < 300 || r.redirectCode > 399)) {
      report(["redirectCode"], `${r.redirectCode} is not a valid redirect code, must be 3xx`)
    }
    if (r.scheme !== undefined && r.scheme !== "" && r.scheme !== "http" && r.scheme !== "https") {
      report(["scheme"], `invalid redirect scheme, must be "http" or "https"`)
    }
    if (r.port !== undefined && r.derivePort !== undefined) report([], "only one of port or derivePort may be set")
  }),
)

const httpStatusProblem = (status: number): string | undefined =>
  status < 200 || status > 599 ? `HTTP status ${status} is not in range 200-599` : undefined

const HTTPDirectResponse = Schema.Struct({
  status: UInt,
  body: opt(Schema.Struct({ string: opt(Schema.String), bytes: opt(Schema.String) })),
}).pipe(
  checked((d, report) => {
    const problem = httpStatusProblem(d.status)
    if (problem !== undefined) report(["status"], problem)
    if (d.body?.string !== undefined && d.body.bytes !== undefined)
      report(["body"], "only one of string or bytes may be set")
    const size = (d.body?.string ?? d.body?.bytes ?? "").length
    if (size > 1024 * 1024)
      report(["body"], "large direct_responses may impact control plane performance, must be less than 1MB")
  }),
)

const HTTPRewrite = Schema.Struct({
  uri: opt(Schema.String),
  authority: opt(Schema.String),
  uriRegexRewrite: opt(Schema.Struct({ match: opt(Schema.String), rewrite: opt(Schema.String) })),
}).pipe(
  checked((r, report) => {
    if (r.uri && r.uriRegexRewrite !== undefined) report([], "rewrite may only contain one of URI or UriRegexRewrite")
    if (!r.uri && r.uriRegexRewrite === undefined && !r.authority) {
      report([], "rewrite must specify at least one of URI, UriRegexRewrite, or authority")
    }
    if (r.uriRegexRewrite !== undefined) {
      const { match, rewrite } = r.uriRegexRewrite
      if (!match || !rewrite) {
        report(["uriRegexRewrite"], "UriRegexRewrite requires both Rewrite and Match fields to be specified")
      } else {
        const problem = regexProblem(match)
        if (problem !== undefined) report(["uriRegexRewrite", "match"], problem)
      }
    }
  }),
)

const RETRY_ON = new Set([
  "5xx",
  "gateway-error",
  "reset",
  "reset-before-request",
  "connect-failure",
  "retriable-4xx",
  "refused-stream",
  "retriable-status-codes",
  "retriable-headers",
  "envoy-ratelimited",
  "http3-post-connect-failure",
  "cancelled",
  "deadline-exceeded",
  "internal",
  "resource-exhausted",
  "unavailable",
])

const HTTPRetry = Schema.Struct({
  attempts: opt(int32Within({ minimum: 0 })),
  perTryTimeout: opt(Duration),
  retryOn: opt(Schema.String),
  retryRemoteLocalities: opt(Schema.Boolean),
  retryIgnorePreviousHosts: opt(Schema.Boolean),
  backoff: opt(Duration),
}).pipe(
  checked((r, report) => {
    const attempts = r.attempts ?? 0
    if (attempts < 0) report(["attempts"], "attempts cannot be negative")
    if (
      attempts === 0 &&
      (r.perTryTimeout !== undefined || (r.retryOn ?? "") !== "" || r.retryRemoteLocalities !== undefined)
    ) {
      report([], "http retry policy configured when attempts are set to 0 (disabled)")
    }
    if (r.retryOn !== undefined && r.retryOn !== "") {
      for (const policy of r.retryOn.split(",")) {
        const code = /^\d{3}$/.test(policy) ? Number(policy) : 0
        if (!(code >= 100 && code <= 599) && !RETRY_ON.has(policy)) {
          report(["retryOn"], `"${policy}" is not a valid retryOn policy`)
        }
      }
    }
  }),
)

const GRPC_STATUS = new Set([
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
])

const percentProblems = (
  p: { readonly value?: number | undefined } | undefined,
  report: Report,
  at: ReadonlyArray<PropertyKey>,
) => {
  if (p?.value === undefined) return
  const problem = percentageProblem(p.value)
  if (problem !== undefined) report(at, problem)
}

const HTTPFaultInjection = Schema.Struct({
  delay: opt(
    Schema.Struct({
      fixedDelay: opt(Duration),
      exponentialDelay: opt(Duration),
      percentage: opt(Percent),
      percent: opt(Int32),
    }).pipe(
      checked((d, report) => {
        percentProblems(d.percentage, report, ["percentage", "value"])
        if (d.percent !== undefined && (d.percent < 0 || d.percent > 100)) {
          report(["percent"], `percentage ${d.percent} is not in range 0..100`)
        }
        if (d.fixedDelay === undefined && d.exponentialDelay === undefined) report([], "delay must set fixedDelay")
        if (d.exponentialDelay !== undefined) report(["exponentialDelay"], "exponentialDelay not supported yet")
      }),
    ),
  ),
  abort: opt(
    Schema.Struct({
      httpStatus: opt(int32Within({ minimum: 200, maximum: 599 })),
      grpcStatus: opt(Schema.String),
      http2Error: opt(Schema.String),
      percentage: opt(Percent),
    }).pipe(
      checked((a, report) => {
        percentProblems(a.percentage, report, ["percentage", "value"])
        const set = (["httpStatus", "grpcStatus", "http2Error"] as const).filter((k) => a[k] !== undefined)
        if (set.length > 1)
          report([], `only one of httpStatus, grpcStatus or http2Error may be set, found ${set.join(", ")}`)
        if (a.httpStatus !== undefined) {
          const problem = httpStatusProblem(a.httpStatus)
          if (problem !== undefined) report(["httpStatus"], problem)
        }
        if (a.grpcStatus !== undefined && !GRPC_STATUS.has(a.grpcStatus)) {
          report(["grpcStatus"], `gRPC status "${a.grpcStatus}" is not supported, for example use "NOT_FOUND"`)
        }
        if (a.http2Error !== undefined) report(["http2Error"], "HTTP/2 abort fault injection not supported yet")
        if (set.length === 0) report([], "abort must set httpStatus or grpcStatus")
      }),
    ),
  ),
}).pipe(
  checked((f, report) => {
    if (f.abort === undefined && f.delay === undefined)
      report([], "HTTP fault injection must have an abort and/or a delay")
  }),
)

const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"])

const CorsPolicy = Schema.Struct({
  allowOrigin: opt(StringList),
  allowOrigins: opt(Schema.Array(StringMatch)),
  allowMethods: opt(StringList),
  allowHeaders: opt(StringList),
  exposeHeaders: opt(StringList),
  maxAge: opt(Duration),
  allowCredentials: opt(Schema.Boolean),
  unmatchedPreflights: opt(Enum("UNSPECIFIED", "FORWARD", "IGNORE")),
}).pipe(
  checked((c, report) => {
    c.allowOrigins?.forEach((o, i) => {
      if ((o.exact ?? o.prefix ?? o.regex ?? "") === "") {
        report(["allowOrigins", i], "'' is not a valid match type for CORS allow origins")
      }
    })
    c.allowMethods?.forEach((m, i) => {
      if (!HTTP_METHODS.has(m)) report(["allowMethods", i], `"${m}" is not a supported HTTP method`)
    })
    for (const field of ["allowHeaders", "exposeHeaders"] as const) {
      c[field]?.forEach((h, i) => {
        if (h === "") report([field, i], "header name cannot be empty")
        else if (h !== "*" && !HEADER_NAME.test(h)) report([field, i], `header name ${h} is not a valid header name`)
      })
    }
    if (c.maxAge !== undefined && !/^\d+(s|m|h)$/.test(c.maxAge) && !/^(\d+h)?(\d+m)?(\d+s)?$/.test(c.maxAge)) {
      report(["maxAge"], "max_age duration is accurate only to seconds precision")
    }
  }),
)

const HTTPMirrorPolicy = Schema.Struct({ destination: Destination, percentage: opt(Percent) }).pipe(
  checked((m, report) => {
    const value = m.percentage?.value
    if (value !== undefined && value > 100)
      report(["percentage", "value"], `mirror percentage must have a max value of 100 (it has ${value})`)
    if (value !== undefined && value < 0)
      report(["percentage", "value"], `mirror percentage must have a min value of 0 (it has ${value})`)
  }),
)

export const HTTPRoute = Schema.Struct({
  name: opt(Schema.String),
  match: opt(Schema.Array(HTTPMatchRequest)),
  route: opt(Schema.Array(HTTPRouteDestination)),
  redirect: opt(HTTPRedirect),
  directResponse: opt(HTTPDirectResponse),
  delegate: opt(Schema.Struct({ name: opt(Schema.String), namespace: opt(Schema.String) })),
  rewrite: opt(HTTPRewrite),
  timeout: opt(Duration),
  retries: opt(HTTPRetry),
  fault: opt(HTTPFaultInjection),
  mirror: opt(Destination),
  mirrors: opt(Schema.Array(HTTPMirrorPolicy)),
  mirrorPercent: opt(UInt),
  mirrorPercentage: opt(Percent),
  corsPolicy: opt(CorsPolicy),
  headers: opt(Headers),
})
  .annotations(
    // A redirect never beside a non-empty route.
    structuralKeywords({ not: { required: ["redirect", "route"], properties: { route: { minItems: 1 } } } }),
  )
  .pipe(
    checked((http, report) => {
      const routes = http.route ?? []
      if (http.delegate !== undefined) {
        if ((http.delegate.name ?? "") === "") report(["delegate", "name"], "delegate name is required")
        if (
          http.delegate.namespace !== undefined &&
          http.delegate.namespace !== "" &&
          !isDns1123Label(http.delegate.namespace)
        ) {
          report(["delegate", "namespace"], `delegate namespace is invalid: ${http.delegate.namespace}`)
        }
        if (routes.length > 0) report(["delegate"], "HTTP route cannot contain both route and delegate")
        if (http.redirect !== undefined) report(["delegate"], "HTTP route cannot contain both redirect and delegate")
        if (http.directResponse !== undefined)
          report(["delegate"], "HTTP route cannot contain both direct_response and delegate")
      } else if (http.redirect !== undefined) {
        if (routes.length > 0) report(["redirect"], "HTTP route cannot contain both route and redirect")
        if (http.fault !== undefined) report(["redirect"], "HTTP route cannot contain both fault and redirect")
        if (http.rewrite !== undefined) report(["redirect"], "HTTP route rule cannot contain both rewrite and redirect")
        if (http.directResponse !== undefined)
          report(["redirect"], "HTTP route cannot contain both redirect and direct_response")
      } else if (http.directResponse !== undefined) {
        if (routes.length > 0) report(["directResponse"], "HTTP route cannot contain both route and direct_response")
        if (http.fault !== undefined)
          report(["directResponse"], "HTTP route cannot contain both fault and direct_response")
        if (http.rewrite !== undefined)
          report(["directResponse"], "HTTP route rule cannot contain both rewrite and direct_response")
      } else if (routes.length === 0) {
        report([], "HTTP route, redirect, direct_response or delegate is required")
      }
      if ((http.mirrors?.length ?? 0) > 0 && (http.mirror !== undefined || http.mirrorPercentage !== undefined)) {
        report(["mirrors"], "cannot specify both mirror and mirrors")
      }
      if (http.mirrorPercent !== undefined && http.mirrorPercent > 100) {
        report(["mirrorPercent"], `percentage ${http.mirrorPercent} is not in range 0..100`)
      }
      const mp = http.mirrorPercentage?.value
      if (mp !== undefined && mp > 100)
        report(["mirrorPercentage", "value"], `mirror_percentage must have a max value of 100 (it has ${mp})`)
      if (mp !== undefined && mp < 0)
        report(["mirrorPercentage", "value"], `mirror_percentage must have a min value of 0 (it has ${mp})`)
      weightsProblems(routes, report, "route")
      if (
        http.rewrite?.authority &&
        (http.headers?.request?.set?.[":authority"] !== undefined || http.headers?.request?.set?.host !== undefined)
      ) {
        report(["rewrite", "authority"], "authority header cannot be set both in rewrite and headers")
      }
    }),
  )
export type HTTPRoute = typeof HTTPRoute.Type

// ---------------------------------------------------------------------------------------------
// TLS and TCP routes

const subnetProblems = (subnets: ReadonlyArray<string> | undefined, report: Report, at: ReadonlyArray<PropertyKey>) =>
  subnets?.forEach((s, i) => {
    const problem = ipOrCidrProblem(s)
    if (problem !== undefined) report([...at, i], problem)
  })

const TLSMatchAttributes = Schema.Struct({
  sniHosts: Schema.Array(Schema.String),
  destinationSubnets: opt(StringList),
  port: opt(PortNumber),
  sourceLabels: opt(Labels),
  gateways: opt(StringList),
  sourceNamespace: opt(Schema.String),
}).pipe(
  checked((m, report) => {
    if (m.sniHosts.length === 0) report(["sniHosts"], "TLS match must have at least one SNI host")
    m.sniHosts.forEach((sni, i) => {
      const problem = wildcardDomainProblem(sni)
      if (problem !== undefined && !isIP(sni)) report(["sniHosts", i], problem)
    })
    subnetProblems(m.destinationSubnets, report, ["destinationSubnets"])
    gatewayNameProblems(m.gateways, report, ["gateways"])
  }),
)

const L4MatchAttributes = Schema.Struct({
  destinationSubnets: opt(StringList),
  port: opt(PortNumber),
  sourceSubnet: opt(Schema.String),
  sourceLabels: opt(Labels),
  gateways: opt(StringList),
  sourceNamespace: opt(Schema.String),
}).pipe(
  checked((m, report) => {
    subnetProblems(m.destinationSubnets, report, ["destinationSubnets"])
    gatewayNameProblems(m.gateways, report, ["gateways"])
  }),
)

export const TLSRoute = Schema.Struct({
  match: Schema.Array(TLSMatchAttributes),
  route: opt(Schema.Array(RouteDestination)),
}).pipe(
  checked((tls, report) => {
    if (tls.match.length === 0) report(["match"], "TLS route must have at least one match condition")
    if ((tls.route ?? []).length === 0) report(["route"], "TLS route is required")
    weightsProblems(tls.route ?? [], report, "route")
  }),
)

export const TCPRoute = Schema.Struct({
  match: opt(Schema.Array(L4MatchAttributes)),
  route: opt(Schema.Array(RouteDestination)),
}).pipe(
  checked((tcp, report) => {
    if ((tcp.route ?? []).length === 0) report(["route"], "TCP route is required")
    weightsProblems(tcp.route ?? [], report, "route")
  }),
)

// ---------------------------------------------------------------------------------------------

/** Whether wildcard-aware host `a` matches host `b` (either direction), as duplicate detection needs. */
const hostsOverlap = (a: string, b: string): boolean => {
  const la = a.toLowerCase()
  const lb = b.toLowerCase()
  if (la === lb) return true
  const wild = (w: string, h: string) => w.startsWith("*") && h.endsWith(w.slice(1))
  return wild(la, lb) || wild(lb, la)
}

export const VirtualService = Schema.Struct({
  hosts: opt(StringList),
  gateways: opt(StringList),
  http: opt(Schema.Array(HTTPRoute)),
  tls: opt(Schema.Array(TLSRoute)),
  tcp: opt(Schema.Array(TCPRoute)),
  exportTo: opt(StringList),
})
  .annotations(
    // A delegate (no hosts) names no gateways and has no tls or tcp routes.
    structuralKeywords({
      allOf: ["gateways", "tls", "tcp"].map((field) => ({
        anyOf: [
          { required: ["hosts"], properties: { hosts: { minItems: 1 } } },
          { not: { required: [field], properties: { [field]: { minItems: 1 } } } },
        ],
      })),
    }),
  )
  .pipe(
    checked((vs, report) => {
      const hosts = vs.hosts ?? []
      if (hosts.length === 0) {
        if ((vs.gateways?.length ?? 0) > 0)
          report(["gateways"], "delegate virtual service must have no gateways specified")
        if ((vs.tls?.length ?? 0) > 0) report(["tls"], "delegate virtual service must have no tls route specified")
        if ((vs.tcp?.length ?? 0) > 0) report(["tcp"], "delegate virtual service must have no tcp route specified")
      }
      gatewayNameProblems(vs.gateways, report, ["gateways"])
      const appliesToMesh = (vs.gateways ?? []).length === 0 || (vs.gateways ?? []).includes("mesh")
      let allValid = true
      hosts.forEach((host, i) => {
        const problem = wildcardDomainProblem(host)
        if (problem !== undefined && !isIP(host)) {
          report(["hosts", i], problem)
          allValid = false
        } else if (appliesToMesh && host === "*") {
          report(["hosts", i], "wildcard host * is not allowed for virtual services bound to the mesh gateway")
          allValid = false
        }
      })
      if (allValid) {
        for (let i = 0; i < hosts.length; i++) {
          for (let j = i + 1; j < hosts.length; j++) {
            if (hostsOverlap(hosts[i] ?? "", hosts[j] ?? "")) {
              report(["hosts", j], `duplicate hosts in virtual service: ${hosts[i]} & ${hosts[j]}`)
            }
          }
        }
      }
      if ((vs.http?.length ?? 0) === 0 && (vs.tcp?.length ?? 0) === 0 && (vs.tls?.length ?? 0) === 0) {
        report([], "http, tcp or tls must be provided in virtual service")
      }
      if (appliesToMesh) {
        for (const [i, route] of (vs.http ?? []).entries()) {
          for (const [j, m] of (route.match ?? []).entries()) {
            for (const field of ["headers", "withoutHeaders"] as const) {
              for (const key of Object.keys(m[field] ?? {})) {
                if (key.startsWith("@request.auth.claims")) {
                  report(
                    ["http", i, "match", j, field, key],
                    `JWT claim based routing (key: ${key}) is only supported for gateway`,
                  )
                }
              }
            }
          }
        }
      }
      for (const [i, route] of (vs.tls ?? []).entries()) {
        for (const [j, m] of route.match.entries()) {
          for (const [k, sni] of m.sniHosts.entries()) {
            if (wildcardDomainProblem(sni) !== undefined) continue
            if (hosts.length > 0 && !hosts.some((h) => hostsOverlap(h, sni) && (h.startsWith("*") || h === sni))) {
              report(
                ["tls", i, "match", j, "sniHosts", k],
                `SNI host "${sni}" is not a compatible subset of any of the virtual service hosts: [${hosts.join(", ")}]`,
              )
            }
          }
        }
      }
      exportToProblems(vs.exportTo, report)
    }),
  )
export type VirtualServiceSpec = typeof VirtualService.Type
