/**
 * The workload API's Address messages, one object at a time: a workload per pod with an address
 * (host-network pods excluded) and per WorkloadEntry with an IP, a service per orchestrator
 * Service or ServiceEntry, as the reference writes them:
 * - workload: uid `cluster/group/kind/namespace/name`, addresses, network, node, identity (trust
 *   domain, namespace, service account), waypoint (binding.ts), HEALTHY when ready, HBONE once
 *   the CNI redirected it (`ambient.mesh.io/redirection: enabled`), the services that select it
 *   with their ports (named target ports from the endpoints at its address), the
 *   selector-scoped policies that apply to it;
 * - service: VIPs (`network/ip`), ports, subject alt names and waypoint; name `namespace/hostname`.
 * Each is a function of the object, its namespace's scope and the endpoint lists it reads, which
 * the result names (`Built`), so that ambient-index.ts can tell when to build it again.
 */

import type { AmbientPod } from "../../ambient/input.js"
import { ipBytes } from "../../ambient/ip-bytes.js"
import type { ConfigResource } from "../../config-model/resource.js"
import type { WorkloadEntrySpec } from "../../config-model/schemas/workload-entry.js"
import { ApiGroups, Labels, MESH_DOMAIN } from "../../constants.js"
import { GATEWAY_NAME_LABEL } from "../../gateway-api/model.js"
import { bindWaypoint, describeProblem, type Meta, waypointKey } from "../../gateway-api/waypoints/binding.js"
import type { Endpoint, Service } from "../../registry/model.js"
import type { PortList, Workload_Address } from "../protocol/xds-types.js"
import type { AddressEntry, Built, Scope } from "./index-memo.js"

/** Set by the CNI once the pod's traffic goes to the node proxy. */
export const AMBIENT_REDIRECTION = `ambient.${MESH_DOMAIN}/redirection`
/** The node proxy reaches waypoints (and HBONE peers) on this port. */
export const HBONE_PORT = 15008

/** What a build offers every object: the endpoint lists by host and each list's ports by address. */
export interface Reads {
  readonly lists: ReadonlyMap<string, ReadonlyArray<Endpoint>>
  /** `port name/ip` → the endpoint's port, in one host's list. */
  readonly ports: (list: ReadonlyArray<Endpoint>) => ReadonlyMap<string, number>
}

/** The port map `Reads.ports` serves, built once per list. */
export const endpointPorts = (list: ReadonlyArray<Endpoint>): ReadonlyMap<string, number> => {
  const out = new Map<string, number>()
  for (const e of list) {
    const key = `${e.servicePortName}\u0000${e.address}`
    if (!out.has(key)) out.set(key, e.port)
  }
  return out
}

/** `service.mesh.io/canonical-name` (or the upstream key), `app.kubernetes.io/name`, `app`, else the workload name. */
const canonicalName = (labels: Readonly<Record<string, string>>, workloadName: string): string =>
  labels["service.mesh.io/canonical-name"] ??
  labels["service.istio.io/canonical-name"] ??
  labels["app.kubernetes.io/name"] ??
  labels.app ??
  workloadName

const canonicalRevision = (labels: Readonly<Record<string, string>>): string =>
  labels["service.mesh.io/canonical-revision"] ??
  labels["service.istio.io/canonical-revision"] ??
  labels["app.kubernetes.io/version"] ??
  labels.version ??
  "latest"

/** The Deployment of a ReplicaSet-owned pod (its name without the template hash), the Job, or the pod. */
const workloadNameOf = (pod: AmbientPod): string => {
  if (pod.owner?.kind === "ReplicaSet") {
    const hash = pod.labels["pod-template-hash"]
    if (hash !== undefined && pod.owner.name.endsWith(`-${hash}`)) return pod.owner.name.slice(0, -(hash.length + 1))
    const dash = pod.owner.name.lastIndexOf("-")
    return dash > 0 ? pod.owner.name.slice(0, dash) : pod.owner.name
  }
  return pod.owner?.name ?? pod.name
}

const selects = (selector: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>>) => {
  if (selector === undefined) return false
  const entries = Object.entries(selector)
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v)
}

const serviceName = (service: Service): string => {
  const source = service.source ?? ""
  const slash = source.lastIndexOf("/")
  return slash >= 0 ? source.slice(slash + 1) : (service.hostname.split(".")[0] ?? service.hostname)
}

