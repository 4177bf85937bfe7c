/**
 * The `pilot_eds_no_instances` and `pilot_endpoint_not_ready` gauges, kept over every host of
 * the served PushContext. After a derived PushContext only the changed hosts are recounted: an
 * endpoint change costs its hosts, not the mesh.
 */
import type { PushContext } from "../../services/xds/model/push-context.js"
import type { XdsMetrics } from "./xds-metrics.js"

/** Ports of a host's service without endpoints, and its unhealthy endpoints. */
const hostStats = (push: PushContext, host: string) => {
  const endpoints = push.endpointsByHost.get(host) ?? []
  let noInstances = 0
  for (const port of push.serviceByHost.get(host)?.ports ?? [])
    if (!endpoints.some((e) => e.servicePortName === port.name)) noInstances++
  let notReady = 0
  for (const e of endpoints) if (e.healthStatus === "UNHEALTHY") notReady++
  return { noInstances, notReady }
}

/** Records the gauges for `push`: recounted for `hosts` when `previous` was counted already. */
export type RecordEndpointGauges = (push: PushContext, previous?: PushContext, hosts?: ReadonlySet<string>) => void

export const makeEndpointGauges = (
  metrics: Pick<XdsMetrics, "edsNoInstances" | "endpointNotReady">,
): RecordEndpointGauges => {
  const stats = { noInstances: 0, notReady: 0 }
  let counted = 0
  const add = (from: PushContext, host: string, sign: number) => {
    const s = hostStats(from, host)
    stats.noInstances += sign * s.noInstances
    stats.notReady += sign * s.notReady
  }
  return (push, previous, hosts) => {
    if (previous !== undefined && hosts !== undefined) {
      for (const host of hosts) {
        add(previous, host, -1)
        add(push, host, 1)
      }
    } else {
      stats.noInstances = 0
      stats.notReady = 0
      for (const host of new Set([...push.serviceByHost.keys(), ...push.endpointsByHost.keys()])) add(push, host, 1)
    }
    metrics.edsNoInstances.set(stats.noInstances)
    // The orchestrator registries add the not-ready endpoints they leave out to the same gauge,
    // so this side adds the change of its own count instead of setting the total.
    metrics.endpointNotReady.inc(stats.notReady - counted)
    counted = stats.notReady
  }
}
