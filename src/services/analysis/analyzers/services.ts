/**
 * Service and Deployment analyzers: port naming (MSH0118, MSH0150) and how Deployments map to
 * Services (MSH0116, MSH0117, MSH0137). Services are matched per namespace.
 */
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

const SYSTEM_NAMESPACES = new Set(["kube-system", "kube-public", "kube-node-lease", "local-path-storage"])

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

const portNames = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const service of snapshot.ofKind("Service", "")) {
    if (SYSTEM_NAMESPACES.has(service.namespace) || str(rec(service.body.spec).type) === "ExternalName") continue
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
    if (str(rec(service.body.spec).type) !== "ExternalName") continue
    portsOf(service).forEach((port, i) => {
      const protocol = portProtocol(port)
      if (protocol !== undefined && protocol !== "tcp") return
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

/** The Services of its namespace that select each Deployment's pods. */
const deploymentServices = (
  snapshot: Snapshot,
): ReadonlyArray<{ deployment: Entry; services: ReadonlyArray<Entry> }> => {
  const byNamespace = groupBy(
    snapshot.ofKind("Service", "").filter((s) => Object.keys(stringMap(rec(s.body.spec).selector)).length > 0),
    (s) => s.namespace,
  )
  return snapshot.ofKind("Deployment", "apps").map((deployment) => {
    const labels = workloadLabels(deployment)
    const services = (byNamespace.get(deployment.namespace) ?? []).filter((s) =>
      selects(stringMap(rec(s.body.spec).selector), labels),
    )
    return { deployment, services }
  })
}

const multipleServices = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const { deployment, services } of deploymentServices(snapshot)) {
    if (services.length < 2) continue
    const byPort = groupBy(
      services.flatMap((s) =>
        portsOf(s).map((p) => ({ s, port: num(p.port) ?? 0, protocol: portProtocol(p) ?? "tcp" })),
      ),
      (x) => String(x.port),
    )
    for (const [port, list] of byPort) {
      if (new Set(list.map((x) => x.protocol)).size < 2) continue
      const names = [...new Set(list.map((x) => x.s.name))].join(", ")
      out.push(
        message(
          MessageTypes.DeploymentAssociatedToMultipleServices,
          deployment,
          `This deployment ${deployment.name} is associated with multiple services using port ${port} but different protocols: [${names}]`,
        ),
      )
    }
  }
  return out
}

const requiresService = (snapshot: Snapshot): ReadonlyArray<Message> =>
  deploymentServices(snapshot)
    .filter(({ deployment, services }) => services.length === 0 && !SYSTEM_NAMESPACES.has(deployment.namespace))
    .map(({ deployment }) =>
      message(
        MessageTypes.DeploymentRequiresServiceAssociated,
        deployment,
        "No service associated with this deployment. Service mesh deployments must be associated with a service.",
      ),
    )

const conflictingPorts = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const { deployment, services } of deploymentServices(snapshot)) {
    if (services.length < 2) continue
    const byPort = groupBy(
      services.flatMap((s) =>
        portsOf(s).map((p) => ({ s, port: num(p.port) ?? 0, target: String(p.targetPort ?? p.port) })),
      ),
      (x) => String(x.port),
    )
    for (const [port, list] of byPort) {
      const targets = [...new Set(list.map((x) => x.target))]
      if (targets.length < 2) continue
      out.push(
        message(
          MessageTypes.DeploymentConflictingPorts,
          deployment,
          `${list.map((x) => x.s.name).join(" and ")} are conflicting port definitions for port ${port} targeting ${targets.join(", ")}`,
        ),
      )
    }
  }
  return out
}

export const serviceAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "service.PortNameAnalyzer",
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
  {
    name: "deployment.MultiServiceAnalyzer",
    description: "Checks a deployment is not associated with several services using one port with different protocols",
    types: [MessageTypes.DeploymentAssociatedToMultipleServices],
    run: multipleServices,
  },
  {
    name: "deployment.ServiceAssociationAnalyzer",
    description: "Checks every deployment is associated with a service",
    types: [MessageTypes.DeploymentRequiresServiceAssociated],
    run: requiresService,
  },
  {
    name: "deployment.ConflictingPortsAnalyzer",
    description: "Checks services targeting one deployment agree on each port's target",
    types: [MessageTypes.DeploymentConflictingPorts],
    run: conflictingPorts,
  },
]
