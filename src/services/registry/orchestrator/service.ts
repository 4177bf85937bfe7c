/**
 * Orchestrator Service → registry Service, the reference's conversion rules:
 * - hostname `<name>.<namespace>.svc.<domain>`; addresses from `clusterIPs` (else `clusterIP`);
 * - headless (`clusterIP: None`): no address, resolution NONE (passthrough to the pod addresses);
 * - `type: ExternalName`: resolution DNS, location MESH_EXTERNAL, one endpoint per port whose
 *   address is the external name (see externalNameEndpoints);
 * - port protocol: UDP when the port is UDP; else `appProtocol`, else the port name (`http`,
 *   `http-web`, `grpc-web-x`, ...); unknown names stay UNSUPPORTED (detected per connection),
 *   except on the well-known ports 25, 53, 3306 and 27017, which are TCP;
 * - exportTo from the `networking.mesh.io/exportTo` annotation (comma separated; the upstream
 *   `networking.istio.io/exportTo` is read too); identities from the `alpha.mesh.io/*-serviceaccounts`
 *   annotations.
 */

import { MESH_DOMAIN, spiffeId } from "../../constants.js"
import type { OrchService, ServicePortSpec } from "../../orchestrator/objects.js"
import { type Endpoint, type Protocol, parseProtocol, type Service, type ServicePort } from "../model.js"

export const ORCHESTRATOR_REGISTRY = "Orchestrator"

export const ServiceAnnotations = {
  exportTo: [`networking.${MESH_DOMAIN}/exportTo`, "networking.istio.io/exportTo"],
  canonicalServiceAccounts: [
    `alpha.${MESH_DOMAIN}/canonical-serviceaccounts`,
    "alpha.istio.io/canonical-serviceaccounts",
  ],
  orchestratorServiceAccounts: [
    `alpha.${MESH_DOMAIN}/kubernetes-serviceaccounts`,
    "alpha.istio.io/kubernetes-serviceaccounts",
  ],
} as const

/** Ports whose unnamed protocol is TCP rather than detected (sniffing would break them). */
const WELL_KNOWN_TCP_PORTS = new Set([25, 53, 3306, 27017])

/** The standard `appProtocol` values the orchestrator defines. */
const STANDARD_APP_PROTOCOLS: ReadonlyMap<string, Protocol> = new Map([
  ["kubernetes.io/h2c", "HTTP2"],
  ["kubernetes.io/ws", "HTTP"],
  ["kubernetes.io/wss", "HTTPS"],
])

/** The protocol of a service port, from its transport protocol, `appProtocol` and name. */
export const convertProtocol = (
  port: number,
  name: string | undefined,
  transport: string | undefined,
  appProtocol: string | undefined,
): Protocol => {
  if (transport === "UDP") return "UDP"
  let label = name ?? ""
  if (appProtocol !== undefined && appProtocol !== "") {
    const standard = STANDARD_APP_PROTOCOLS.get(appProtocol)
    if (standard !== undefined) return standard
    label = appProtocol
  }
  // `grpc-web` contains the separator, so it is matched before the prefix is cut.
  if (label.toLowerCase().startsWith("grpc-web")) return "GRPC-Web"
  const dash = label.indexOf("-")
  const parsed = parseProtocol(dash >= 0 ? label.slice(0, dash) : label)
  return parsed === "UNSUPPORTED" && WELL_KNOWN_TCP_PORTS.has(port) ? "TCP" : parsed
}

export const serviceHostname = (name: string, namespace: string, domain: string): string =>
  `${name}.${namespace}.svc.${domain}`

const annotation = (
  annotations: Readonly<Record<string, string>> | undefined,
  names: ReadonlyArray<string>,
): string | undefined => {
  for (const n of names) {
    const v = annotations?.[n]
    if (v !== undefined && v !== "") return v
  }
  return undefined
}

const splitList = (value: string | undefined): ReadonlyArray<string> =>
  value === undefined
    ? []
    : value
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")

const isPortNumber = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0 && n < 65536

export interface ServiceConversionOptions {
  readonly clusterId: string
  /** `--domain`, e.g. `cluster.local`. */
  readonly domain: string
  /** Mesh trust domain, for the identities named by annotation. */
  readonly trustDomain: string
}

export interface ConvertedService {
  readonly service: Service
  /** Named target ports (`targetPort: "http"`), by service port name. */
  readonly namedTargetPorts: ReadonlyMap<string, string>
  /** `spec.externalName` of an ExternalName service. */
  readonly externalName?: string
  /** Fields that were skipped, each a sentence naming the field. */
  readonly problems: ReadonlyArray<string>
}

/**
 * Converts one Service; `undefined` with a problem when the object cannot be a service at all
 * (no name or namespace). Bad ports are skipped and reported, the rest of the service stays.
 */
