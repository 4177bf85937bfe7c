/**
 * The agents watching the CA's trust bundle (`WatchTrustBundle`) and the bundle version each one
 * acknowledged: what phase (a) of a key rotation waits on, and what the CA debug page and the
 * `meshca_server_trust_bundle_*` gauges show. Immutable values; the CA keeps the current one.
 */
import type { WatcherCounts } from "./key-rotation.js"

export interface TrustBundleWatcher {
  /** The caller's identity (SPIFFE URI or orchestrator account), cut short. */
  readonly identity: string
  /** The peer address. */
  readonly peer: string
  /** The version last acknowledged, if any. */
  readonly acked: string | undefined
}

export type TrustBundleWatchers = ReadonlyMap<number, TrustBundleWatcher>

export const noWatchers: TrustBundleWatchers = new Map()

/** A caller's text kept here is cut to this many characters. */
export const WATCHER_TEXT_MAX = 256

export const addWatcher = (
  watchers: TrustBundleWatchers,
  id: number,
  identity: string,
  peer: string,
): TrustBundleWatchers =>
  new Map(watchers).set(id, {
    identity: identity.slice(0, WATCHER_TEXT_MAX),
    peer: peer.slice(0, WATCHER_TEXT_MAX),
    acked: undefined,
  })

export const removeWatcher = (watchers: TrustBundleWatchers, id: number): TrustBundleWatchers => {
  if (!watchers.has(id)) return watchers
  const next = new Map(watchers)
  next.delete(id)
  return next
}

export const ackWatcher = (watchers: TrustBundleWatchers, id: number, version: string): TrustBundleWatchers => {
  const watcher = watchers.get(id)
  if (watcher === undefined || watcher.acked === version) return watchers
  return new Map(watchers).set(id, { ...watcher, acked: version.slice(0, WATCHER_TEXT_MAX) })
}

export const countWatchers = (watchers: TrustBundleWatchers, version: string): WatcherCounts => {
  let current = 0
  for (const w of watchers.values()) if (w.acked === version) current++
  return { total: watchers.size, current }
}

/** At most this many watchers that lag are listed on the debug page. */
export const LAGGING_LISTED = 100

/** The watchers that have not acknowledged `version` (the first `LAGGING_LISTED`). */
export const laggingWatchers = (watchers: TrustBundleWatchers, version: string): ReadonlyArray<TrustBundleWatcher> => {
  const out: Array<TrustBundleWatcher> = []
  for (const w of watchers.values()) {
    if (w.acked === version) continue
    out.push(w)
    if (out.length >= LAGGING_LISTED) break
  }
  return out
}
