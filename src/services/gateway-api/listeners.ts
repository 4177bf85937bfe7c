/**
 * Listener rules that do not depend on other objects: which protocols are served and how
 * (`ListenerClass`), which route kinds each takes (narrowed by `allowedRoutes.kinds`), and
 * whether a listener may share its port with the earlier ones: HTTP with HTTP and TLS-based
 * with TLS-based when hostnames differ; TCP with none.
 */
import type { Listener, RouteGroupKind } from "../config-model/schemas/gateway-api/types.js"
import { type Problem, Reason } from "./conditions.js"
import { GATEWAY_API_GROUP, type RouteKind } from "./model.js"

/** How a listener carries traffic: what may share its port and which routes it takes. */
export type ListenerClass = "http" | "https" | "tls-passthrough" | "tls-terminate" | "tcp"

const ROUTE_KINDS_BY_CLASS: Readonly<Record<ListenerClass, ReadonlyArray<RouteKind>>> = {
  http: ["HTTPRoute", "GRPCRoute"],
  https: ["HTTPRoute", "GRPCRoute"],
  "tls-passthrough": ["TLSRoute"],
  "tls-terminate": ["TLSRoute", "TCPRoute"],
  tcp: ["TCPRoute"],
}

/** Which listeners may share a port: HTTP with HTTP, TLS-based with TLS-based (by SNI), TCP with none. */
export const PORT_SHARING: Readonly<Record<ListenerClass, string>> = {
  http: "http",
  https: "tls",
  "tls-passthrough": "tls",
  "tls-terminate": "tls",
  tcp: "tcp",
}

export const classOf = (listener: Listener): ListenerClass | undefined => {
  switch (listener.protocol) {
    case "HTTP":
    case "GRPC":
      return "http"
    case "HTTPS":
      return "https"
    case "TLS":
      return listener.tls?.mode === "Passthrough" ? "tls-passthrough" : "tls-terminate"
    case "TCP":
      return "tcp"
    default:
      return undefined
  }
}

export const SERVER_PROTOCOL: Readonly<Record<ListenerClass, string>> = {
  http: "HTTP",
  https: "HTTPS",
  "tls-passthrough": "TLS",
  "tls-terminate": "TLS",
  tcp: "TCP",
}

export const supportedKindsOf = (
  listener: Listener,
  listenerClass: ListenerClass,
  problems: Array<Problem>,
): ReadonlyArray<{ readonly group: string; readonly kind: RouteKind }> => {
  const supported = ROUTE_KINDS_BY_CLASS[listenerClass]
  const wanted: ReadonlyArray<RouteGroupKind> = listener.allowedRoutes?.kinds ?? []
  if (wanted.length === 0) return supported.map((kind) => ({ group: GATEWAY_API_GROUP, kind }))
  const out: Array<{ group: string; kind: RouteKind }> = []
  for (const k of wanted) {
    const group = k.group ?? GATEWAY_API_GROUP
    const kind = supported.find((s) => s === k.kind)
    if (group === GATEWAY_API_GROUP && kind !== undefined) {
      if (!out.some((o) => o.kind === kind)) out.push({ group, kind })
    } else {
      problems.push({
        reason: Reason.InvalidRouteKinds,
        message: `route kind ${group}/${k.kind} is not supported on a ${listener.protocol} listener`,
      })
    }
  }
  return out
}

export interface PortClaim {
  readonly sharing: string
  readonly hostname: string
  readonly name: string
}

export const conflictWith = (
  claims: ReadonlyArray<PortClaim>,
  listener: Listener,
  listenerClass: ListenerClass,
): Problem | undefined => {
  const sharing = PORT_SHARING[listenerClass]
  const hostname = (listener.hostname ?? "").toLowerCase()
  for (const claim of claims) {
    if (claim.sharing !== sharing || sharing === "tcp") {
      return {
        reason: Reason.ProtocolConflict,
        message: `port ${listener.port} is already used by listener ${claim.name} with a protocol that cannot share it`,
      }
    }
    if (claim.hostname === hostname) {
      return {
        reason: Reason.HostnameConflict,
        message: `listener ${claim.name} already serves hostname "${hostname || "*"}" on port ${listener.port}`,
      }
    }
  }
  return undefined
}
