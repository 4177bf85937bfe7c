/**
 * Service and Deployment analyzers: port naming (MSH0118, MSH0150; the mesh's own and managed
 * gateway Services skipped) and how mesh Deployments (waypoints and Deployments outside the
 * mesh skipped) map to Services (MSH0116, MSH0137). Services are matched per namespace. The
 * reference retired MSH0117 (a Deployment without a Service): it is not reported.
 */
import { DeploymentLabels, MANAGED_BY } from "../../gateway-api/deployment/names.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  groupBy,
  type Message,
  message,
  num,
  rec,
  type Snapshot,
  selects,
  str,
  stringMap,
  workloadLabels,
} from "../snapshot.js"
import { SYSTEM_NAMESPACES } from "../system-namespaces.js"
import { isControlPlane } from "./application-uid.js"
import { deploymentInMesh, namespaceInjection } from "./in-mesh.js"

/** The protocols a port name prefix (`http-web`, `grpc`) or appProtocol may declare. */
const PROTOCOLS = new Set([
  "http",
  "http2",
  "https",
  "grpc",
  "grpc-web",
  "mongo",
  "mysql",
  "redis",
  "tcp",
  "tls",
  "udp",
  "h2c",
  "ws",
  "wss",
])

/** The protocol a Service port declares, or undefined when neither name nor appProtocol does. */
export const portProtocol = (port: Readonly<Record<string, unknown>>): string | undefined => {
  const app = str(port.appProtocol).toLowerCase()
  if (PROTOCOLS.has(app)) return app
  const name = str(port.name).toLowerCase()
  const prefix = name.split("-")[0] ?? ""
  if (PROTOCOLS.has(prefix) && (name === prefix || name.startsWith(`${prefix}-`))) return prefix
  return str(port.protocol).toUpperCase() === "UDP" ? "udp" : undefined
}

const portsOf = (service: Entry) => arr(rec(service.body.spec).ports).map(rec)

/**
 * Services whose ports are not the user's to name: the mesh installation's own (labelled
 * `mesh`, or `release: mesh`) and those the gateway deployment controller manages.
 */
const notUsers = (service: Entry): boolean =>
  SYSTEM_NAMESPACES.has(service.namespace) ||
  isControlPlane(service) ||
  Object.values(MANAGED_BY).includes(service.labels[DeploymentLabels.managed] ?? "")

const portNames = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const service of snapshot.ofKind("Service", "")) {
    if (notUsers(service) || str(rec(service.body.spec).type) === "ExternalName") continue
    portsOf(service).forEach((port, i) => {
      if (portProtocol(port) !== undefined) return
      const target = port.targetPort === undefined ? String(num(port.port) ?? "") : String(port.targetPort)
      out.push(
        message(
          MessageTypes.PortNameIsNotUnderNamingConvention,
          service,
          `Port name ${str(port.name)} (port: ${num(port.port)}, targetPort: ${target}) doesn't follow the naming convention of the mesh's ports.`,
          ["spec", "ports", i, "name"],
        ),
      )
    })
  }
  return out
}

const externalNamePorts = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const service of snapshot.ofKind("Service", "")) {
    if (notUsers(service) || str(rec(service.body.spec).type) !== "ExternalName") continue
    portsOf(service).forEach((port, i) => {
      // A port named exactly `tcp` (not `tcp-...`) is as bad as one declaring no protocol.
      if (portProtocol(port) !== undefined && str(port.name) !== "tcp") return
      out.push(
        message(
          MessageTypes.ExternalNameServiceTypeInvalidPortName,
          service,
          "Port name for ExternalName service is invalid. Proxy may prevent tcp named ports and unmatched traffic for ports serving TCP protocol from being forwarded correctly",
          ["spec", "ports", i, "name"],
        ),
      )
    })
  }
  return out
}

/** Waypoint deployments are the mesh's own proxies: their Services are not the user's to fix. */
const isWaypoint = (deployment: Entry): boolean => deployment.labels[DeploymentLabels.managed] === MANAGED_BY.waypoint

/**
 * The mesh Deployments (not waypoints) and the Services of their namespace selecting their pod
 * template (a Service without a selector selects nothing).
 */
const deploymentServices = (
  snapshot: Snapshot,
): ReadonlyArray<{ deployment: Entry; services: ReadonlyArray<Entry> }> => {
  const injection = namespaceInjection(snapshot)
  // Each Service's selector is read once, not once per Deployment of its namespace.
  const byNamespace = groupBy(
    snapshot.ofKind("Service", "").flatMap((service) => {
      const selector = stringMap(rec(service.body.spec).selector)
      return Object.keys(selector).length === 0 ? [] : [{ service, selector }]
    }),
    (s) => s.service.namespace,
  )
  return snapshot
    .ofKind("Deployment", "apps")
    .filter((d) => !isWaypoint(d) && deploymentInMesh(d, injection))
    .map((deployment) => {
      const labels = workloadLabels(deployment)
      const services = (byNamespace.get(deployment.namespace) ?? []).flatMap((s) =>
        selects(s.selector, labels) ? [s.service] : [],
      )
      return { deployment, services }
    })
}