/** A LoadBalancer's ingress addresses (IP, else host name: never resolved here), then `spec.externalIPs`. */
const externalAddressesOf = (svc: OrchService): ReadonlyArray<string> => {
  const strings = (values: unknown): ReadonlyArray<string> =>
    Array.isArray(values) ? values.filter((v): v is string => typeof v === "string" && v !== "") : []
  const ingress =
    svc.spec?.type === "LoadBalancer" && Array.isArray(svc.status?.loadBalancer?.ingress)
      ? svc.status.loadBalancer.ingress.flatMap((i) =>
          typeof i?.ip === "string" && i.ip !== ""
            ? [i.ip]
            : typeof i?.hostname === "string" && i.hostname !== ""
              ? [i.hostname]
              : [],
        )
      : []
  return [...new Set([...ingress, ...strings(svc.spec?.externalIPs)])]
}

export const convertService = (
  svc: OrchService,
  options: ServiceConversionOptions,
): ConvertedService | { readonly problem: string } => {
  const meta = svc.metadata as Partial<OrchService["metadata"]> | undefined
  const name = meta?.name
  const namespace = meta?.namespace
  if (typeof name !== "string" || name === "" || typeof namespace !== "string" || namespace === "") {
    return { problem: "metadata.name and metadata.namespace are required" }
  }
  const spec = svc.spec ?? {}
  const problems: Array<string> = []
  const ports: Array<ServicePort> = []
  const namedTargetPorts = new Map<string, string>()
  const rawPorts: ReadonlyArray<ServicePortSpec> = Array.isArray(spec.ports) ? spec.ports : []
  if (spec.ports !== undefined && !Array.isArray(spec.ports)) problems.push("spec.ports is not a list")
  rawPorts.forEach((p, i) => {
    if (p === null || typeof p !== "object" || !isPortNumber(p.port)) {
      problems.push(`spec.ports[${i}].port is not a port number`)
      return
    }
    const portName = typeof p.name === "string" ? p.name : ""
    if (ports.some((q) => q.name === portName)) {
      problems.push(`spec.ports[${i}].name "${portName}" is used twice`)
      return
    }
    const target = p.targetPort
    if (typeof target === "string" && target !== "") namedTargetPorts.set(portName, target)
    ports.push({
      name: portName,
      port: p.port,
      protocol: convertProtocol(p.port, portName, p.protocol, p.appProtocol),
      ...(isPortNumber(target) && target !== p.port ? { targetPort: target } : {}),
    })
  })

  const externalName =
    spec.type === "ExternalName" && typeof spec.externalName === "string" && spec.externalName !== ""
      ? spec.externalName
      : undefined
  const headless = spec.clusterIP === "None"
  const addresses = headless
    ? []
    : Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0
      ? spec.clusterIPs.filter((ip) => typeof ip === "string" && ip !== "" && ip !== "None")
      : typeof spec.clusterIP === "string" && spec.clusterIP !== ""
        ? [spec.clusterIP]
        : []
  const annotations = meta?.annotations
  const serviceAccounts = [
    ...splitList(annotation(annotations, ServiceAnnotations.canonicalServiceAccounts)),
    ...splitList(annotation(annotations, ServiceAnnotations.orchestratorServiceAccounts)).map((sa) =>
      spiffeId(options.trustDomain, namespace, sa),
    ),
  ]
  const selector = spec.selector !== undefined && spec.selector !== null ? spec.selector : undefined
  const externalAddresses = externalAddressesOf(svc)
  const service: Service = {
    hostname: serviceHostname(name, namespace, options.domain),
    namespace,
    ports,
    addresses,
    autoAllocatedAddresses: [],
    resolution: externalName !== undefined ? "DNS" : headless ? "NONE" : "STATIC",
    location: externalName !== undefined ? "MESH_EXTERNAL" : "MESH_INTERNAL",
    exportTo: splitList(annotation(annotations, ServiceAnnotations.exportTo)),
    labels: meta?.labels ?? {},
    registry: ORCHESTRATOR_REGISTRY,
    clusterId: options.clusterId,
    ...(serviceAccounts.length > 0 ? { serviceAccounts } : {}),
    ...(selector !== undefined ? { selector } : {}),
    source: `Service/${namespace}/${name}`,
    ...(typeof meta?.creationTimestamp === "string" ? { creationTimestamp: meta.creationTimestamp } : {}),
    ...(spec.type === "LoadBalancer" ? { serviceType: spec.type } : {}),
    ...(externalAddresses.length > 0 ? { externalAddresses } : {}),
  }
  return { service, namedTargetPorts, ...(externalName !== undefined ? { externalName } : {}), problems }
}

/** The endpoints of an ExternalName service: the external name on every port. */
export const externalNameEndpoints = (
  service: Service,
  externalName: string,
  clusterId: string,
): ReadonlyArray<Endpoint> =>
  service.ports.map((port) => ({
    hostname: service.hostname,
    namespace: service.namespace,
    servicePortName: port.name,
    address: externalName,
    port: port.port,
    labels: {},
    serviceAccount: "",
    locality: "",
    network: "",
    weight: 1,
    healthStatus: "HEALTHY",
    clusterId,
  }))
