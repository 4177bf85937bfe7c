/**
 * How many forwarded queries the DNS proxy holds at once (issue 34 finding 3). A query the table
 * answers costs nothing beyond its reply; a forwarded one holds a fiber, an upstream socket and
 * its timeout (5 s when the upstream is silent) until it ends, so a flood of unknown names grew
 * the agent without bound and starved every other client. Each forwarded query takes a slot:
 * one of `total` for the whole proxy and one of `perClient` for its client (a UDP source
 * address and port, or a TCP connection). What happens without a slot is the caller's to decide
 * (dns-proxy.ts: over UDP a client past its own bound is dropped, any query past the total is
 * refused; a TCP connection is no longer read until one of its queries ends).
 *
 * Per instance state (one per DNS proxy), no timers: the counts change only on acquire and
 * release, and a client's entry exists only while it holds a slot, so the map never holds more
 * than `total` entries.
 */

export interface InflightLimits {
  /** `DNS_PROXY_MAX_INFLIGHT`: forwarded queries in flight, all clients together. */
  readonly total: number
  /** `DNS_PROXY_MAX_INFLIGHT_PER_CLIENT`: for one UDP source or one TCP connection. */
  readonly perClient: number
}

/** Why a slot was not given. */
export type Refusal = "total" | "client"

export interface Inflight {
  /** Takes a slot for `client`, or says which bound is reached. */
  readonly acquire: (client: string) => Refusal | undefined
  /** Gives back a slot `acquire` gave. */
  readonly release: (client: string) => void
  /** Slots held, all clients together. */
  readonly held: () => number
  /** Slots `client` holds. */
  readonly heldBy: (client: string) => number
}

export const makeInflight = (limits: InflightLimits): Inflight => {
  const total = Math.max(1, limits.total)
  const perClient = Math.max(1, limits.perClient)
  const byClient = new Map<string, number>()
  let held = 0
  return {
    acquire: (client) => {
      const mine = byClient.get(client) ?? 0
      if (mine >= perClient) return "client"
      if (held >= total) return "total"
      byClient.set(client, mine + 1)
      held++
      return undefined
    },
    release: (client) => {
      const mine = byClient.get(client)
      if (mine === undefined) return
      if (mine <= 1) byClient.delete(client)
      else byClient.set(client, mine - 1)
      held--
    },
    held: () => held,
    heldBy: (client) => byClient.get(client) ?? 0,
  }
}

/** What the proxy turned away since its last report (one summary line per interval, not one per query). */
export interface OverloadTally {
  /** Queries answered REFUSED: the proxy's total bound was reached. */
  refused: number
  /** UDP queries dropped: their client had reached its own bound. */
  dropped: number
  /** Times a TCP connection stopped being read (its queries in flight or unread answers at the bound). */
  paused: number
}

export const emptyTally = (): OverloadTally => ({ refused: 0, dropped: 0, paused: 0 })

/** The summary line of a tally, or undefined when nothing was turned away. */
export const tallyLine = (tally: OverloadTally, windowText: string, limits: InflightLimits): string | undefined => {
  if (tally.refused === 0 && tally.dropped === 0 && tally.paused === 0) return undefined
  return (
    `DNS proxy at its bounds in the last ${windowText}: ${tally.refused} queries refused ` +
    `(${limits.total} forwarded at once), ${tally.dropped} UDP queries dropped ` +
    `(${limits.perClient} per client), ${tally.paused} TCP connections paused`
  )
}
