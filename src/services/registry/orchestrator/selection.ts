/**
 * Selection across registries, as the reference does it:
 * - a Service with a selector also selects the WorkloadEntries of its namespace whose labels
 *   match (`PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`); their port is the entry's port of the
 *   service port's name, else the service's target port, else the service port;
 * - a ServiceEntry with a `workloadSelector` also selects the ready pods of its namespace whose
 *   labels match (`PILOT_ENABLE_SERVICEENTRY_SELECT_PODS`); their port is the container port of
 *   the entry port's name, else the entry port's `targetPort`, else its number. These endpoints
 *   are published by the orchestrator registry under the entry's host; the aggregate registry
 *   joins them to the ServiceEntry registry's service of that host.
 */
import type { ConfigResource } from "../../config-model/resource.js"
import type { ServiceEntrySpec } from "../../config-model/schemas/service-entry.js"
import type { WorkloadEntrySpec } from "../../config-model/schemas/workload-entry.js"
import { Labels, spiffeId } from "../../constants.js"
import type { OrchPod } from "../../orchestrator/objects.js"
import type { Endpoint, Service } from "../model.js"
import { selectorMatches } from "../service-entry.js"
import { podAddresses, podIsReady, podPortsByName, type WorkloadMeta } from "./workload.js"

/** The labels a WorkloadEntry is selected by: its spec's, overridden by its metadata's. */
export const workloadEntryLabels = (we: ConfigResource<WorkloadEntrySpec>): Readonly<Record<string, string>> =>
  we.spec.labels === undefined ? we.meta.labels : { ...we.spec.labels, ...we.meta.labels }

export interface SelectionContext {
  readonly clusterId: string
  readonly trustDomain: string
  readonly drainingLabel: string
}

/** Endpoints of the WorkloadEntries (of the service's namespace) a service's selector matches. */
export const workloadEntryEndpoints = (
  service: Service,
  workloadEntries: ReadonlyArray<ConfigResource<WorkloadEntrySpec>>,
  context: SelectionContext,
): ReadonlyArray<Endpoint> => {
  const selector = service.selector
  // An empty selector selects nothing on the orchestrator (the service's endpoints are manual).
  if (selector === undefined || Object.keys(selector).length === 0) return []
  const out: Array<Endpoint> = []
  for (const we of workloadEntries) {
    if (we.meta.namespace !== service.namespace) continue
    const labels = workloadEntryLabels(we)
    if (!selectorMatches(selector, labels)) continue
    const spec = we.spec
    const network = spec.network ?? ""
    const endpointLabels =
      network !== "" && labels[Labels.network] === undefined ? { ...labels, [Labels.network]: network } : labels
    const draining = context.drainingLabel !== "" && labels[context.drainingLabel] !== undefined
    for (const port of service.ports) {
      const named = spec.ports?.[port.name]
      out.push({
        hostname: service.hostname,
        namespace: service.namespace,
        servicePortName: port.name,
        address: spec.address ?? "",
        port: named !== undefined && named > 0 ? named : (port.targetPort ?? port.port),
        labels: endpointLabels,
        serviceAccount:
          spec.serviceAccount !== undefined && spec.serviceAccount !== ""
            ? spiffeId(context.trustDomain, we.meta.namespace, spec.serviceAccount)
            : "",
        locality: spec.locality ?? "",
        network,
        weight: spec.weight !== undefined && spec.weight > 0 ? spec.weight : 1,
        healthStatus: draining ? "DRAINING" : "HEALTHY",
        clusterId: context.clusterId,
      })
    }
  }
  return out
}

/** A ServiceEntry host that selects pods: the part of the entry pod selection needs. */
export interface PodSelectingHost {
  readonly hostname: string
  readonly namespace: string
  readonly selector: Readonly<Record<string, string>>
  readonly ports: ReadonlyArray<{ readonly name: string; readonly number: number; readonly targetPort?: number }>
}

const byAge = (a: ConfigResource, b: ConfigResource): number => {
  const ta = a.meta.creationTimestamp ?? ""
  const tb = b.meta.creationTimestamp ?? ""
  if (ta !== tb) return ta === "" ? 1 : tb === "" ? -1 : ta < tb ? -1 : 1
  return a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0
}

/**
 * The hosts of ServiceEntries with a `workloadSelector`, by `namespace/hostname`; where two
 * entries of a namespace define one host the older wins, as in the ServiceEntry registry.
 */
export const podSelectingHosts = (
  serviceEntries: ReadonlyArray<ConfigResource<ServiceEntrySpec>>,
): ReadonlyMap<string, PodSelectingHost> => {
  const out = new Map<string, PodSelectingHost>()
  const defined = new Set<string>()
  for (const se of [...serviceEntries].sort(byAge)) {
    for (const hostname of se.spec.hosts) {
      const key = `${se.meta.namespace}/${hostname}`
      if (defined.has(key)) continue
      defined.add(key)
      const selector = se.spec.workloadSelector
      if (selector === undefined) continue
      out.set(key, {
        hostname,
        namespace: se.meta.namespace,
        selector: selector.labels ?? {},
        ports: (se.spec.ports ?? []).map((p) => ({
          name: p.name,
          number: p.number,
          ...(p.targetPort !== undefined && p.targetPort > 0 ? { targetPort: p.targetPort } : {}),
        })),
      })
    }
  }
  return out
}

/** Endpoints of the ready pods a ServiceEntry host selects. */
export const podEndpointsForHost = (
  host: PodSelectingHost,
  pods: Iterable<OrchPod>,
  meta: (pod: OrchPod) => WorkloadMeta,
  context: SelectionContext,
): ReadonlyArray<Endpoint> => {
  const out: Array<Endpoint> = []
  for (const pod of pods) {
    if (pod.metadata.namespace !== host.namespace) continue
    if (!selectorMatches(host.selector, pod.metadata.labels ?? {})) continue
    if (!podIsReady(pod)) continue
    const addresses = podAddresses(pod)
    if (addresses.length === 0) continue
    const m = meta(pod)
    const containerPorts = podPortsByName(pod)
    const draining = context.drainingLabel !== "" && m.labels[context.drainingLabel] !== undefined
    for (const port of host.ports) {
      for (const address of addresses) {
        out.push({
          hostname: host.hostname,
          namespace: host.namespace,
          servicePortName: port.name,
          address,
          port: containerPorts.get(port.name) ?? port.targetPort ?? port.number,
          labels: m.labels,
          serviceAccount: m.serviceAccount,
          locality: m.locality,
          network: m.network,
          weight: 1,
          healthStatus: draining ? "DRAINING" : "HEALTHY",
          clusterId: context.clusterId,
        })
      }
    }
  }
  return out
}
