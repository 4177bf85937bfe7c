/** networking.mesh.io DestinationRule: policies applied after routing (subsets, LB, TLS, pools). */
import { Schema } from "effect"
import {
  checked,
  Duration,
  DurationOrZero,
  Enum,
  exportToProblems,
  fqdnProblem,
  Int32,
  int32Within,
  isDns1123Label,
  isIP,
  Labels,
  opt,
  PortNumber,
  portProblem,
  type Report,
  StringList,
  structuralKeywords,
  UInt,
  WorkloadSelector,
  wildcardDomainProblem,
} from "./common.js"

const nonNegative =
  (fields: ReadonlyArray<string>) =>
  (value: Readonly<Record<string, unknown>>, report: Report): void => {
    for (const field of fields) {
      const v = value[field]
      if (typeof v === "number" && v < 0) report([field], `${field} must be non-negative`)
    }
  }

const TcpKeepalive = Schema.Struct({ probes: opt(UInt), time: opt(Duration), interval: opt(Duration) })

export const ConnectionPoolSettings = Schema.Struct({
  tcp: opt(
    Schema.Struct({
      maxConnections: opt(Int32),
      connectTimeout: opt(Duration),
      tcpKeepalive: opt(TcpKeepalive),
      maxConnectionDuration: opt(Duration),
      idleTimeout: opt(Duration),
    }).pipe(checked(nonNegative(["maxConnections"]))),
  ),
  http: opt(
    Schema.Struct({
      http1MaxPendingRequests: opt(Int32),
      http2MaxRequests: opt(Int32),
      maxRequestsPerConnection: opt(Int32),
      maxRetries: opt(Int32),
      idleTimeout: opt(Duration),
      h2UpgradePolicy: opt(Enum("DEFAULT", "DO_NOT_UPGRADE", "UPGRADE")),
      useClientProtocol: opt(Schema.Boolean),
      maxConcurrentStreams: opt(Int32),
      /** HTTP/2 PINGs on upstream connections, the API's current name; both fields are required. */
      http2KeepAlive: opt(Schema.Struct({ interval: opt(Duration), timeout: opt(Duration) })),
      /** HTTP/2 PING keepalive on upstream connections (finds dead connections behind middleboxes); the older form. */
      http2ProtocolOptions: opt(
        Schema.Struct({
          connectionKeepalive: opt(Schema.Struct({ interval: opt(Duration), timeout: opt(Duration) })),
        }),
      ),
    }).pipe(
      checked((http, report) => {
        nonNegative([
          "http1MaxPendingRequests",
          "http2MaxRequests",
          "maxRequestsPerConnection",
          "maxRetries",
          "maxConcurrentStreams",
        ])(http, report)
        if (http.h2UpgradePolicy === "UPGRADE" && http.useClientProtocol === true) {
          report(["useClientProtocol"], "use client protocol must not be true when H2UpgradePolicy is UPGRADE")
        }
        if (http.http2KeepAlive !== undefined) {
          if (http.http2KeepAlive.interval === undefined) {
            report(["http2KeepAlive", "interval"], "http2 keepalive interval is required")
          }
          if (http.http2KeepAlive.timeout === undefined) {
            report(["http2KeepAlive", "timeout"], "http2 keepalive timeout is required")
          }
        }
      }),
    ),
  ),
}).pipe(
  checked((pool, report) => {
    if (pool.tcp === undefined && pool.http === undefined) report([], "connection pool must have at least one field")
  }),
)

const percentField = (value: number | undefined, field: string, report: Report) => {
  if (value !== undefined && (value < 0 || value > 100)) report([field], `percentage ${value} is not in range 0..100`)
}

