/**
 * TCPRoute and TLSRoute rules → the destinations of VirtualService `tcp` / `tls` routes. A
 * connection cannot be answered with an error the way a request can, so an invalid backend is
 * left out (and reported); a rule with no backend left is dropped. Backends of weight 0 are not
 * looked at. A rule whose backends all have weight 0 (or that has none) must refuse its
 * connections: as the reference does, it routes to a destination no cluster serves
 * (`internal.cluster.local:65535`, subset `zero-weight`).
 */
import type { BackendRef } from "../config-model/schemas/gateway-api/types.js"
import { type BackendContext, resolveBackend, type WeightedDestination, weightedDestinations } from "./backends.js"
import type { Problem } from "./conditions.js"

export interface L4Rules {
  /** Per rule that has a backend left, its destinations. */
  readonly routes: ReadonlyArray<ReadonlyArray<WeightedDestination>>
  readonly refProblems: ReadonlyArray<Problem>
}

/** Where a rule without weighted backends sends connections: nowhere, so they are refused. */
export const ZERO_WEIGHT_DESTINATION: WeightedDestination = {
  destination: { host: "internal.cluster.local", subset: "zero-weight", port: { number: 65535 } },
}

export const convertL4Rules = (
  rules: ReadonlyArray<{ readonly backendRefs?: ReadonlyArray<BackendRef> }>,
  backends: BackendContext,
): L4Rules => {
  const routes: Array<ReadonlyArray<WeightedDestination>> = []
  const refProblems: Array<Problem> = []
  for (const rule of rules) {
    const weighted = (rule.backendRefs ?? []).filter((ref) => (ref.weight ?? 1) > 0)
    if (weighted.length === 0) {
      routes.push([ZERO_WEIGHT_DESTINATION])
      continue
    }
    const valid: Array<{ destination: WeightedDestination["destination"]; weight: number }> = []
    for (const ref of weighted) {
      const backend = resolveBackend(ref, backends)
      if (backend.ok) valid.push(backend)
      else refProblems.push(backend.problem)
    }
    const destinations = weightedDestinations(valid)
    if (destinations.length > 0) routes.push(destinations)
  }
  return { routes, refProblems }
}
