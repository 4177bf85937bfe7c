/** How a connection and its watches show on the debug pages (`/debug/adsz`, `/debug/syncz`). */
import type { DeltaState } from "./delta.js"
import type { ProxyInfo } from "./responder.js"
import type { ConnectionStatus, WatchStatus } from "./server.js"
import type { SotwState } from "./sotw.js"

/** A watch as the debug pages show it: the optional progress fields only when they are set. */
const watchStatus = (
  typeUrl: string,
  wildcard: boolean,
  names: ReadonlyArray<string>,
  progress: Omit<WatchStatus, "typeUrl" | "wildcard" | "names">,
): WatchStatus => {
  const status: { -readonly [K in keyof WatchStatus]: WatchStatus[K] } = { typeUrl, wildcard, names }
  for (const key of ["nonceSent", "nonceAcked", "versionSent", "versionAcked", "lastError"] as const) {
    const value = progress[key]
    if (value !== undefined) status[key] = value
  }
  return status
}

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
): ConnectionStatus =>
  connectionStatus(
    id,
    peer,
    proxy,
    connectedAt,
    false,
    [...state.watches.values()].map((w) => watchStatus(w.typeUrl, w.wildcard, w.names, w)),
  )

export const deltaStatus = (
  id: string,
  peer: string,
  proxy: ProxyInfo | undefined,
  connectedAt: number,
  state: DeltaState,
): ConnectionStatus =>
  connectionStatus(
    id,
    peer,
    proxy,
    connectedAt,
    true,
    // Delta streams carry no version per type: only nonces and the last error show.
    [...state.watches.values()].map((w) => watchStatus(w.typeUrl, w.wildcard, [...w.subscribed].sort(), w)),
  )
