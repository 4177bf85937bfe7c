/**
 * Host matching between Gateway servers and VirtualServices, wildcard-aware in both directions:
 * a server `*.example.com` takes a VirtualService for `a.example.com`, and a VirtualService for
 * `*.example.com` serves a server `a.example.com` (the more specific name is the virtual host).
 * Server hosts may be `namespace/host`: only VirtualServices of that namespace match them.
 */

/** Whether `host` is within `pattern` (`*` anything, `*.x.com` any name ending `.x.com`, else equal). */
export const subsetOf = (host: string, pattern: string): boolean => {
  if (pattern === "*") return true
  if (host === pattern) return true
  if (!pattern.startsWith("*")) return false
  // `*.a.com` within `*.com`; `b.a.com` within `*.a.com`.
  const suffix = pattern.slice(1)
  return host.startsWith("*") ? host.slice(1).endsWith(suffix) : host.endsWith(suffix)
}

/** The server hosts that apply to a VirtualService in `namespace`, without their namespaces. */
export const hostsForNamespace = (serverHosts: ReadonlyArray<string>, namespace: string): ReadonlyArray<string> =>
  serverHosts.flatMap((h) => {
    const slash = h.indexOf("/")
    if (slash < 0) return [h]
    const ns = h.slice(0, slash)
    return ns === namespace || ns === "*" ? [h.slice(slash + 1)] : []
  })

/** The names both sets cover: for each overlapping pair the more specific of the two. */
export const intersectHosts = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const x of a)
    for (const y of b) {
      const pick = subsetOf(x, y) ? x : subsetOf(y, x) ? y : undefined
      if (pick !== undefined && !out.includes(pick)) out.push(pick)
    }
  return out
}

/** Whether a server host (namespace-qualified or not) overlaps one of the VirtualService's hosts. */
export const serverMatchesVirtualService = (
  serverHosts: ReadonlyArray<string>,
  vsHosts: ReadonlyArray<string>,
  vsNamespace: string,
): boolean => {
  const hosts = serverHosts.flatMap((h) => {
    const slash = h.indexOf("/")
    if (slash < 0) return [h]
    return h.slice(0, slash) === vsNamespace ? [h.slice(slash + 1)] : []
  })
  return vsHosts.some((v) => hosts.some((g) => subsetOf(v, g) || subsetOf(g, v)))
}
