/**
 * Which connections watch which service hosts' endpoints: the fan-out of an endpoint-only push
 * asks only the connections whose EDS watch names a changed host (plus those that cannot be
 * indexed), instead of every connected proxy. With thousands of proxies each watching a few
 * services, an endpoint change then costs the proxies it affects, not the mesh.
 *
 * A connection's EDS watch is indexed by the hosts of its cluster names (`clusterHostsOf`);
 * a watch that is wildcard, names something else, or must be answered anyway (a delta watch
 * with pending names) is "any": asked on every endpoint push.
 */

/** What a connection's EDS watch covers: hosts, every host, or nothing (no EDS watch). */
export type EndpointWatch = ReadonlySet<string> | "any" | undefined

export interface EndpointWatchers<C> {
  /** Records what `connection` watches now; cheap when it is the same set as last time. */
  readonly set: (connection: C, watch: EndpointWatch) => void
  readonly delete: (connection: C) => void
  /** The connections that may be affected by a change of `hosts`, each once. */
  readonly candidates: (hosts: Iterable<string>) => ReadonlySet<C>
  /** Whether any connection may be affected by a change of `hosts` (without listing them). */
  readonly watched: (hosts: Iterable<string>) => boolean
}

export const makeEndpointWatchers = <C>(): EndpointWatchers<C> => {
  const byHost = new Map<string, Set<C>>()
  const any = new Set<C>()
  const indexed = new Map<C, EndpointWatch>()

  const unindex = (connection: C, watch: EndpointWatch) => {
    if (watch === "any") any.delete(connection)
    else if (watch !== undefined)
      for (const host of watch) {
        const set = byHost.get(host)
        if (set === undefined) continue
        set.delete(connection)
        if (set.size === 0) byHost.delete(host)
      }
  }

  return {
    set: (connection, watch) => {
      const previous = indexed.get(connection)
      if (previous === watch && indexed.has(connection)) return
      unindex(connection, previous)
      indexed.set(connection, watch)
      if (watch === "any") any.add(connection)
      else if (watch !== undefined)
        for (const host of watch) {
          let set = byHost.get(host)
          if (set === undefined) {
            set = new Set()
            byHost.set(host, set)
          }
          set.add(connection)
        }
    },
    delete: (connection) => {
      if (!indexed.has(connection)) return
      unindex(connection, indexed.get(connection))
      indexed.delete(connection)
    },
    candidates: (hosts) => {
      const out = new Set<C>(any)
      for (const host of hosts) for (const connection of byHost.get(host) ?? []) out.add(connection)
      return out
    },
    watched: (hosts) => {
      if (any.size > 0) return true
      for (const host of hosts) if ((byHost.get(host)?.size ?? 0) > 0) return true
      return false
    },
  }
}
