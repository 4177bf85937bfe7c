/**
 * Which service hosts a connection's watched names stand for, so a push reaches only the
 * connections a change can affect. Memoised per names object (and per services snapshot or
 * PushContext where the answer depends on them): thousands of connections ask on every push.
 * The memos belong to a `WatchedHosts` instance, one per server (`makeWatchedHosts`), so two
 * servers in one process share none of them.
 */
import { hostOfResourceName, type PushContext } from "../model/push-context.js"
import type { PushRequest } from "./push-request.js"

/** The host of a cluster name (the fourth `|`-separated field, as `hostOfResourceName` reads it). */
export const clusterHost = (name: string): string | undefined => {
  if (!name.startsWith("outbound|")) return undefined
  const subset = name.indexOf("|", 9)
  const host = subset < 0 ? -1 : name.indexOf("|", subset + 1)
  if (host < 0) return undefined
  const end = name.indexOf("|", host + 1)
  return name.slice(host + 1, end < 0 ? undefined : end)
}

/** The hosts of cluster names (`outbound|port|subset|host`), or null when one is not one. */
const hostsOfClusters = (names: Iterable<string>): ReadonlySet<string> | null => {
  const hosts = new Set<string>()
  for (const name of names) {
    const host = clusterHost(name)
    if (host === undefined) return null
    hosts.add(host)
  }
  return hosts
}

/**
 * The hosts an endpoints-only request changed, from its keys (`ServiceEntry/<namespace>/<host>`,
 * as `diffInputs` names them): what `changedHosts` would find by fingerprinting every host's
 * endpoints. Undefined when the request names nothing or something else (fall back to that).
 */
export const endpointHosts = (request: PushRequest): ReadonlySet<string> | undefined => {
  const hosts = new Set<string>()
  for (const key of request.configsUpdated) {
    const parts = key.split("/")
    if (parts.length !== 3 || parts[0] !== "ServiceEntry") return undefined
    hosts.add(parts[2]!)
  }
  return hosts.size > 0 ? hosts : undefined
}

/** One server's memos of the hosts its connections' watches stand for. */
export interface WatchedHosts {
  /**
   * The hosts of a watch's names when they are all cluster names (`outbound|port|subset|host`,
   * whose host no PushContext changes), per names object: computed once per watch change, not
   * once per push. Undefined for other names (looked up per PushContext instead).
   */
  readonly clusterHostsOf: (names: Iterable<string>) => ReadonlySet<string> | undefined
  /**
   * The hosts of a watch's other names (`host:port` listeners and routes, inbound listeners), per
   * names object and per services snapshot: a name's host depends only on which services exist
   * (`lookupService`), so a config change that keeps the services (the same array) reuses it.
   * Null when a name has no host: the watch may be affected by any change.
   */
  readonly namedHostsOf: (push: PushContext, names: Iterable<string>) => ReadonlySet<string> | null
}

export const makeWatchedHosts = (): WatchedHosts => {
  const clusterHosts = new WeakMap<Iterable<string>, ReadonlySet<string> | null>()
  const namedHosts = new WeakMap<
    Iterable<string>,
    {
      readonly services: PushContext["input"]["services"]
      readonly suffix: string
      readonly hosts: ReadonlySet<string> | null
    }
  >()
  /**
   * The service host of each watched name, per PushContext: every connection asks about the same
   * few thousand names, so each is looked up once per push, not once per connection.
   */
  const hostMemo = new WeakMap<PushContext, Map<string, string | undefined>>()
  const hostsOfNames = (push: PushContext): Map<string, string | undefined> => {
    let memo = hostMemo.get(push)
    if (memo === undefined) {
      memo = new Map()
      hostMemo.set(push, memo)
    }
    return memo
  }
  return {
    clusterHostsOf: (names) => {
      let hosts = clusterHosts.get(names)
      if (hosts === undefined) {
        hosts = hostsOfClusters(names)
        clusterHosts.set(names, hosts)
      }
      return hosts ?? undefined
    },
    namedHostsOf: (push, names) => {
      const memo = namedHosts.get(names)
      if (memo !== undefined && memo.services === push.input.services && memo.suffix === push.options.domainSuffix)
        return memo.hosts
      const hostOf = hostsOfNames(push)
      let hosts: Set<string> | null = new Set()
      for (const name of names) {
        let host = hostOf.get(name)
        if (host === undefined && !hostOf.has(name)) {
          host = hostOfResourceName(push, name)
          hostOf.set(name, host)
        }
        if (host === undefined) {
          hosts = null
          break
        }
        hosts.add(host)
      }
      namedHosts.set(names, { services: push.input.services, suffix: push.options.domainSuffix, hosts })
      return hosts
    },
  }
}
