/**
 * The ambient index: what the node proxy's workload API serves, built once per push from the
 * PushContext's services and endpoints and the ambient input (pods, namespaces, waypoints,
 * WorkloadEntries, AuthorizationPolicies), as the reference indexes them:
 * - a workload per pod with an address (host-network pods excluded) and per WorkloadEntry with an
 *   IP, uid `cluster/group/kind/namespace/name`: addresses, network, node, identity (trust domain,
 *   namespace, service account), waypoint (binding.ts), HEALTHY when ready, HBONE once the CNI
 *   redirected it (`ambient.mesh.io/redirection: enabled`), the services that select it with
 *   their ports, the selector-scoped policies that apply to it;
 * - a service per orchestrator Service and ServiceEntry with VIPs (`network/ip`), ports, subject
 *   alt names and waypoint; resource name `namespace/hostname`;
 * - the L4 authorizations (authorization.ts), and per waypoint with known pods its allow policy.
 * Every message is built here once per push; the cache encodes it once per distinct content.
 */
import { createHash } from "node:crypto"
import type { ConfigResource } from "../config-model/resource.js"
import type { AuthorizationPolicySpec } from "../config-model/schemas/authorization-policy.js"
import type { KubernetesGatewaySpec } from "../config-model/schemas/gateway-api/types.js"
import { ApiGroups, Labels, MESH_DOMAIN } from "../constants.js"
import { objectNames } from "../gateway-api/deployment/names.js"
import { GATEWAY_NAME_LABEL } from "../gateway-api/model.js"
import type { Endpoint, Service } from "../registry/model.js"
import {
  bindWaypoint,
  describeProblem,
  type Meta,
  type WaypointInfo,
  waypointAttachment,
  waypointKey,
  waypointTrafficType,
} from "../waypoints/binding.js"
import { WAYPOINT_CLASS } from "../waypoints/names.js"
import type { ProtoObject } from "../xds/cache/resource-spec.js"
import { type L4Authorization, translatePolicy, waypointAllowPolicy } from "./authorization.js"
import type { AmbientInput, AmbientPod } from "./input.js"
import { ipBytes } from "./ip-bytes.js"

/** Set by the CNI once the pod's traffic goes to the node proxy. */
export const AMBIENT_REDIRECTION = `ambient.${MESH_DOMAIN}/redirection`
/** The node proxy reaches waypoints (and HBONE peers) on this port. */
export const HBONE_PORT = 15008

export interface AddressEntry {
  /** The resource name: a workload's uid or a service's `namespace/hostname`. */
  readonly name: string
  /** Digest of the message: what the encoded bytes depend on. */
  readonly key: string
  /** An `Address` (`{ workload }` or `{ service }`). */
  readonly message: ProtoObject
  /** `network/ip` of each address, for on-demand requests. */
  readonly addresses: ReadonlyArray<string>
}

export interface AuthorizationEntry {
  readonly name: string
  readonly key: string
  readonly message: ProtoObject
}

export interface AmbientIndex {
  /** Sorted by name. */
  readonly addresses: ReadonlyArray<AddressEntry>
  readonly byName: ReadonlyMap<string, AddressEntry>
  /** `network/ip` → the entries with that address. */
  readonly byAddress: ReadonlyMap<string, ReadonlyArray<AddressEntry>>
  /** Sorted by name. */
  readonly authorizations: ReadonlyArray<AuthorizationEntry>
  /** Policies the node proxy does not (fully) enforce, waypoints not usable, ... */
  readonly notices: ReadonlyArray<string>
}

export interface IndexSources {
  readonly ambient: AmbientInput
  readonly services: ReadonlyArray<Service>
  readonly endpoints: ReadonlyArray<Endpoint>
  readonly authorizationPolicies: ReadonlyArray<ConfigResource<AuthorizationPolicySpec>>
  readonly trustDomain: string
  readonly domainSuffix: string
  readonly rootNamespace: string
}

