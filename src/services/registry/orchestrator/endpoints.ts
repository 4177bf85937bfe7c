/**
 * EndpointSlices (and core Endpoints, the fallback) → registry endpoints, the reference's rules:
 * - a slice belongs to the service named by its `kubernetes.io/service-name` label (slices of
 *   multi-cluster services, and FQDN slices, are ignored);
 * - one endpoint per address and slice port whose name is a port of the service; its port is the
 *   slice port's number (the resolved target port);
 * - ready → HEALTHY; not ready → UNHEALTHY, kept only with `PILOT_SEND_UNHEALTHY_ENDPOINTS`,
 *   except a serving, terminating endpoint of a service labelled `mesh.io/persistent-session`,
 *   which is DRAINING; a pod carrying `PILOT_DRAINING_LABEL` makes its endpoints DRAINING;
 * - an endpoint whose `targetRef` names a pod the registry does not know (yet) is left out and
 *   counted (`endpoint_no_pod`); it comes back when the pod arrives. Without a `targetRef` the
 *   pod is looked up by address, and the endpoint is kept even when there is none.
 */
import { Labels } from "../../constants.js"
import type { ObjectReference, OrchEndpointSlice, OrchEndpoints, OrchPod } from "../../orchestrator/objects.js"
import type { Endpoint, HealthStatus, Service } from "../model.js"
import type { WorkloadMeta } from "./workload.js"

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name"
/** Slices of multi-cluster service imports; the service's own slices carry no such label. */
export const MCS_SERVICE_NAME_LABEL = "multicluster.kubernetes.io/service-name"

export interface UnitEndpoint {
  readonly addresses: ReadonlyArray<string>
  readonly ready: boolean
  readonly serving: boolean
  readonly terminating: boolean
  readonly targetRef?: ObjectReference
}

export interface UnitPart {
  readonly ports: ReadonlyArray<{ readonly name: string; readonly port: number }>
  readonly endpoints: ReadonlyArray<UnitEndpoint>
}

/** One EndpointSlice or one Endpoints object, in one shape. */
export interface EndpointUnit {
  /** `EndpointSlice/ns/name` or `Endpoints/ns/name`. */
  readonly key: string
  readonly namespace: string
  readonly serviceName: string
  readonly parts: ReadonlyArray<UnitPart>
}

export type Normalised = EndpointUnit | { readonly ignored: true } | { readonly problem: string }

const isPort = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0 && n < 65536
const strings = (v: unknown): ReadonlyArray<string> =>
  Array.isArray(v) ? v.filter((a): a is string => typeof a === "string" && a !== "") : []

const metaOf = (o: { readonly metadata?: unknown }) => {
  const m = o.metadata as { name?: unknown; namespace?: unknown; labels?: Record<string, string> } | undefined
  return typeof m?.name === "string" && typeof m.namespace === "string" && m.name !== "" && m.namespace !== ""
    ? { name: m.name, namespace: m.namespace, labels: m.labels ?? {} }
    : undefined
}

const portsOf = (ports: unknown): UnitPart["ports"] =>
  (Array.isArray(ports) ? ports : []).flatMap((p: { name?: unknown; port?: unknown } | null) =>
    p !== null && typeof p === "object" && isPort(p.port)
      ? [{ name: typeof p.name === "string" ? p.name : "", port: p.port }]
      : [],
  )

export const normaliseSlice = (slice: OrchEndpointSlice): Normalised => {
  const meta = metaOf(slice)
  if (meta === undefined) return { problem: "metadata.name and metadata.namespace are required" }
  const serviceName = meta.labels[SERVICE_NAME_LABEL]
  if (serviceName === undefined || serviceName === "" || meta.labels[MCS_SERVICE_NAME_LABEL] !== undefined)
    return { ignored: true }
  if (slice.addressType === "FQDN") return { ignored: true }
  if (slice.endpoints !== undefined && slice.endpoints !== null && !Array.isArray(slice.endpoints))
    return { problem: "endpoints is not a list" }
  const endpoints = (slice.endpoints ?? []).flatMap((e): ReadonlyArray<UnitEndpoint> => {
    if (e === null || typeof e !== "object") return []
    const c = e.conditions ?? {}
    // Unknown readiness counts as ready; serving follows readiness unless given.
    const ready = c.ready !== false
    return [
      {
        addresses: strings(e.addresses),
        ready,
        serving: c.serving ?? ready,
        terminating: c.terminating === true,
        ...(e.targetRef !== undefined && e.targetRef !== null ? { targetRef: e.targetRef } : {}),
      },
    ]
  })
  return {
    key: `EndpointSlice/${meta.namespace}/${meta.name}`,
    namespace: meta.namespace,
    serviceName,
    parts: [{ ports: portsOf(slice.ports), endpoints }],
  }
}

