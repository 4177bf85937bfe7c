/**
 * Gateway-API hostname rules: a listener hostname and a route's hostnames meet where one is
 * within the other (`*.example.com` takes any name ending `.example.com`, any number of labels,
 * but not `example.com` itself); the more specific name is the one that is served. Names are
 * compared without regard to case.
 */

export const isWildcard = (hostname: string): boolean => hostname.startsWith("*")

/** Whether `host` (itself possibly a wildcard) is within `pattern`. */
export const within = (host: string, pattern: string): boolean => {
  if (host === pattern || pattern === "*") return true
  if (!isWildcard(pattern)) return false
  const suffix = pattern.slice(1)
  const rest = isWildcard(host) ? host.slice(1) : host
  return rest.endsWith(suffix) && rest !== suffix
}

/**
 * The hostnames a route serves through a listener: the route's own when the listener has none,
 * the listener's when the route has none, else those each has in common with the other (the
 * more specific of each meeting pair); empty when they do not meet.
 */
export const intersectHostnames = (
  listenerHostname: string | undefined,
  routeHostnames: ReadonlyArray<string>,
): ReadonlyArray<string> => {
  const routes = [...new Set(routeHostnames.map((h) => h.toLowerCase()))]
  const listener =
    listenerHostname === undefined || listenerHostname === "" ? undefined : listenerHostname.toLowerCase()
  if (listener === undefined) return routes.length === 0 ? ["*"] : routes
  if (routes.length === 0) return [listener]
  const out: Array<string> = []
  for (const host of routes) {
    const served = within(host, listener) ? host : within(listener, host) ? listener : undefined
    if (served !== undefined && !out.includes(served)) out.push(served)
  }
  return out
}

/** The names not already covered by a wildcard in the list (a VirtualService refuses overlapping hosts). */
export const withoutCovered = (hostnames: ReadonlyArray<string>): ReadonlyArray<string> =>
  hostnames.filter((h, i) => !hostnames.some((other, j) => j !== i && other !== h && within(h, other)))