export const OutlierDetection = Schema.Struct({
  splitExternalLocalOriginErrors: opt(Schema.Boolean),
  consecutiveLocalOriginFailures: opt(UInt),
  consecutiveGatewayErrors: opt(UInt),
  consecutive5xxErrors: opt(UInt),
  consecutiveErrors: opt(Int32),
  interval: opt(Duration),
  baseEjectionTime: opt(Duration),
  maxEjectionPercent: opt(int32Within({ minimum: 0, maximum: 100 })),
  minHealthPercent: opt(Int32),
}).pipe(
  checked((od, report) => {
    if (od.splitExternalLocalOriginErrors !== true && (od.consecutiveLocalOriginFailures ?? 0) > 0) {
      report(
        ["consecutiveLocalOriginFailures"],
        "outlier detection consecutive local origin failures is specified, but split external local origin errors is set to false",
      )
    }
    percentField(od.maxEjectionPercent, "maxEjectionPercent", report)
    percentField(od.minHealthPercent, "minHealthPercent", report)
  }),
)

const isPrime = (x: number): boolean => {
  if (x !== 0 && x < 4) return true
  if (x % 2 === 0) return false
  for (let f = 3; f * f <= x; f += 2) if (x % f === 0) return false
  return true
}

const LocalityLbSetting = Schema.Struct({
  distribute: opt(
    Schema.Array(
      Schema.Struct({ from: opt(Schema.String), to: opt(Schema.Record({ key: Schema.String, value: UInt })) }),
    ),
  ),
  failover: opt(Schema.Array(Schema.Struct({ from: opt(Schema.String), to: opt(Schema.String) }))),
  failoverPriority: opt(StringList),
  enabled: opt(Schema.Boolean),
}).pipe(
  checked((lb, report) => {
    if ((lb.distribute?.length ?? 0) > 0 && (lb.failover?.length ?? 0) > 0) {
      report([], "can not simultaneously specify 'distribute' and 'failover'")
    }
    if ((lb.distribute?.length ?? 0) > 0 && (lb.failoverPriority?.length ?? 0) > 0) {
      report([], "can not simultaneously specify 'distribute' and 'failoverPriority'")
    }
    const froms = new Set<string>()
    lb.distribute?.forEach((d, i) => {
      const from = d.from ?? ""
      if (froms.has(from)) report(["distribute", i, "from"], `locality ${from} overlap with previous specified ones`)
      froms.add(from)
      const weights = Object.values(d.to ?? {})
      const total = weights.reduce((a, b) => a + b, 0)
      if (total !== 100) report(["distribute", i, "to"], `total weight ${total} != 100`)
    })
    lb.failover?.forEach((f, i) => {
      if ((f.from ?? "") === (f.to ?? ""))
        report(["failover", i], "locality lb failover settings must specify different regions")
      if ((f.from ?? "").includes("/") || (f.to ?? "").includes("/")) {
        report(["failover", i], "locality lb failover only specify region")
      }
    })
  }),
)

/** Slow start: `minimumPercent` is a percentage (0-100), `aggression` at least 1 (the reference's CRD bounds). */
const WarmupConfiguration = Schema.Struct({
  duration: Duration,
  minimumPercent: opt(Schema.Number.annotations(structuralKeywords({ minimum: 0, maximum: 100 }))),
  aggression: opt(Schema.Number.annotations(structuralKeywords({ minimum: 1 }))),
}).pipe(
  checked((warmup, report) => {
    const percent = warmup.minimumPercent
    if (percent !== undefined && (percent < 0 || percent > 100)) {
      report(["minimumPercent"], `minimumPercent ${percent} must be between 0 and 100`)
    }
    if (warmup.aggression !== undefined && warmup.aggression < 1) {
      report(["aggression"], `aggression ${warmup.aggression} must be at least 1`)
    }
  }),
)