export const normaliseEndpoints = (endpoints: OrchEndpoints): Normalised => {
  const meta = metaOf(endpoints)
  if (meta === undefined) return { problem: "metadata.name and metadata.namespace are required" }
  if (endpoints.subsets !== undefined && endpoints.subsets !== null && !Array.isArray(endpoints.subsets))
    return { problem: "subsets is not a list" }
  const address = (ready: boolean) => (a: { ip?: unknown; targetRef?: ObjectReference } | null) =>
    a !== null && typeof a === "object" && typeof a.ip === "string" && a.ip !== ""
      ? [
          {
            addresses: [a.ip],
            ready,
            serving: ready,
            terminating: false,
            ...(a.targetRef !== undefined && a.targetRef !== null ? { targetRef: a.targetRef } : {}),
          },
        ]
      : []
  return {
    key: `Endpoints/${meta.namespace}/${meta.name}`,
    namespace: meta.namespace,
    serviceName: meta.name,
    parts: (endpoints.subsets ?? []).flatMap((s) =>
      s === null || typeof s !== "object"
        ? []
        : [
            {
              ports: portsOf(s.ports),
              endpoints: [
                ...(Array.isArray(s.addresses) ? s.addresses : []).flatMap(address(true)),
                ...(Array.isArray(s.notReadyAddresses) ? s.notReadyAddresses : []).flatMap(address(false)),
              ],
            },
          ],
    ),
  }
}

/** `pod:<ns>/<name>` for a pod reference, `ip:<address>` for a lookup by address. */
export const podRefKey = (namespace: string, name: string): string => `pod:${namespace}/${name}`
export const ipRefKey = (address: string): string => `ip:${address}`

export interface UnitBuildContext {
  readonly clusterId: string
  readonly sendUnhealthyEndpoints: boolean
  /** `PILOT_DRAINING_LABEL`; "" disables. */
  readonly drainingLabel: string
  /** The pod a reference key names, if known. */
  readonly pod: (refKey: string) => OrchPod | undefined
  readonly meta: (pod: OrchPod) => WorkloadMeta
  /** Network of endpoints without a pod. */
  readonly defaultNetwork: string
}

export interface UnitResult {
  readonly endpoints: ReadonlyArray<Endpoint>
  /** Pod reference keys consulted: a change of one of them rebuilds the unit. */
  readonly refs: ReadonlyArray<string>
  /** Addresses whose referenced pod is unknown. */
  readonly noPod: number
  /** Addresses found not ready. */
  readonly notReady: number
}

const NO_LABELS: Readonly<Record<string, string>> = {}

const healthOf = (service: Service, e: UnitEndpoint): HealthStatus => {
  if (e.ready) return "HEALTHY"
  return service.labels[Labels.persistentSession] !== undefined && e.serving && e.terminating ? "DRAINING" : "UNHEALTHY"
}

/** The endpoints one unit gives its service. */
export const buildUnitEndpoints = (unit: EndpointUnit, service: Service, context: UnitBuildContext): UnitResult => {
  const out: Array<Endpoint> = []
  const refs = new Set<string>()
  let noPod = 0
  let notReady = 0
  const servicePorts = new Set(service.ports.map((p) => p.name))
  for (const part of unit.parts) {
    const ports = part.ports.filter((p) => servicePorts.has(p.name))
    for (const e of part.endpoints) {
      if (!e.ready) notReady += e.addresses.length
      const base = healthOf(service, e)
      if (base === "UNHEALTHY" && !context.sendUnhealthyEndpoints) continue
      for (const address of e.addresses) {
        const ref = e.targetRef
        const expectsPod = ref?.kind === "Pod" && typeof ref.name === "string"
        const refKey = expectsPod ? podRefKey(ref.namespace ?? unit.namespace, ref.name as string) : ipRefKey(address)
        refs.add(refKey)
        const pod = context.pod(refKey)
        if (pod === undefined && expectsPod) {
          noPod++
          continue
        }
        const meta = pod !== undefined ? context.meta(pod) : undefined
        const draining =
          meta !== undefined && context.drainingLabel !== "" && meta.labels[context.drainingLabel] !== undefined
        for (const port of ports) {
          out.push({
            hostname: service.hostname,
            namespace: service.namespace,
            servicePortName: port.name,
            address,
            port: port.port,
            labels: meta?.labels ?? NO_LABELS,
            serviceAccount: meta?.serviceAccount ?? "",
            locality: meta?.locality ?? "",
            network: meta?.network ?? context.defaultNetwork,
            weight: 1,
            healthStatus: draining ? "DRAINING" : base,
            clusterId: context.clusterId,
          })
        }
      }
    }
  }
  return { endpoints: out, refs: [...refs], noPod, notReady }
}
