/**
 * RequestAuthentications make the control plane fetch JWKS from the URIs they name; unless the
 * control plane restricts those fetches (`BLOCKED_CIDRS_IN_JWKS_URIS` set, non-empty, on a
 * container of its Deployment, the one labelled `app: meshd`), any network is reachable
 * (MSH0175, on each such Deployment). Up to five policies are named.
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Message, message, rec, type Snapshot, str } from "../snapshot.js"

/** The control-plane setting read, the reference's name. */
export const BLOCKED_CIDRS_ENV = "BLOCKED_CIDRS_IN_JWKS_URIS"
const CONTROL_PLANE_APP = "meshd"
const NAMES_SHOWN = 5

const blockedCidrs = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const policies = snapshot.ofKind("RequestAuthentication").map((ra) => `${ra.namespace}/${ra.name}`)
  if (policies.length === 0) return []
  const names =
    policies.length <= NAMES_SHOWN
      ? policies.join(", ")
      : `${policies.slice(0, NAMES_SHOWN).join(", ")}, and ${policies.length - NAMES_SHOWN} more`
  const out: Array<Message> = []
  for (const deployment of snapshot.ofKind("Deployment", "apps")) {
    if (deployment.labels.app !== CONTROL_PLANE_APP) continue
    const containers = arr(rec(rec(rec(deployment.body.spec).template).spec).containers).map(rec)
    const restricted = containers.some((c) =>
      arr(c.env)
        .map(rec)
        .some((e) => str(e.name) === BLOCKED_CIDRS_ENV && str(e.value) !== ""),
    )
    if (restricted) continue
    out.push(
      message(
        MessageTypes.JwksUriFetchUnrestricted,
        deployment,
        `${BLOCKED_CIDRS_ENV} is not configured but ${policies.length} RequestAuthentication resource(s) exist (${names}). Consider configuring it to restrict JWKS URI fetches to trusted networks.`,
      ),
    )
  }
  return out
}

export const blockedCidrAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "authn.BlockedCIDRsAnalyzer",
    description: `Checks that ${BLOCKED_CIDRS_ENV} is configured on the control plane when RequestAuthentication resources exist`,
    types: [MessageTypes.JwksUriFetchUnrestricted],
    run: blockedCidrs,
  },
]