type DeploymentServices = ReturnType<typeof deploymentServices>

const serviceName = (s: Entry) => `${s.namespace}/${s.name}`

/** One port number served with different transport protocols (TCP when unset) by the Services of a Deployment (MSH0116). */
const multipleServices = (associations: DeploymentServices): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const { deployment, services } of associations) {
    const byPort = new Map<number, Map<string, Array<string>>>()
    for (const s of services)
      for (const p of portsOf(s)) {
        const port = num(p.port) ?? 0
        const protocol = str(p.protocol) || "TCP"
        const protocols = byPort.get(port) ?? new Map<string, Array<string>>()
        byPort.set(port, protocols)
        protocols.set(protocol, [...(protocols.get(protocol) ?? []), serviceName(s)])
      }
    for (const [port, protocols] of byPort) {
      if (protocols.size < 2) continue
      const names = [...protocols.values()].flat().sort()
      out.push(
        message(
          MessageTypes.DeploymentAssociatedToMultipleServices,
          deployment,
          `This deployment ${deployment.name} is associated with multiple services using port ${port} but different protocols: [${names.join(" ")}]`,
          ["metadata", "name"],
        ),
      )
    }
  }
  return out
}

/** One target port (the port when unset) reached through different Service ports (MSH0137). */
const conflictingPorts = (associations: DeploymentServices): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const { deployment, services } of associations) {
    const byTarget = new Map<string, Map<number, string>>()
    for (const s of services)
      for (const p of portsOf(s)) {
        const port = num(p.port) ?? 0
        const written = p.targetPort === undefined || p.targetPort === null ? "" : String(p.targetPort)
        const target = written === "" || written === "0" ? String(port) : written
        const ports = byTarget.get(target) ?? new Map<number, string>()
        byTarget.set(target, ports)
        ports.set(port, serviceName(s))
      }
    for (const [target, ports] of byTarget) {
      if (ports.size < 2) continue
      const names = [...ports.values()].sort()
      const numbers = [...ports.keys()].sort((x, y) => x - y)
      out.push(
        message(
          MessageTypes.DeploymentConflictingPorts,
          deployment,
          `This deployment ${deployment.name} is associated with multiple services [${names.join(" ")}] using targetPort ${JSON.stringify(target)} but different ports: [${numbers.join(" ")}].`,
          ["metadata", "name"],
        ),
      )
    }
  }
  return out
}

const multipleServicesAnalyzer: Analyzer = {
  name: "deployment.MultipleServicesAnalyzer",
  description: "Checks a deployment is not associated with several services using one port with different protocols",
  types: [MessageTypes.DeploymentAssociatedToMultipleServices],
  run: (snapshot) => multipleServices(deploymentServices(snapshot)),
}

const conflictingPortsAnalyzer: Analyzer = {
  name: "deployment.ConflictingPortsAnalyzer",
  description: "Checks services of one deployment do not reach one target port through different ports",
  types: [MessageTypes.DeploymentConflictingPorts],
  run: (snapshot) => conflictingPorts(deploymentServices(snapshot)),
}

/** The reference's `deployment.MultiServiceAnalyzer`: both halves over one association pass. */
const deploymentAnalyzer: Analyzer = {
  name: "deployment.MultiServiceAnalyzer",
  description:
    "Checks the ports of the services associated with each mesh deployment (MSH0116 and MSH0137; the reference retired MSH0117)",
  types: [MessageTypes.DeploymentAssociatedToMultipleServices, MessageTypes.DeploymentConflictingPorts],
  run: (snapshot) => {
    const associations = deploymentServices(snapshot)
    return [...multipleServices(associations), ...conflictingPorts(associations)]
  },
  parts: [multipleServicesAnalyzer, conflictingPortsAnalyzer],
}

export const serviceAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "service.PortNameConventionAnalyzer",
    description: "Checks the port names associated with each service",
    types: [MessageTypes.PortNameIsNotUnderNamingConvention],
    run: portNames,
  },
  {
    name: "service.ExternalNameServiceTypeAnalyzer",
    description: "Checks the port names of ExternalName services",
    types: [MessageTypes.ExternalNameServiceTypeInvalidPortName],
    run: externalNamePorts,
  },
  deploymentAnalyzer,
]