export const LoadBalancerSettings = Schema.Struct({
  simple: opt(Enum("UNSPECIFIED", "LEAST_CONN", "RANDOM", "PASSTHROUGH", "ROUND_ROBIN", "LEAST_REQUEST")),
  consistentHash: opt(
    Schema.Struct({
      httpHeaderName: opt(Schema.String),
      httpCookie: opt(
        Schema.Struct({
          name: opt(Schema.String),
          path: opt(Schema.String),
          ttl: opt(DurationOrZero),
          attributes: opt(Schema.Array(Schema.Struct({ name: Schema.String, value: opt(Schema.String) }))),
        }),
      ),
      useSourceIp: opt(Schema.Boolean),
      httpQueryParameterName: opt(Schema.String),
      ringHash: opt(Schema.Struct({ minimumRingSize: opt(UInt) })),
      maglev: opt(Schema.Struct({ tableSize: opt(UInt) })),
      minimumRingSize: opt(UInt),
    }).pipe(
      checked((ch, report) => {
        const keys = (["httpHeaderName", "httpCookie", "useSourceIp", "httpQueryParameterName"] as const).filter(
          (k) => ch[k] !== undefined,
        )
        if (keys.length > 1) report([], `only one hash key may be set, found ${keys.join(", ")}`)
        if (ch.httpCookie !== undefined && (ch.httpCookie.name ?? "") === "") {
          report(["httpCookie", "name"], "name required for HttpCookie")
        }
        if (ch.ringHash !== undefined && ch.maglev !== undefined)
          report([], "only one of ringHash or maglev can be set")
        if ((ch.minimumRingSize ?? 0) !== 0 && (ch.ringHash !== undefined || ch.maglev !== undefined)) {
          report(["minimumRingSize"], "only one of MinimumRingSize or Maglev/Ringhash can be specified")
        }
        if (ch.maglev !== undefined) {
          const size = ch.maglev.tableSize ?? 0
          if (size === 0) report(["maglev", "tableSize"], "tableSize must be set for maglev")
          else if (size >= 5000011) report(["maglev", "tableSize"], "tableSize must be less than 5000011 for maglev")
          else if (!isPrime(size)) report(["maglev", "tableSize"], "tableSize must be a prime number for maglev")
        }
      }),
    ),
  ),
  localityLbSetting: opt(LocalityLbSetting),
  /** Deprecated by `warmup`, still accepted. */
  warmupDurationSecs: opt(Duration),
  warmup: opt(WarmupConfiguration),
}).pipe(
  checked((lb, report) => {
    if (lb.simple !== undefined && lb.consistentHash !== undefined) {
      report([], "only one of simple or consistentHash may be set")
    }
  }),
)

export const ClientTLSSettings = Schema.Struct({
  mode: opt(Enum("DISABLE", "SIMPLE", "MUTUAL", "ISTIO_MUTUAL")),
  clientCertificate: opt(Schema.String),
  privateKey: opt(Schema.String),
  caCertificates: opt(Schema.String),
  credentialName: opt(Schema.String),
  subjectAltNames: opt(StringList),
  sni: opt(Schema.String),
  insecureSkipVerify: opt(Schema.Boolean),
  caCrl: opt(Schema.String),
}).pipe(
  checked((tls, report) => {
    const mode = tls.mode ?? "DISABLE"
    if (tls.insecureSkipVerify === true && (mode === "SIMPLE" || mode === "MUTUAL")) {
      if ((tls.subjectAltNames?.length ?? 0) > 0) {
        report(["subjectAltNames"], "cannot specify SubjectAltNames when InsecureSkipVerify is set true")
      }
      if ((tls.caCertificates ?? "") !== "") {
        report(["caCertificates"], "cannot specify CaCertificates when InsecureSkipVerify is set true")
      }
    }
    if ((mode === "SIMPLE" || mode === "MUTUAL") && (tls.credentialName ?? "") !== "") {
      if ([tls.clientCertificate, tls.caCertificates, tls.privateKey, tls.caCrl].some((v) => (v ?? "") !== "")) {
        report([], "cannot specify client certificates or CA certificate or CA CRL If credentialName is set")
      }
      return
    }
    if (mode === "MUTUAL") {
      if ((tls.clientCertificate ?? "") === "")
        report(["clientCertificate"], "client certificate required for mutual tls")
      if ((tls.privateKey ?? "") === "") report(["privateKey"], "private key required for mutual tls")
    }
  }),
)

const PortSelector = Schema.Struct({ number: PortNumber })

