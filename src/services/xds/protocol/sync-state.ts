/**
 * A watch's sync state as `/debug/syncz`, `/debug/ui` and `meshctl proxy-status` name it, and
 * since when it has been in it. The state follows from the nonces: nothing sent yet, the last
 * response acknowledged (SYNCED), sent and not yet acknowledged (STALE), or refused by the
 * client (NACKED, until an ACK clears the error). Each stream stamps a change as it steps, so
 * "STALE since 12:03:07" is when the unacknowledged response went out, not when someone looked.
 */

export type SyncState = "SYNCED" | "STALE" | "NACKED" | "NOT_SENT"

/** The fields of a watch (SotW or delta) the state is read from. */
export interface WatchProgress {
  readonly nonceSent?: string
  readonly nonceAcked?: string
  readonly lastError?: string
}

export const syncStateOf = (watch: WatchProgress): SyncState =>
  watch.lastError !== undefined
    ? "NACKED"
    : watch.nonceSent === undefined
      ? "NOT_SENT"
      : watch.nonceAcked === watch.nonceSent
        ? "SYNCED"
        : "STALE"

/** One stream's record of when each type's state (a new NACK reason counts as new) began. */
export interface SyncSince {
  /** Stamps `now` for `typeUrl` when its state differs from the one last marked. */
  readonly mark: (typeUrl: string, watch: WatchProgress | undefined, now: number) => void
  /** When the current state of `typeUrl` began (epoch millis), if it was marked. */
  readonly since: (typeUrl: string) => number | undefined
}

export const makeSyncSince = (): SyncSince => {
  const byType = new Map<string, { readonly key: string; readonly at: number }>()
  return {
    mark: (typeUrl, watch, now) => {
      if (watch === undefined) {
        byType.delete(typeUrl)
        return
      }
      const state = syncStateOf(watch)
      const key = state === "NACKED" ? `${state}:${watch.lastError}` : state
      if (byType.get(typeUrl)?.key !== key) byType.set(typeUrl, { key, at: now })
    },
    since: (typeUrl) => byType.get(typeUrl)?.at,
  }
}
