/**
 * A VirtualService routing on a JWT claim (a header match key `@request.auth.claims...`) needs a
 * RequestAuthentication on every gateway pod it is served by, or the claim is never available
 * (MSH0149). For each gateway the VirtualService names (not `mesh`; `name` is in its own
 * namespace, `ns/name` elsewhere), each Pod in any namespace matching the Gateway's selector
 * must be selected by a RequestAuthentication of its namespace or of the system namespace
 * (one without a selector selects every pod). One message per uncovered pod.
 */
import { SYSTEM_NAMESPACE } from "../../constants.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  groupBy,
  type Message,
  message,
  rec,
  type Snapshot,
  selects,
  stringMap,
  strs,
} from "../snapshot.js"

const CLAIM_PREFIX = "@request.auth.claims"

/** The first header key (headers, then withoutHeaders, per match) that routes on a claim. */
const claimKey = (vs: Entry): string | undefined => {
  for (const route of arr(vs.body.http))
    for (const match of arr(rec(route).match)) {
      for (const field of ["headers", "withoutHeaders"]) {
        const key = Object.keys(rec(rec(match)[field])).find((k) => k.startsWith(CLAIM_PREFIX))
        if (key !== undefined) return key
      }
    }
  return undefined
}

const claimRoutes = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const routing = snapshot.ofKind("VirtualService").flatMap((vs) => {
    const key = claimKey(vs)
    return key === undefined ? [] : [{ vs, key }]
  })
  if (routing.length === 0) return []
  const authBySelector = groupBy(snapshot.ofKind("RequestAuthentication"), (ra) => ra.namespace)
  const gateways = new Map(snapshot.ofKind("Gateway", "networking.mesh.io").map((g) => [`${g.namespace}/${g.name}`, g]))
  const pods = snapshot.ofKind("Pod", "")
  const covered = (pod: Entry) =>
    [...(authBySelector.get(SYSTEM_NAMESPACE) ?? []), ...(authBySelector.get(pod.namespace) ?? [])].some((ra) =>
      selects(stringMap(rec(ra.body.selector).matchLabels), pod.labels),
    )
  const out: Array<Message> = []
  for (const { vs, key } of routing)
    for (const name of strs(vs.body.gateways)) {
      if (name === "mesh") continue
      const full = name.includes("/") ? name : `${vs.namespace}/${name}`
      const gateway = gateways.get(full)
      if (gateway === undefined) continue
      const selector = stringMap(gateway.body.selector)
      for (const pod of pods) {
        if (!selects(selector, pod.labels) || covered(pod)) continue
        out.push(
          message(
            MessageTypes.JwtClaimBasedRoutingWithoutRequestAuthN,
            vs,
            `The virtual service uses the JWT claim based routing (key: ${key}) but found no request authentication for the gateway (${full}) pod (${pod.name}). The request authentication must first be applied for the gateway pods to validate the JWT token and make the claims available for routing.`,
          ),
        )
      }
    }
  return out
}

export const jwtClaimRouteAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "virtualservice.JWTClaimRouteAnalyzer",
    description: "Checks the VirtualService using JWT claim based routing has corresponding RequestAuthentication",
    types: [MessageTypes.JwtClaimBasedRoutingWithoutRequestAuthN],
    run: claimRoutes,
  },
]