const PortTrafficPolicy = Schema.Struct({
  port: opt(PortSelector),
  loadBalancer: opt(LoadBalancerSettings),
  connectionPool: opt(ConnectionPoolSettings),
  outlierDetection: opt(OutlierDetection),
  tls: opt(ClientTLSSettings),
}).pipe(
  checked((p, report) => {
    if (p.port === undefined) report(["port"], "portTrafficPolicy must have valid port")
    if (
      p.loadBalancer === undefined &&
      p.connectionPool === undefined &&
      p.outlierDetection === undefined &&
      p.tls === undefined
    ) {
      report([], "port traffic policy must have at least one field")
    }
  }),
)

const TunnelSettings = Schema.Struct({
  protocol: opt(Schema.String),
  targetHost: Schema.String,
  targetPort: Schema.Number,
}).pipe(
  checked((t, report) => {
    if (t.protocol !== undefined && t.protocol !== "" && t.protocol !== "CONNECT" && t.protocol !== "POST") {
      report(["protocol"], `tunnel protocol must be "CONNECT" or "POST"`)
    }
    if (!isIP(t.targetHost) && fqdnProblem(t.targetHost) !== undefined) {
      report(["targetHost"], `tunnel target host must be valid FQDN or IP address: ${t.targetHost}`)
    }
    const problem = portProblem(t.targetPort)
    if (problem !== undefined) report(["targetPort"], `tunnel target port is invalid: ${problem}`)
  }),
)

export const TrafficPolicy = Schema.Struct({
  loadBalancer: opt(LoadBalancerSettings),
  connectionPool: opt(ConnectionPoolSettings),
  outlierDetection: opt(OutlierDetection),
  tls: opt(ClientTLSSettings),
  portLevelSettings: opt(Schema.Array(PortTrafficPolicy)),
  tunnel: opt(TunnelSettings),
  proxyProtocol: opt(Schema.Struct({ version: opt(Enum("V1", "V2")) })),
  retryBudget: opt(
    Schema.Struct({
      percent: opt(Schema.Struct({ value: opt(Schema.Number) })),
      minRetryConcurrency: opt(UInt),
      // The newer API's window for the budget (XBackendTrafficPolicy writes it); the proxy API
      // served here has no field for it.
      budgetInterval: opt(Duration),
    }),
  ),
}).pipe(
  checked((tp, report) => {
    if (Object.values(tp).every((v) => v === undefined)) report([], "traffic policy must have at least one field")
    if (tp.tunnel !== undefined && tp.proxyProtocol !== undefined) {
      report([], "tunnel and proxyProtocol must not be set together")
    }
  }),
)
export type TrafficPolicy = typeof TrafficPolicy.Type

export const subsetNameProblem = (name: string): string | undefined =>
  name === "" ? "subset name cannot be empty" : isDns1123Label(name) ? undefined : `subset name is invalid: ${name}`

export const Subset = Schema.Struct({
  name: Schema.String.annotations(structuralKeywords({ maxLength: 63, pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" })),
  labels: opt(Labels),
  trafficPolicy: opt(TrafficPolicy),
}).pipe(
  checked((subset, report) => {
    const problem = subsetNameProblem(subset.name)
    if (problem !== undefined) report(["name"], problem)
  }),
)
export type Subset = typeof Subset.Type

export const DestinationRule = Schema.Struct({
  host: Schema.String,
  trafficPolicy: opt(TrafficPolicy),
  subsets: opt(
    Schema.Array(Subset).annotations(
      structuralKeywords({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
    ),
  ),
  exportTo: opt(StringList),
  workloadSelector: opt(WorkloadSelector),
}).pipe(
  checked((dr, report) => {
    const hostProblem = wildcardDomainProblem(dr.host)
    if (hostProblem !== undefined) report(["host"], hostProblem)
    const names = new Set<string>()
    dr.subsets?.forEach((subset, i) => {
      if (names.has(subset.name)) report(["subsets", i, "name"], `duplicate subset names: ${subset.name}`)
      names.add(subset.name)
    })
    exportToProblems(dr.exportTo, report)
    // exportTo with a workload selector depends on the namespace: see the kind's resource check.
  }),
)
export type DestinationRuleSpec = typeof DestinationRule.Type
