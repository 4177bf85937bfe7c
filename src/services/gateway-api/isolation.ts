/**
 * Listener isolation (Gateway API): a request goes to the listener with the most specific
 * hostname that matches it, so a route attached to a broad listener (no hostname, or
 * `*.example.com`) must not serve names that a more specific listener of the same Gateway, port
 * and protocol owns (`*.foo.example.com`, `abc.foo.example.com`). A route hostname that falls
 * within such a listener's hostname is left out of what the broad listener serves; the route
 * stays attached (the reference reports nothing for it either).
 */
import type { GatewayState, ListenerState } from "./gateways.js"
import { isWildcard, within } from "./hostnames.js"

/** The hostnames of the other listeners sharing `own`'s port and protocol (`""` for none). */
export const isolatingHostnames = (gateway: GatewayState, own: ListenerState): ReadonlyArray<string> => {
  const ownHostname = own.listener.hostname ?? ""
  return gateway.listeners
    .filter(
      (l) =>
        l !== own &&
        l.listener.port === own.listener.port &&
        l.listener.protocol === own.listener.protocol &&
        (l.listener.hostname ?? "") !== ownHostname,
    )
    .map((l) => (l.listener.hostname ?? "").toLowerCase())
}

/**
 * Whether `host` (already within the listener's hostname) is served through a listener of
 * hostname `own` (`""` for none) beside listeners of hostnames `others`: not when one of
 * them at least as long as `own` (so at least as specific) takes it.
 */
export const allowedByIsolation = (host: string, own: string, others: ReadonlyArray<string>): boolean => {
  const name = host.toLowerCase()
  const ownHost = own.toLowerCase()
  // An exact listener hostname is the most specific there is.
  if (ownHost !== "" && !isWildcard(ownHost)) return true
  if (ownHost !== "" && !within(name, ownHost)) return false
  return others.every((o) => {
    const other = o.toLowerCase()
    return other === "" || other.length < ownHost.length || !within(name, other)
  })
}
