/**
 * Which proxies are waypoints and what each serves. A waypoint proxy is a node of type
 * `waypoint` (`mesh-agent proxy waypoint`, the reference's agent mode), or a router
 * (`mesh-agent proxy router`) whose pod the deployment controller made for a `mesh-waypoint`
 * Gateway (`gateway.mesh.io/managed: mesh.io-mesh-controller`); either way its pod's
 * `gateway.networking.k8s.io/gateway-name` label names the Gateway, in the proxy's namespace.
 *
 * It serves the services bound to that Gateway (binding.ts: `mesh.io/use-waypoint` on the
 * Service or its namespace, the Gateway's traffic type and attachment rule) and the workloads
 * bound to it (pods, for `workload` and `all` waypoints). The bindings need the ambient input
 * (`PILOT_ENABLE_AMBIENT`): without it a waypoint serves nothing but still terminates HBONE.
 */
import type { AmbientPod } from "../../../ambient/input.js"
import { MANAGED_BY } from "../../../gateway-api/deployment/names.js"
import { GATEWAY_NAME_LABEL } from "../../../gateway-api/model.js"
import {
  BindingLabels,
  bindWaypoint,
  type Meta,
  type WaypointInfo,
  type WaypointRef,
  waypointAttachment,
  waypointKey,
  waypointTrafficType,
} from "../../../gateway-api/waypoints/binding.js"
import { WAYPOINT_CLASS } from "../../../gateway-api/waypoints/names.js"
import type { Service } from "../../../registry/model.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"

/** The waypoint Gateway a proxy serves as, or undefined when it is no waypoint. */
export const waypointOf = (proxy: ProxyView): WaypointRef | undefined => {
  const name = proxy.labels[GATEWAY_NAME_LABEL]
  if (name === undefined || name === "" || proxy.namespace === "") return undefined
  const isWaypoint =
    proxy.id.startsWith("waypoint~") || proxy.labels[BindingLabels.gatewayManaged] === MANAGED_BY.waypoint
  return isWaypoint ? { name, namespace: proxy.namespace } : undefined
}

/** What one waypoint serves, in a stable order. */
export interface WaypointScope {
  readonly ref: WaypointRef
  /** Bound services, by host name. */
  readonly services: ReadonlyArray<Service>
  /** Bound workloads' addresses (pods of `workload`/`all` waypoints). */
  readonly workloadAddresses: ReadonlyArray<string>
  /** Binding problems of objects asking for this waypoint (not ready, attachment, traffic type). */
  readonly notices: ReadonlyArray<string>
}

/** The service's name: its source object's, else the host name's first label. */
export const serviceNameOf = (service: Service): string => {
  const source = service.source ?? ""
  const slash = source.lastIndexOf("/")
  return slash >= 0 ? source.slice(slash + 1) : (service.hostname.split(".")[0] ?? service.hostname)
}

interface Bindings {
  readonly lookup: (key: string) => WaypointInfo | undefined
  readonly namespaceMeta: (namespace: string) => Meta | undefined
  readonly pods: ReadonlyArray<AmbientPod>
}

/** The ready waypoints and namespace facts of a push, once per push. */
const bindingsSlot: LocalSlot<Bindings | undefined, PushContext> = {
  make: (push) => {
    const ambient = push.input.ambient
    if (ambient === undefined) return undefined
    const classLabels = new Map(ambient.gatewayClasses.map((c) => [c.meta.name, c.meta.labels]))
    const waypoints = new Map<string, WaypointInfo>()
    for (const gateway of ambient.gateways) {
      if (gateway.spec.gatewayClassName !== WAYPOINT_CLASS) continue
      const ref = { name: gateway.meta.name, namespace: gateway.meta.namespace }
      waypoints.set(waypointKey(ref), {
        ref,
        trafficType: waypointTrafficType(gateway.meta.labels, classLabels.get(gateway.spec.gatewayClassName)),
        attachment: waypointAttachment(gateway.spec.listeners),
      })
    }
    return {
      lookup: (key) => waypoints.get(key),
      namespaceMeta: (namespace) => {
        const labels = ambient.namespaceLabels.get(namespace)
        return labels === undefined ? undefined : { name: namespace, namespace: "", labels }
      },
      pods: ambient.pods,
    }
  },
}

const scopes: LocalSlot<Map<string, WaypointScope>, PushContext> = { make: () => new Map() }

/** What the waypoint `ref` serves in this push (memoised per push and waypoint). */
export const waypointScope = (push: PushContext, ref: WaypointRef): WaypointScope =>
  memoOf(push.local(scopes), waypointKey(ref), () => bindScope(push, ref))

const bindScope = (push: PushContext, ref: WaypointRef): WaypointScope => {
  const key = waypointKey(ref)
  const bindings = push.local(bindingsSlot)
  const services: Array<Service> = []
  const workloadAddresses: Array<string> = []
  const notices: Array<string> = []
  if (bindings !== undefined) {
    const bound = (target: "service" | "workload", meta: Meta, what: string): boolean => {
      const binding = bindWaypoint(target, meta, bindings.namespaceMeta(meta.namespace), bindings.lookup)
      if (binding.problem !== undefined && binding.problem.waypoint === key)
        notices.push(`${what}: ${binding.problem._tag}`)
      return binding.waypoint !== undefined && waypointKey(binding.waypoint.ref) === key
    }
    for (const service of push.services) {
      if (service.addresses.length === 0) continue
      const meta = { name: serviceNameOf(service), namespace: service.namespace, labels: service.labels }
      if (bound("service", meta, `service ${service.namespace}/${service.hostname}`)) services.push(service)
    }
    for (const pod of bindings.pods) {
      if (pod.hostNetwork || pod.addresses.length === 0) continue
      if (bound("workload", pod, `pod ${pod.namespace}/${pod.name}`)) workloadAddresses.push(...pod.addresses)
    }
  }
  return { ref, services, workloadAddresses: [...new Set(workloadAddresses)].sort(), notices }
}
