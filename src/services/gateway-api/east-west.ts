/**
 * The listeners of an east-west gateway (issue 36 group 2; the reference's `istio-east-west`
 * class, for ambient multi-network): port 15008 takes HBONE with TLS Terminate (the tunnel other
 * networks' proxies open to this network's workloads), any other port TLS Passthrough (SNI
 * routing to services, through TLSRoutes). Anything else is not Accepted (UnsupportedProtocol,
 * with the reference's message) but is otherwise served as a Gateway listener, as the reference
 * does. The HBONE listener is served by the proxy itself: it is programmed, counts for the
 * Gateway's address, takes no routes and gives no server of the generated mesh Gateway.
 */
import type { Listener } from "../config-model/schemas/gateway-api/types.js"
import { type Problem, Reason } from "./conditions.js"
import type { ListenerState } from "./listener-state.js"

/** The HBONE tunnel port of ambient proxies. */
export const HBONE_PORT = 15008
export const HBONE_PROTOCOL = "HBONE"

const isHboneTerminate = (listener: Listener): boolean =>
  listener.port === HBONE_PORT &&
  listener.protocol === HBONE_PROTOCOL &&
  listener.tls !== undefined &&
  (listener.tls.mode ?? "Terminate") === "Terminate"

/** Why an east-west gateway's listener is not Accepted, if it is not. */
export const eastWestListenerProblem = (listener: Listener): Problem | undefined => {
  const expected =
    listener.port === HBONE_PORT
      ? isHboneTerminate(listener)
      : listener.protocol === "TLS" && listener.tls?.mode === "Passthrough"
  return expected
    ? undefined
    : {
        reason: Reason.UnsupportedProtocol,
        message:
          'East-west gateway listeners must be either port 15008 with protocol "HBONE" and TLS.Mode == Terminate, or TLS with TLS.Mode == Passthrough',
      }
}

/**
 * The state of an east-west gateway's HBONE listener (served by the proxy, no routes), or of one
 * that speaks HBONE elsewhere (not served: a mesh Gateway has no HBONE server); undefined for
 * the other protocols, which are checked as any Gateway's listeners.
 */
export const eastWestListener = (listener: Listener): ListenerState | undefined => {
  if (listener.protocol !== HBONE_PROTOCOL) return undefined
  const problem = eastWestListenerProblem(listener)
  return {
    listener,
    served: problem === undefined,
    supportedKinds: [],
    acceptedProblems: problem === undefined ? [] : [problem],
    programmedProblems: problem === undefined ? [] : [{ reason: Reason.Invalid, message: "listener is not accepted" }],
    resolvedRefsProblems: [],
    attachedRoutes: new Set(),
  }
}