/** The bound waypoint's key and address; a binding problem becomes a notice. */
const bind = (scope: Scope, target: "service" | "workload", meta: Meta, what: string, notices: Array<string>) => {
  const { waypoints } = scope.shared
  const binding = bindWaypoint(target, meta, scope.namespace, (key) => waypoints.get(key))
  if (binding.problem !== undefined) notices.push(`${what}: ${describeProblem(binding.problem)}`)
  if (binding.waypoint === undefined) return undefined
  const key = waypointKey(binding.waypoint.ref)
  const address = waypoints.get(key)?.address
  return address === undefined ? undefined : { key, address }
}

/** The selector-scoped policies a workload's labels match, and its waypoint's allow policy. */
const policiesFor = (
  scope: Scope,
  labels: Readonly<Record<string, string>>,
  waypoint: string | undefined,
): ReadonlyArray<string> => {
  const names = scope.policies
    .filter((p) => Object.entries(p.matchLabels).every(([k, v]) => labels[k] === v))
    .map((p) => p.key)
  const allow = waypoint === undefined ? undefined : scope.shared.waypointPolicies.get(waypoint)
  if (allow !== undefined) names.push(allow.key)
  return names.sort()
}

/** The services of the scope selecting a workload, with their ports, and the endpoint lists read. */
const servicesOf = (
  scope: Scope,
  reads: Reads,
  labels: Readonly<Record<string, string>>,
  ips: ReadonlyArray<string>,
  namedPorts: Readonly<Record<string, number>>,
) => {
  const services: Record<string, PortList> = {}
  const hosts: Array<string> = []
  const lists: Array<ReadonlyArray<Endpoint> | undefined> = []
  for (const s of scope.services) {
    if (!selects(s.selector, labels)) continue
    const list = reads.lists.get(s.hostname)
    hosts.push(s.hostname)
    lists.push(list)
    const ports = list === undefined ? undefined : reads.ports(list)
    services[`${s.namespace}/${s.hostname}`] = {
      ports: s.ports.map((p) => {
        const fromEndpoint = ips.map((ip) => ports?.get(`${p.name}\u0000${ip}`)).find((port) => port !== undefined)
        return { service_port: p.port, target_port: p.targetPort ?? fromEndpoint ?? namedPorts[p.name] ?? p.port }
      }),
    }
  }
  return { services, hosts, lists }
}

const trustDomainField = (scope: Scope) =>
  scope.shared.trustDomain === "cluster.local" ? {} : { trust_domain: scope.shared.trustDomain }

const built = (
  scope: Scope,
  entry: AddressEntry | undefined,
  notices: ReadonlyArray<string>,
  reads: { readonly hosts: ReadonlyArray<string>; readonly lists: ReadonlyArray<ReadonlyArray<Endpoint> | undefined> },
): Built => ({ scope, hosts: reads.hosts, lists: reads.lists, entry, notices })

const NONE: { readonly hosts: ReadonlyArray<string>; readonly lists: ReadonlyArray<undefined> } = {
  hosts: [],
  lists: [],
}

