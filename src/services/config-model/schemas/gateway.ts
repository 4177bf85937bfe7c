/** networking.mesh.io Gateway: load balancers at the mesh edge. */
import { Schema } from "effect"
import {
  caseInsensitiveChoice,
  checked,
  Enum,
  isDns1123Label,
  isHttpProtocol,
  isIP,
  isTlsProtocol,
  opt,
  PROTOCOLS,
  parseProtocol,
  portProblem,
  type Report,
  StringList,
  StringMap,
  structuralKeywords,
  UNIX_PREFIX,
  unixAddressProblem,
  wildcardDomainProblem,
} from "./common.js"

export const TLS_VERSION = Enum("TLS_AUTO", "TLSV1_0", "TLSV1_1", "TLSV1_2", "TLSV1_3")

export const ServerTLSSettings = Schema.Struct({
  httpsRedirect: opt(Schema.Boolean),
  mode: opt(Enum("PASSTHROUGH", "SIMPLE", "MUTUAL", "AUTO_PASSTHROUGH", "ISTIO_MUTUAL", "OPTIONAL_MUTUAL")),
  serverCertificate: opt(Schema.String),
  privateKey: opt(Schema.String),
  caCertificates: opt(Schema.String),
  caCrl: opt(Schema.String),
  credentialName: opt(Schema.String),
  credentialNames: opt(StringList),
  tlsCertificates: opt(
    Schema.Array(
      Schema.Struct({
        serverCertificate: opt(Schema.String),
        privateKey: opt(Schema.String),
        caCertificates: opt(Schema.String),
      }),
    ),
  ),
  subjectAltNames: opt(StringList),
  verifyCertificateSpki: opt(StringList),
  verifyCertificateHash: opt(StringList),
  minProtocolVersion: opt(TLS_VERSION),
  maxProtocolVersion: opt(TLS_VERSION),
  cipherSuites: opt(StringList),
}).pipe(
  checked((tls, report) => {
    const mode = tls.mode ?? "PASSTHROUGH"
    const has = (v: string | undefined) => v !== undefined && v !== ""
    if (mode === "ISTIO_MUTUAL") {
      if (has(tls.serverCertificate))
        report(["serverCertificate"], "ISTIO_MUTUAL TLS cannot have associated server certificate")
      if (has(tls.privateKey)) report(["privateKey"], "ISTIO_MUTUAL TLS cannot have associated private key")
      if (has(tls.caCertificates)) report(["caCertificates"], "ISTIO_MUTUAL TLS cannot have associated CA bundle")
      if (has(tls.credentialName)) report(["credentialName"], "ISTIO_MUTUAL TLS cannot have associated credentialName")
      return
    }
    if (
      (mode === "SIMPLE" || mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL") &&
      (has(tls.credentialName) || (tls.credentialNames?.length ?? 0) > 0)
    ) {
      return
    }
    if (mode === "SIMPLE" && (tls.tlsCertificates?.length ?? 0) === 0) {
      if (!has(tls.serverCertificate)) report(["serverCertificate"], "SIMPLE TLS requires a server certificate")
      if (!has(tls.privateKey)) report(["privateKey"], "SIMPLE TLS requires a private key")
    } else if ((mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL") && (tls.tlsCertificates?.length ?? 0) === 0) {
      if (!has(tls.serverCertificate)) report(["serverCertificate"], "MUTUAL TLS requires a server certificate")
      if (!has(tls.privateKey)) report(["privateKey"], "MUTUAL TLS requires a private key")
      if (!has(tls.caCertificates)) report(["caCertificates"], "MUTUAL TLS requires a client CA bundle")
    }
    if (has(tls.caCrl)) {
      if (has(tls.credentialName)) {
        report(["caCrl"], "CRL is not supported with credentialName. CRL has to be specified in the credential")
      }
      if (mode === "SIMPLE") report(["caCrl"], "CRL is not supported with SIMPLE TLS")
    }
  }),
)
export type ServerTLSSettings = typeof ServerTLSSettings.Type

export const Port = Schema.Struct({
  // 0 only with a unix bind (checked by the server rule); the protocol in any letter case.
  number: opt(Schema.Number.annotations(structuralKeywords({ type: "integer", minimum: 0, maximum: 65535 }))),
  protocol: Schema.String.annotations(structuralKeywords({ pattern: caseInsensitiveChoice(PROTOCOLS, false) })),
  name: Schema.String,
  targetPort: opt(Schema.Number),
})

/** `namespace/host` entries (Gateway servers, Sidecar egress); gateways also accept bare hosts. */
export const namespacedHostProblem = (hostname: string, isGateway: boolean): string | undefined => {
  const slash = hostname.indexOf("/")
  if (slash < 0) {
    return isGateway ? wildcardDomainProblem(hostname) : "host must be of form namespace/dnsName"
  }
  const ns = hostname.slice(0, slash)
  const host = hostname.slice(slash + 1)
  if (ns === "" || host === "") return "config namespace and dnsName in host entry cannot be empty"
  // `~` (no namespace) in a gateway only where the Gateway API conversion wrote it for a listener
  // whose namespace selector matches nothing; `noNamespaceGatewayHostProblem` checks that.
  const special = ["*", ".", "~"]
  if (!special.includes(ns) && !isDns1123Label(ns)) {
    return `invalid namespace value "${ns}" in ${isGateway ? "gateway" : "sidecar"}`
  }
  return host === "*" ? undefined : wildcardDomainProblem(host)
}

export const bindProblem = (bind: string): string | undefined =>
  bind.startsWith(UNIX_PREFIX)
    ? unixAddressProblem(bind.slice(UNIX_PREFIX.length))
    : isIP(bind)
      ? undefined
      : `${bind} is not a valid IP`

const serverProblems = (server: typeof Server.Type, report: Report) => {
  if (server.hosts.length === 0) report(["hosts"], "server config must contain at least one host")
  server.hosts.forEach((host, i) => {
    const problem = namespacedHostProblem(host, true)
    if (problem !== undefined) report(["hosts", i], problem)
  })
  const port = server.port
  const bind = server.bind ?? ""
  let portOk = true
  if (parseProtocol(port.protocol) === undefined) {
    report(
      ["port", "protocol"],
      `invalid protocol "${port.protocol}", supported protocols are HTTP, HTTP2, GRPC, GRPC-WEB, MONGO, REDIS, MYSQL, TCP`,
    )
    portOk = false
  }
  if ((port.number ?? 0) > 0 || !bind.startsWith(UNIX_PREFIX)) {
    const problem = portProblem(port.number ?? 0)
    if (problem !== undefined) {
      report(["port", "number"], problem)
      portOk = false
    }
  }
  if ((port.targetPort ?? 0) > 0) report(["port", "targetPort"], "targetPort has no impact on Gateways")
  if (port.name === "") {
    report(["port", "name"], "port name must be set")
    portOk = false
  }
  if (bind.startsWith(UNIX_PREFIX) && (port.number ?? 0) !== 0) {
    report(["bind"], "port number must be 0 for unix domain socket")
  }
  if (bind !== "") {
    const problem = bindProblem(bind)
    if (problem !== undefined) report(["bind"], problem)
  }
  if (portOk) {
    const tlsPort = isTlsProtocol(port.protocol)
    if (tlsPort && server.tls === undefined) report(["tls"], "server must have TLS settings for HTTPS/TLS protocols")
    else if (!tlsPort && server.tls !== undefined) {
      if (isHttpProtocol(port.protocol)) {
        const t = server.tls
        const onlyRedirect =
          (t.mode === undefined || t.mode === "PASSTHROUGH") &&
          !t.caCertificates &&
          !t.privateKey &&
          !t.serverCertificate
        if (!onlyRedirect) report(["tls"], "server cannot have TLS settings for plain text HTTP ports")
      } else report(["tls"], "server cannot have TLS settings for non HTTPS/TLS ports")
    }
  }
}

export const Server = Schema.Struct({
  port: Port,
  bind: opt(Schema.String),
  // namespacedHostProblem: a host, or namespace/host, neither side empty.
  hosts: Schema.Array(Schema.String.annotations(structuralKeywords({ pattern: "^([^/]+/)?[^/]+$" }))).annotations(
    structuralKeywords({ minItems: 1 }),
  ),
  tls: opt(ServerTLSSettings),
  defaultEndpoint: opt(Schema.String),
  name: opt(Schema.String),
}).annotations(
  // serverProblems: an HTTPS or TLS port (any letter case) needs TLS settings.
  structuralKeywords({
    anyOf: [
      { required: ["tls"] },
      {
        properties: {
          port: { properties: { protocol: { not: { pattern: caseInsensitiveChoice(["HTTPS", "TLS"], false) } } } },
        },
      },
    ],
  }),
)

export const Gateway = Schema.Struct({
  servers: Schema.Array(Server.pipe(checked(serverProblems))).annotations(structuralKeywords({ minItems: 1 })),
  selector: opt(StringMap),
}).pipe(
  checked((gw, report) => {
    if (gw.servers.length === 0) report(["servers"], "gateway must have at least one server")
    const names = new Set<string>()
    gw.servers.forEach((server, i) => {
      if (names.has(server.port.name)) {
        report(
          ["servers", i, "port", "name"],
          `port names in servers must be unique: duplicate name ${server.port.name}`,
        )
      }
      names.add(server.port.name)
    })
  }),
)
export type GatewaySpec = typeof Gateway.Type

/** The Gateway's own name must be an RFC 1123 label (no dots). */
export const gatewayNameProblem = (name: string): string | undefined =>
  isDns1123Label(name) ? undefined : `invalid gateway name: "${name}"`

/** The annotation the Gateway API conversion puts on the Gateways it generates. */
export const GATEWAY_SEMANTICS_ANNOTATION = "internal.mesh.io/route-semantics"

/**
 * A `~/host` server host (routes from no namespace) is only for Gateways generated from the
 * Gateway API (annotated with `internal.mesh.io/route-semantics: gateway`).
 */
export const noNamespaceGatewayHostProblems = (
  spec: { readonly servers?: ReadonlyArray<{ readonly hosts: ReadonlyArray<string> }> },
  annotations: Readonly<Record<string, string>>,
  report: (path: string, message: string) => void,
): void => {
  if (annotations[GATEWAY_SEMANTICS_ANNOTATION] === "gateway") return
  for (const [i, server] of (spec.servers ?? []).entries())
    for (const [j, host] of server.hosts.entries())
      if (host.startsWith("~/")) report(`spec.servers[${i}].hosts[${j}]`, 'invalid namespace value "~" in gateway')
}
