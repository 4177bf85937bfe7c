/** networking.mesh.io Sidecar: scope of a workload's proxy (listeners and reachable hosts). */
import { Schema } from "effect"
import {
  checked,
  Enum,
  isDns1123Label,
  NetworkingWorkloadSelector,
  opt,
  parseProtocol,
  portProblem,
  type Report,
  structuralKeywords,
  UNIX_PREFIX,
  unixAddressProblem,
} from "./common.js"
import { ConnectionPoolSettings } from "./destination-rule.js"
import { bindProblem, namespacedHostProblem, ServerTLSSettings } from "./gateway.js"
import { Destination } from "./virtual-service.js"

const SidecarPort = Schema.Struct({
  number: opt(Schema.Number),
  protocol: opt(Schema.String),
  name: opt(Schema.String),
  targetPort: opt(Schema.Number),
})

const CaptureMode = Enum("DEFAULT", "IPTABLES", "NONE")

const portProblems = (port: typeof SidecarPort.Type, report: Report, allowZero: boolean) => {
  if (port.name !== undefined && port.name !== "" && !isDns1123Label(port.name)) {
    report(["port", "name"], `invalid port name: ${port.name}`)
  }
  if (port.protocol !== undefined && port.protocol !== "" && parseProtocol(port.protocol) === undefined) {
    report(["port", "protocol"], `unsupported protocol: ${port.protocol}`)
  }
  if (!(allowZero && (port.number ?? 0) === 0)) {
    const problem = portProblem(port.number ?? 0)
    if (problem !== undefined) report(["port", "number"], problem)
  }
  if ((port.targetPort ?? 0) > 0) report(["port", "targetPort"], "targetPort has no impact on Sidecars")
}

const IngressListener = Schema.Struct({
  port: SidecarPort,
  bind: opt(Schema.String),
  captureMode: opt(CaptureMode),
  defaultEndpoint: opt(
    // Empty, unix://@name or an absolute file path, or a loopback / any address (bracketed or not) and a port.
    Schema.String.annotations(
      structuralKeywords({
        pattern:
          "^(unix://(@[\\s\\S]*|/[\\s\\S]*[^/])|((127\\.0\\.0\\.1|0\\.0\\.0\\.0)?|\\[(127\\.0\\.0\\.1|0\\.0\\.0\\.0|::1|::)?\\]):[0-9]+)?$",
      }),
    ),
  ),
  tls: opt(ServerTLSSettings),
  connectionPool: opt(ConnectionPoolSettings),
}).pipe(
  checked((ing, report) => {
    portProblems(ing.port, report, false)
    if (ing.bind !== undefined && ing.bind !== "") {
      const problem = bindProblem(ing.bind)
      if (problem !== undefined) report(["bind"], problem)
    }
    const ep = ing.defaultEndpoint ?? ""
    if (ep !== "") {
      if (ep.startsWith(UNIX_PREFIX)) {
        const problem = unixAddressProblem(ep.slice(UNIX_PREFIX.length))
        if (problem !== undefined) report(["defaultEndpoint"], problem)
      } else {
        const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(ep)
        const host = m?.[1] ?? m?.[2] ?? ""
        if (m === null) report(["defaultEndpoint"], `invalid defaultEndpoint "${ep}": expected host:port`)
        else {
          if (host !== "" && !["127.0.0.1", "0.0.0.0", "::1", "::"].includes(host)) {
            report(
              ["defaultEndpoint"],
              "sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset",
            )
          }
          const problem = portProblem(Number(m[3]))
          if (problem !== undefined) report(["defaultEndpoint"], problem)
        }
      }
    }
    if (ing.tls !== undefined) {
      if ((ing.tls.subjectAltNames?.length ?? 0) > 0)
        report(["tls", "subjectAltNames"], "sidecar: subjectAltNames is not supported in ingress tls")
      if (ing.tls.httpsRedirect === true) report(["tls", "httpsRedirect"], "sidecar: httpsRedirect is not supported")
      if ((ing.tls.credentialName ?? "") !== "")
        report(["tls", "credentialName"], "sidecar: credentialName is not currently supported")
      if (ing.tls.mode === "ISTIO_MUTUAL" || ing.tls.mode === "AUTO_PASSTHROUGH") {
        report(["tls", "mode"], `configuration is invalid: cannot set mode to ${ing.tls.mode} in sidecar ingress tls`)
      }
    }
  }),
)

