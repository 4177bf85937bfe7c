/** How a connection and its watches show on the debug pages (`/debug/adsz`, `/debug/syncz`). */

import type { ProxyInfo } from "../cache/responder.js"
import type { ConnectionStatus, WatchStatus } from "../server.js"
import type { DeltaState } from "./delta.js"
import type { SotwState } from "./sotw.js"
import type { SyncSince } from "./sync-state.js"

/** Per type URL, why the names a connection asked for have no resource (`missingResource`). */
export type NotFoundByType = ReadonlyMap<string, ReadonlyArray<string>>

/**
 * What a connection's latest responses could not find, per type. A client dialling a
 * `host:port` the mesh does not know is only told DEADLINE_EXCEEDED by its library: this is
 * what `/debug/syncz` shows it as `warnings` (and the `ads` debug log says once per change).
 */
export interface NotFoundLog {
  /** Records the latest response's list for a type; returns the texts new since the last one. */
  readonly record: (typeUrl: string, notFound: ReadonlyArray<string>) => ReadonlyArray<string>
  readonly byType: () => NotFoundByType
}

export const makeNotFoundLog = (): NotFoundLog => {
  const byType = new Map<string, ReadonlyArray<string>>()
  return {
    record: (typeUrl, notFound) => {
      const before = byType.get(typeUrl)
      // The common case, every push: nothing missing before or now.
      if (notFound.length === 0) {
        if (before !== undefined) byType.delete(typeUrl)
        return []
      }
      byType.set(typeUrl, notFound)
      if (before === undefined) return notFound
      const known = new Set(before)
      return notFound.filter((text) => !known.has(text))
    },
    byType: () => byType,
  }
}

/** A watch as the debug pages show it: the optional progress fields only when they are set. */
const watchStatus = (
  typeUrl: string,
  wildcard: boolean,
  names: ReadonlyArray<string>,
  progress: Omit<WatchStatus, "typeUrl" | "wildcard" | "names" | "warnings">,
  notFound: NotFoundByType | undefined,
): WatchStatus => {
  const status: { -readonly [K in keyof WatchStatus]: WatchStatus[K] } = { typeUrl, wildcard, names }
  for (const key of ["nonceSent", "nonceAcked", "versionSent", "versionAcked", "lastError"] as const) {
    const value = progress[key]
    if (value !== undefined) status[key] = value
  }
  const warnings = notFound?.get(typeUrl)
  if (warnings !== undefined && warnings.length > 0) status.warnings = warnings
  return status
}

/** The status with each watch's `stateSince` from the stream's record (sync-state.ts). */
export const withSince = (status: ConnectionStatus, since: SyncSince): ConnectionStatus => ({
  ...status,
  watches: status.watches.map((w) => {
    const at = since.since(w.typeUrl)
    return at === undefined ? w : { ...w, stateSince: at }
  }),
})

const connectionStatus = (
  id: string,
  peer: string,
  proxy: ProxyInfo | undefined,
  connectedAt: number,
  delta: boolean,
  watches: ReadonlyArray<WatchStatus>,
): ConnectionStatus => ({
  id,
  peer,
  nodeId: proxy?.id ?? "",
  generator: proxy?.generator ?? "",
  ...(proxy !== undefined ? { proxy } : {}),
  delta,
  connectedAt,
  watches,
})

export const sotwStatus = (
  id: string,
  peer: string,
  proxy: ProxyInfo | undefined,
  connectedAt: number,
  state: SotwState,
  notFound?: NotFoundByType,
): ConnectionStatus =>
  connectionStatus(
    id,
    peer,
    proxy,
    connectedAt,
    false,
    [...state.watches.values()].map((w) => watchStatus(w.typeUrl, w.wildcard, w.names, w, notFound)),
  )

export const deltaStatus = (
  id: string,
  peer: string,
  proxy: ProxyInfo | undefined,
  connectedAt: number,
  state: DeltaState,
  notFound?: NotFoundByType,
): ConnectionStatus =>
  connectionStatus(
    id,
    peer,
    proxy,
    connectedAt,
    true,
    // Delta streams carry no version per type: only nonces and the last error show.
    [...state.watches.values()].map((w) => watchStatus(w.typeUrl, w.wildcard, [...w.subscribed].sort(), w, notFound)),
  )