export const podAddress = (pod: AmbientPod, scope: Scope, reads: Reads): Built => {
  if (pod.hostNetwork || pod.addresses.length === 0) return built(scope, undefined, [], NONE)
  const addresses = pod.addresses.flatMap((ip) => {
    const bytes = ipBytes(ip)
    return bytes === undefined ? [] : [bytes]
  })
  if (addresses.length === 0) return built(scope, undefined, [], NONE)
  const { shared } = scope
  const network = pod.labels[Labels.network] ?? shared.clusterNetwork
  const uid = `${shared.clusterId}//Pod/${pod.namespace}/${pod.name}`
  const isWaypointPod = shared.waypoints.has(`${pod.namespace}/${pod.labels[GATEWAY_NAME_LABEL] ?? ""}`)
  const meta: Meta = { name: pod.name, namespace: pod.namespace, labels: pod.labels, annotations: pod.annotations }
  const notices: Array<string> = []
  // A waypoint's own pods never go through a waypoint.
  const waypoint = isWaypointPod
    ? undefined
    : bind(scope, "workload", meta, `pod ${pod.namespace}/${pod.name}`, notices)
  const workloadName = workloadNameOf(pod)
  const locality = pod.locality.split("/")
  const selected = servicesOf(scope, reads, pod.labels, pod.addresses, pod.namedPorts)
  const workload: Record<string, unknown> = {
    uid,
    name: pod.name,
    namespace: pod.namespace,
    addresses,
    network,
    ...(pod.annotations[AMBIENT_REDIRECTION] === "enabled" ? { tunnel_protocol: "HBONE" } : {}),
    ...trustDomainField(scope),
    service_account: pod.serviceAccount,
    ...(waypoint !== undefined ? { waypoint: waypoint.address } : {}),
    node: pod.node,
    canonical_name: canonicalName(pod.labels, workloadName),
    canonical_revision: canonicalRevision(pod.labels),
    workload_type: pod.owner?.kind === "Job" ? "JOB" : pod.owner === undefined ? "POD" : "DEPLOYMENT",
    workload_name: workloadName,
    services: selected.services,
    authorization_policies: policiesFor(scope, pod.labels, waypoint?.key),
    status: pod.ready ? "HEALTHY" : "UNHEALTHY",
    cluster_id: shared.clusterId,
    ...(pod.locality !== ""
      ? { locality: { region: locality[0] ?? "", zone: locality[1] ?? "", subzone: locality[2] ?? "" } }
      : {}),
  }
  const entry = { name: uid, message: { workload }, addresses: pod.addresses.map((ip) => `${network}/${ip}`) }
  return built(scope, entry, notices, selected)
}

export const workloadEntryAddress = (
  resource: ConfigResource<WorkloadEntrySpec>,
  scope: Scope,
  reads: Reads,
): Built => {
  const { spec, meta } = resource
  const ip = spec.address ?? ""
  const bytes = ipBytes(ip)
  if (bytes === undefined) return built(scope, undefined, [], NONE)
  const { shared } = scope
  const labels = spec.labels ?? {}
  const network = spec.network ?? shared.clusterNetwork
  const uid = `${shared.clusterId}/${ApiGroups.networking}/WorkloadEntry/${meta.namespace}/${meta.name}`
  const objectMeta: Meta = { name: meta.name, namespace: meta.namespace, labels, annotations: meta.annotations }
  const notices: Array<string> = []
  const waypoint = bind(scope, "workload", objectMeta, `WorkloadEntry ${meta.namespace}/${meta.name}`, notices)
  const selected = servicesOf(scope, reads, labels, [ip], {})
  const message: Workload_Address = {
    workload: {
      uid,
      name: meta.name,
      namespace: meta.namespace,
      addresses: [bytes],
      network,
      ...(meta.annotations[AMBIENT_REDIRECTION] === "enabled" ? { tunnel_protocol: "HBONE" } : {}),
      ...trustDomainField(scope),
      service_account: spec.serviceAccount ?? "default",
      ...(waypoint !== undefined ? { waypoint: waypoint.address } : {}),
      canonical_name: canonicalName(labels, meta.name),
      canonical_revision: canonicalRevision(labels),
      workload_type: "POD",
      workload_name: meta.name,
      services: selected.services,
      authorization_policies: policiesFor(scope, labels, waypoint?.key),
      status: "HEALTHY",
      cluster_id: shared.clusterId,
    },
  }
  return built(scope, { name: uid, message, addresses: [`${network}/${ip}`] }, notices, selected)
}

export const serviceAddress = (s: Service, scope: Scope): Built => {
  const network = scope.shared.clusterNetwork
  const meta: Meta = { name: serviceName(s), namespace: s.namespace, labels: s.labels }
  const notices: Array<string> = []
  const waypoint = bind(scope, "service", meta, `service ${s.namespace}/${s.hostname}`, notices)
  const vips = s.addresses.flatMap((ip) => {
    const address = ipBytes(ip)
    return address === undefined ? [] : [{ ip, address: { network, address } }]
  })
  const message: Workload_Address = {
    service: {
      name: meta.name,
      namespace: s.namespace,
      hostname: s.hostname,
      addresses: vips.map((v) => v.address),
      ports: s.ports.map((p) => ({ service_port: p.port, target_port: p.targetPort ?? 0 })),
      subject_alt_names: [...(s.serviceAccounts ?? [])],
      ...(waypoint !== undefined ? { waypoint: waypoint.address } : {}),
    },
  }
  const entry = { name: `${s.namespace}/${s.hostname}`, message, addresses: vips.map((v) => `${network}/${v.ip}`) }
  return built(scope, entry, notices, NONE)
}
