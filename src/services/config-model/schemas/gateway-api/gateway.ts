/**
 * gateway.networking.k8s.io Gateway (the mesh's kind `KubernetesGateway`, so it does not clash
 * with networking.mesh.io Gateway): listeners, their TLS and the routes they accept.
 */
import { Schema } from "effect"
import { checked, Enum, isIP, labelKeyProblem, labelValueProblem, opt, type Report } from "../common.js"
import {
  AddressType,
  annotationValueProblem,
  boundedMap,
  Group,
  Hostname,
  hostnameProblem,
  Kind,
  listOf,
  ObjectName,
  Port,
  ProtocolType,
  SectionName,
} from "./names.js"
import { LabelSelector, RouteGroupKind, SecretObjectReference } from "./references.js"

const MAX_LISTENERS = 64
const MAX_ADDRESSES = 16
const MAX_CERTIFICATE_REFS = 64
const MAX_CA_CERTIFICATE_REFS = 8
const MAX_TLS_OPTIONS = 16
const MAX_ROUTE_KINDS = 8
const MAX_INFRASTRUCTURE_ENTRIES = 8

export const GatewayTLSConfig = Schema.Struct({
  mode: opt(Enum("Terminate", "Passthrough")),
  certificateRefs: opt(listOf(SecretObjectReference, { max: MAX_CERTIFICATE_REFS })),
  options: opt(boundedMap(MAX_TLS_OPTIONS, labelKeyProblem, annotationValueProblem)),
  frontendValidation: opt(
    Schema.Struct({
      caCertificateRefs: opt(listOf(SecretObjectReference, { min: 1, max: MAX_CA_CERTIFICATE_REFS })),
    }),
  ),
}).pipe(
  checked((tls, report) => {
    // Terminate is the default mode: it needs a certificate (or implementation options naming one).
    const terminate = (tls.mode ?? "Terminate") === "Terminate"
    if (terminate && (tls.certificateRefs?.length ?? 0) === 0 && Object.keys(tls.options ?? {}).length === 0) {
      report(["certificateRefs"], "certificateRefs or options must be set when mode is Terminate")
    }
  }),
)

export const AllowedRoutes = Schema.Struct({
  namespaces: opt(Schema.Struct({ from: opt(Enum("All", "Same", "Selector")), selector: opt(LabelSelector) })),
  kinds: opt(listOf(RouteGroupKind, { max: MAX_ROUTE_KINDS })),
})

/** The CEL rules of a listener (a Gateway's, or a ListenerSet's entry). */
export const listenerFieldProblems = (
  listener: {
    readonly protocol: string
    readonly hostname?: string | undefined
    readonly tls?: { readonly mode?: string | undefined } | undefined
  },
  report: Report,
) => {
  const protocol = listener.protocol
  if ((protocol === "HTTP" || protocol === "TCP" || protocol === "UDP") && listener.tls !== undefined) {
    report(["tls"], `tls must not be set for protocol ${protocol}`)
  }
  if ((protocol === "TCP" || protocol === "UDP") && listener.hostname !== undefined) {
    report(["hostname"], `hostname must not be set for protocol ${protocol}`)
  }
  if (protocol === "HTTPS" && listener.tls?.mode === "Passthrough") {
    report(["tls", "mode"], "tls mode must be Terminate for protocol HTTPS")
  }
}

const Listener = Schema.Struct({
  name: SectionName,
  hostname: opt(Hostname),
  port: Port,
  protocol: ProtocolType,
  tls: opt(GatewayTLSConfig),
  allowedRoutes: opt(AllowedRoutes),
}).pipe(checked(listenerFieldProblems))
type Listener = typeof Listener.Type

/** Listener names are unique, and so is each (port, protocol, hostname). */
const listenersProblems = (listeners: ReadonlyArray<Listener>, report: Report) => {
  const names = new Set<string>()
  const bindings = new Set<string>()
  listeners.forEach((listener, i) => {
    if (names.has(listener.name)) report([i, "name"], `duplicate listener name "${listener.name}"`)
    names.add(listener.name)
    const binding = `${listener.port}/${listener.protocol}/${listener.hostname ?? ""}`
    if (bindings.has(binding)) {
      report(
        [i],
        `another listener has the same port ${listener.port}, protocol ${listener.protocol} and hostname ${listener.hostname ?? "(none)"}`,
      )
    }
    bindings.add(binding)
  })
}

const GatewayAddress = Schema.Struct({
  type: opt(AddressType),
  value: Schema.String.pipe(
    Schema.filter((v) =>
      v.length === 0 ? "value must not be empty" : v.length > 253 ? "value must be at most 253 characters" : undefined,
    ),
  ),
}).pipe(
  checked((address, report) => {
    const type = address.type ?? "IPAddress"
    if (type === "IPAddress" && !isIP(address.value)) {
      report(["value"], `"${address.value}" is not an IP address`)
    } else if (type === "Hostname") {
      const problem = hostnameProblem(address.value)
      if (problem !== undefined) report(["value"], problem)
    }
  }),
)

const addressesProblems = (addresses: ReadonlyArray<typeof GatewayAddress.Type>, report: Report) => {
  const seen = new Set<string>()
  addresses.forEach((address, i) => {
    const type = address.type ?? "IPAddress"
    if (type !== "IPAddress" && type !== "Hostname") return
    const key = `${type}/${address.value}`
    if (seen.has(key)) report([i, "value"], `duplicate ${type} address "${address.value}"`)
    seen.add(key)
  })
}

export const KubernetesGateway = Schema.Struct({
  gatewayClassName: ObjectName,
  // The CRD asks for one listener, but the reference serves a Gateway with none (its listeners
  // may come from ListenerSets): accepted, with nothing to serve and routes not attached.
  listeners: listOf(Listener, { max: MAX_LISTENERS }).pipe(checked(listenersProblems)),
  addresses: opt(listOf(GatewayAddress, { max: MAX_ADDRESSES }).pipe(checked(addressesProblems))),
  // Which namespaces' ListenerSets may attach listeners (none when not set).
  allowedListeners: opt(
    Schema.Struct({
      namespaces: opt(
        Schema.Struct({ from: opt(Enum("All", "Same", "Selector", "None")), selector: opt(LabelSelector) }),
      ),
    }),
  ),
  infrastructure: opt(
    Schema.Struct({
      labels: opt(boundedMap(MAX_INFRASTRUCTURE_ENTRIES, labelKeyProblem, labelValueProblem)),
      annotations: opt(boundedMap(MAX_INFRASTRUCTURE_ENTRIES, labelKeyProblem, annotationValueProblem)),
      // Checked by the conversion (only a ConfigMap of the Gateway's namespace is read: InvalidParameters).
      parametersRef: opt(Schema.Struct({ group: Group, kind: Kind, name: ObjectName })),
    }),
  ),
})