/** JSON of a message with bytes as hex, for its digest. */
const keyOf = (message: ProtoObject): string =>
  createHash("sha1")
    .update(JSON.stringify(message, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v)))
    .digest("base64url")
    .slice(0, 16)

const networkAddress = (network: string, ip: string): ProtoObject | undefined => {
  const address = ipBytes(ip)
  return address === undefined ? undefined : { network, address }
}

/** A ready waypoint: a Gateway of class `mesh-waypoint`, reached at its Service's host name. */
interface Waypoint extends WaypointInfo {
  readonly address: ProtoObject
  readonly serviceAccounts: ReadonlyArray<string>
}

const waypointsOf = (
  gateways: ReadonlyArray<ConfigResource<KubernetesGatewaySpec>>,
  classLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
  pods: ReadonlyArray<AmbientPod>,
  domainSuffix: string,
): ReadonlyMap<string, Waypoint> => {
  const out = new Map<string, Waypoint>()
  for (const gateway of gateways) {
    if (gateway.spec.gatewayClassName !== WAYPOINT_CLASS) continue
    const { name, namespace, annotations, labels } = gateway.meta
    const service = objectNames({ name, annotations }, WAYPOINT_CLASS, "waypoint").deployment
    const serviceAccounts = [
      ...new Set(
        pods
          .filter((p) => p.namespace === namespace && p.labels[GATEWAY_NAME_LABEL] === name)
          .map((p) => p.serviceAccount),
      ),
    ]
    const ref = { name, namespace }
    out.set(waypointKey(ref), {
      ref,
      trafficType: waypointTrafficType(labels, classLabels.get(gateway.spec.gatewayClassName)),
      attachment: waypointAttachment(gateway.spec.listeners),
      address: {
        hostname: { namespace, hostname: `${service}.${namespace}.svc.${domainSuffix}` },
        hbone_mtls_port: HBONE_PORT,
      },
      serviceAccounts,
    })
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

const sortByName = <T extends { readonly name: string }>(items: Array<T>): Array<T> =>
  items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

export const buildAmbientIndex = (sources: IndexSources): AmbientIndex => {
  const { ambient, trustDomain, domainSuffix } = sources
  const { settings } = ambient
  const clusterNetwork = ambient.namespaceLabels.get(settings.systemNamespace)?.[Labels.network] ?? ""
  const notices: Array<string> = []
  const namespaceMeta = (namespace: string): Meta | undefined => {
    const labels = ambient.namespaceLabels.get(namespace)
    return labels === undefined ? undefined : { name: namespace, namespace: "", labels }
  }
  const classLabels = new Map(ambient.gatewayClasses.map((c) => [c.meta.name, c.meta.labels]))
  const waypoints = waypointsOf(ambient.gateways, classLabels, ambient.pods, domainSuffix)
  const lookup = (key: string) => waypoints.get(key)
  /** The bound waypoint's key and address; a binding problem becomes a notice. */
  const bind = (target: "service" | "workload", meta: Meta, what: string) => {
    const binding = bindWaypoint(target, meta, namespaceMeta(meta.namespace), lookup)
    if (binding.problem !== undefined) notices.push(`${what}: ${describeProblem(binding.problem)}`)
    if (binding.waypoint === undefined) return undefined
    const key = waypointKey(binding.waypoint.ref)
    const address = waypoints.get(key)?.address
    return address === undefined ? undefined : { key, address }
  }

  // Policies: translated once; selector-scoped ones are named by the workloads they select.
  const policies: Array<L4Authorization> = []
  for (const policy of sources.authorizationPolicies) {
    const translated = translatePolicy(policy, sources.rootNamespace)
    if (translated.notice !== undefined) notices.push(translated.notice)
    if (translated.authorization !== undefined) policies.push(translated.authorization)
  }
  const waypointPolicies = new Map<string, L4Authorization>()
  if (settings.autoAllowWaypointPolicy)
    for (const [key, waypoint] of waypoints) {
      const policy = waypointAllowPolicy(
        waypoint.ref.namespace,
        waypoint.ref.name,
        waypoint.serviceAccounts,
        trustDomain,
      )
      if (policy !== undefined) waypointPolicies.set(key, policy)
    }
  const selectorPolicies = policies.filter((p) => p.scope === "WORKLOAD_SELECTOR")
  const policiesFor = (namespace: string, labels: Readonly<Record<string, string>>, waypoint: string | undefined) => {
    const names = selectorPolicies
      .filter(
        (p) =>
          (p.namespace === namespace || p.namespace === sources.rootNamespace) &&
          Object.entries(p.matchLabels).every(([k, v]) => labels[k] === v),
      )
      .map((p) => p.key)
    const allow = waypoint === undefined ? undefined : waypointPolicies.get(waypoint)
    if (allow !== undefined) names.push(allow.key)
    return names.sort()
  }

  // Services, and which of them select a workload (same namespace, non-empty selector).
  const servedServices = sources.services.filter((s) => s.addresses.length > 0 || s.selector !== undefined)
  const servicesByNamespace = new Map<string, Array<Service>>()
  for (const s of servedServices) {
    const list = servicesByNamespace.get(s.namespace)
    if (list === undefined) servicesByNamespace.set(s.namespace, [s])
    else list.push(s)
  }
  // The port each endpoint address serves a service port on (named target ports resolved by the registry).
  const endpointPorts = new Map<string, number>()
  for (const e of sources.endpoints)
    endpointPorts.set(`${e.hostname}\u0000${e.servicePortName}\u0000${e.address}`, e.port)
  const servicesOf = (
    namespace: string,
    labels: Readonly<Record<string, string>>,
    ips: ReadonlyArray<string>,
    namedPorts: Readonly<Record<string, number>>,
  ): ProtoObject => {
    const out: Record<string, ProtoObject> = {}
    for (const s of servicesByNamespace.get(namespace) ?? []) {
      if (!selects(s.selector, labels)) continue
      out[`${s.namespace}/${s.hostname}`] = {
        ports: s.ports.map((p) => {
          const fromEndpoint = ips
            .map((ip) => endpointPorts.get(`${s.hostname}\u0000${p.name}\u0000${ip}`))
            .find((port) => port !== undefined)
          return {
            service_port: p.port,
            target_port: p.targetPort ?? fromEndpoint ?? namedPorts[p.name] ?? p.port,
          }
        }),
      }
    }
    return out
  }

  const entries: Array<AddressEntry> = []
  const trustDomainField = trustDomain === "cluster.local" ? {} : { trust_domain: trustDomain }
  for (const pod of ambient.pods) {
    if (pod.hostNetwork || pod.addresses.length === 0) continue
    const network = pod.labels[Labels.network] ?? clusterNetwork
    const addresses = pod.addresses.flatMap((ip) => {
      const bytes = ipBytes(ip)
      return bytes === undefined ? [] : [bytes]
    })
    if (addresses.length === 0) continue
    const uid = `${settings.clusterId}//Pod/${pod.namespace}/${pod.name}`
    const isWaypointPod = waypoints.has(`${pod.namespace}/${pod.labels[GATEWAY_NAME_LABEL] ?? ""}`)
    const meta: Meta = { name: pod.name, namespace: pod.namespace, labels: pod.labels, annotations: pod.annotations }
    // A waypoint's own pods never go through a waypoint.
    const waypoint = isWaypointPod ? undefined : bind("workload", meta, `pod ${pod.namespace}/${pod.name}`)
    const workloadName = workloadNameOf(pod)
    const locality = pod.locality.split("/")
    const workload: Record<string, unknown> = {
      uid,
      name: pod.name,
      namespace: pod.namespace,
      addresses,
      network,
      ...(pod.annotations[AMBIENT_REDIRECTION] === "enabled" ? { tunnel_protocol: "HBONE" } : {}),
      ...trustDomainField,
      service_account: pod.serviceAccount,
      ...(waypoint !== undefined ? { waypoint: waypoint.address } : {}),
      node: pod.node,
      canonical_name: canonicalName(pod.labels, workloadName),
      canonical_revision: canonicalRevision(pod.labels),
      workload_type: pod.owner?.kind === "Job" ? "JOB" : pod.owner === undefined ? "POD" : "DEPLOYMENT",
      workload_name: workloadName,
      services: servicesOf(pod.namespace, pod.labels, pod.addresses, pod.namedPorts),
      authorization_policies: policiesFor(pod.namespace, pod.labels, waypoint?.key),
      status: pod.ready ? "HEALTHY" : "UNHEALTHY",
      cluster_id: settings.clusterId,
      ...(pod.locality !== ""
        ? { locality: { region: locality[0] ?? "", zone: locality[1] ?? "", subzone: locality[2] ?? "" } }
        : {}),
    }
    const message = { workload }
    entries.push({
      name: uid,
      key: keyOf(message),
      message,
      addresses: pod.addresses.map((ip) => `${network}/${ip}`),
    })
  }

  for (const entry of ambient.workloadEntries) {
    const { spec, meta } = entry
    const ip = spec.address ?? ""
    const bytes = ipBytes(ip)
    if (bytes === undefined) continue
    const labels = spec.labels ?? {}
    const network = spec.network ?? clusterNetwork
    const uid = `${settings.clusterId}/${ApiGroups.networking}/WorkloadEntry/${meta.namespace}/${meta.name}`
    const objectMeta: Meta = { name: meta.name, namespace: meta.namespace, labels, annotations: meta.annotations }
    const waypoint = bind("workload", objectMeta, `WorkloadEntry ${meta.namespace}/${meta.name}`)
    const message = {
      workload: {
        uid,
        name: meta.name,
        namespace: meta.namespace,
        addresses: [bytes],
        network,
        ...(meta.annotations[AMBIENT_REDIRECTION] === "enabled" ? { tunnel_protocol: "HBONE" } : {}),
        ...trustDomainField,
        service_account: spec.serviceAccount ?? "default",
        ...(waypoint !== undefined ? { waypoint: waypoint.address } : {}),
        canonical_name: canonicalName(labels, meta.name),
        canonical_revision: canonicalRevision(labels),
        workload_type: "POD",
        workload_name: meta.name,
        services: servicesOf(meta.namespace, labels, [ip], {}),
        authorization_policies: policiesFor(meta.namespace, labels, waypoint?.key),
        status: "HEALTHY",
        cluster_id: settings.clusterId,
      },
    }
    entries.push({ name: uid, key: keyOf(message), message, addresses: [`${network}/${ip}`] })
  }

  for (const s of servedServices) {
    const meta: Meta = { name: serviceName(s), namespace: s.namespace, labels: s.labels }
    const waypoint = bind("service", meta, `service ${s.namespace}/${s.hostname}`)
    const vips = s.addresses.flatMap((ip) => {
      const address = networkAddress(clusterNetwork, ip)
      return address === undefined ? [] : [{ ip, address }]
    })
    const message = {
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
    entries.push({
      name: `${s.namespace}/${s.hostname}`,
      key: keyOf(message),
      message,
      addresses: vips.map((v) => `${clusterNetwork}/${v.ip}`),
    })
  }

  const addresses = sortByName(entries)
  const byName = new Map(addresses.map((e) => [e.name, e]))
  const byAddress = new Map<string, Array<AddressEntry>>()
  for (const e of addresses)
    for (const a of e.addresses) {
      const list = byAddress.get(a)
      if (list === undefined) byAddress.set(a, [e])
      else list.push(e)
    }
  const authorizations = sortByName(
    [...policies, ...waypointPolicies.values()].map((p) => ({
      name: p.key,
      key: keyOf(p.message),
      message: p.message,
    })),
  )
  return { addresses, byName, byAddress, authorizations, notices }
}