const EgressListener = Schema.Struct({
  port: opt(SidecarPort),
  bind: opt(Schema.String),
  captureMode: opt(CaptureMode),
  // namespacedHostProblem: namespace/host, neither side empty.
  hosts: Schema.Array(Schema.String.annotations(structuralKeywords({ pattern: "^[^/]+/[^/]+$" }))).annotations(
    structuralKeywords({ minItems: 1 }),
  ),
}).pipe(
  checked((eg, report) => {
    const bind = eg.bind ?? ""
    if (eg.port !== undefined) {
      if ((eg.port.targetPort ?? 0) > 0) report(["port", "targetPort"], "targetPort has no impact on Sidecars")
      if ((eg.port.number ?? 0) === 0) {
        portProblems({ ...eg.port, targetPort: 0 }, report, true)
        if (!bind.startsWith(UNIX_PREFIX))
          report(["bind"], "sidecar: ports with 0 value must have a unix domain socket bind address")
        else {
          const problem = unixAddressProblem(bind.slice(UNIX_PREFIX.length))
          if (problem !== undefined) report(["bind"], problem)
        }
        if (eg.captureMode !== undefined && eg.captureMode !== "DEFAULT" && eg.captureMode !== "NONE") {
          report(["captureMode"], "sidecar: captureMode must be DEFAULT/NONE for unix domain socket listeners")
        }
      } else {
        portProblems({ ...eg.port, targetPort: 0 }, report, false)
        if (bind !== "") {
          const problem = bindProblem(bind)
          if (problem !== undefined) report(["bind"], problem)
        }
      }
    }
    if (eg.hosts.length === 0) report(["hosts"], "sidecar: egress listener must contain at least one host")
    eg.hosts.forEach((host, i) => {
      const problem = namespacedHostProblem(host, false)
      if (problem !== undefined) report(["hosts", i], problem)
    })
  }),
)

const OutboundTrafficPolicy = Schema.Struct({
  mode: opt(Enum("REGISTRY_ONLY", "ALLOW_ANY")),
  egressProxy: opt(Destination),
})
  .annotations(
    // An egressProxy, with a port, only in mode ALLOW_ANY.
    structuralKeywords({
      anyOf: [
        { not: { required: ["egressProxy"] } },
        {
          required: ["mode", "egressProxy"],
          properties: { mode: { enum: ["ALLOW_ANY"] }, egressProxy: { required: ["port"] } },
        },
      ],
    }),
  )
  .pipe(
    checked((tp, report) => {
      if (tp.egressProxy !== undefined) {
        if (tp.mode !== "ALLOW_ANY") {
          report(["egressProxy"], "sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode")
        }
        if (tp.egressProxy.port === undefined)
          report(["egressProxy", "port"], "sidecar: egress_proxy port must be non-nil")
      }
    }),
  )

export const Sidecar = Schema.Struct({
  workloadSelector: opt(NetworkingWorkloadSelector),
  ingress: opt(Schema.Array(IngressListener)),
  egress: opt(Schema.Array(EgressListener)),
  inboundConnectionPool: opt(ConnectionPoolSettings),
  outboundTrafficPolicy: opt(OutboundTrafficPolicy),
})
  .annotations(
    // Not empty: some ingress or egress listener, an outbound policy or an inbound pool.
    structuralKeywords({
      anyOf: [
        { required: ["ingress"], properties: { ingress: { minItems: 1 } } },
        { required: ["egress"], properties: { egress: { minItems: 1 } } },
        { required: ["outboundTrafficPolicy"] },
        { required: ["inboundConnectionPool"] },
      ],
    }),
  )
  .pipe(
    checked((sc, report) => {
      if (
        (sc.ingress?.length ?? 0) === 0 &&
        (sc.egress?.length ?? 0) === 0 &&
        sc.outboundTrafficPolicy === undefined &&
        sc.inboundConnectionPool === undefined
      ) {
        report([], "sidecar: empty configuration provided")
      }
      const ingressPorts = new Set<number>()
      sc.ingress?.forEach((ing, i) => {
        const n = ing.port.number ?? 0
        if (ingressPorts.has(n))
          report(["ingress", i, "port", "number"], "sidecar: ports on IP bound listeners must be unique")
        ingressPorts.add(n)
      })
      const egressPorts = new Set<number>()
      const uds = new Set<string>()
      const egress = sc.egress ?? []
      let catchAll = false
      egress.forEach((eg, i) => {
        if (eg.port === undefined) {
          if (catchAll) report(["egress", i], "sidecar: egress can have only one listener with empty port")
          else if (i !== egress.length - 1) {
            report(
              ["egress", i],
              "sidecar: the egress listener with empty port should be the last listener in the list",
            )
          } else catchAll = true
          return
        }
        const n = eg.port.number ?? 0
        if (n === 0) {
          if (uds.has(eg.bind ?? ""))
            report(["egress", i, "bind"], "sidecar: unix domain socket values for listeners must be unique")
          uds.add(eg.bind ?? "")
        } else {
          if (egressPorts.has(n))
            report(["egress", i, "port", "number"], "sidecar: ports on IP bound listeners must be unique")
          egressPorts.add(n)
        }
      })
    }),
  )
export type SidecarSpec = typeof Sidecar.Type
