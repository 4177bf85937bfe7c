/**
 * Watch streams: synthetic ADDED events for the current state (no resourceVersion or "0"),
 * or a replay of the history after a resourceVersion, then live events; objects moving in or
 * out of the selectors become ADDED/DELETED as on the real server; periodic BOOKMARKs when
 * asked for; the stream ends at `timeoutSeconds` or when a test drops every watch.
 */

import type { KubeObject } from "./resources.js"
import { storageKey } from "./resources.js"
import type { Api, Scope } from "./rest.js"
import { failure } from "./status.js"
import type { Store, StoreEvent } from "./store.js"

export interface WatchParams {
  readonly resourceVersion?: string
  readonly labelSelector?: string
  readonly fieldSelector?: string
  readonly allowWatchBookmarks: boolean
  readonly sendInitialEvents?: boolean
  readonly timeoutSeconds?: number
}

/** Where events go: one JSON document per line. */
export interface WatchSink {
  readonly write: (line: string) => void
  readonly end: () => void
}

type Line = { type: string; object: unknown }

export class Watches {
  private readonly active = new Set<{ readonly close: () => void; readonly bookmark: () => void }>()

  constructor(
    private readonly store: Store,
    private readonly api: Api,
    private readonly bookmarkIntervalMillis: number,
  ) {}

  get count(): number {
    return this.active.size
  }

  /** The Status of an expired start, or undefined when the watch can start from `rv`. */
  expired(scope: Scope, params: WatchParams): ReturnType<typeof failure> | undefined {
    const rv = params.resourceVersion
    if (rv === undefined || rv === "" || rv === "0") return undefined
    if (this.store.eventsSince(scope.type, Number(rv)) !== undefined) return undefined
    return failure(410, "Expired", `too old resource version: ${rv} (${this.store.oldestResourceVersion})`)
  }

  /** Starts streaming into `sink`; returns the function that stops it (on client disconnect). */
  start(scope: Scope, params: WatchParams, sink: WatchSink): () => void {
    const { type, version } = scope
    const expired = this.expired(scope, params)
    if (expired !== undefined) {
      sink.write(JSON.stringify({ type: "ERROR", object: expired }))
      sink.end()
      return () => {}
    }
    const matches = this.api.matcher(type, params)
    const inScope = (o: KubeObject) => scope.namespace === undefined || o.metadata.namespace === scope.namespace
    const send = (line: Line) => sink.write(JSON.stringify(line))
    const event = (t: string, o: KubeObject) => send({ type: t, object: this.api.present(type, version, o) })
    const bookmark = (annotations?: Record<string, string>) =>
      send({
        type: "BOOKMARK",
        object: {
          kind: type.kind,
          apiVersion: this.api.present(type, version, { metadata: {} }).apiVersion,
          metadata: { resourceVersion: String(this.store.resourceVersion), ...(annotations ? { annotations } : {}) },
        },
      })
    const deliver = (e: StoreEvent) => {
      if (e.key !== storageKey(type) || !inScope(e.object)) return
      const was = e.previous !== undefined && e.type !== "ADDED" && matches(e.previous)
      const is = e.type !== "DELETED" && matches(e.object)
      if (e.type === "DELETED") {
        if (was) event("DELETED", e.object)
      } else if (was && is) event("MODIFIED", e.object)
      else if (is) event("ADDED", e.object)
      else if (was) event("DELETED", e.object)
    }

    const rv = params.resourceVersion
    if (rv === undefined || rv === "" || rv === "0" || params.sendInitialEvents === true) {
      for (const o of this.store.list(type, scope.namespace)) if (matches(o)) event("ADDED", o)
      if (params.sendInitialEvents === true && params.allowWatchBookmarks)
        bookmark({ "k8s.io/initial-events-end": "true" })
    } else for (const e of this.store.eventsSince(type, Number(rv))!) deliver(e)

    const unsubscribe = this.store.subscribe(deliver)
    const timers: Array<NodeJS.Timeout> = []
    if (params.allowWatchBookmarks) timers.push(setInterval(() => bookmark(), this.bookmarkIntervalMillis))
    if (params.timeoutSeconds !== undefined && params.timeoutSeconds > 0)
      timers.push(setTimeout(() => close(), params.timeoutSeconds * 1000))
    const handle = { close: () => close(), bookmark: () => (params.allowWatchBookmarks ? bookmark() : undefined) }
    let closed = false
    const stop = () => {
      if (closed) return
      closed = true
      unsubscribe()
      for (const t of timers) clearTimeout(t)
      this.active.delete(handle)
    }
    const close = () => {
      stop()
      sink.end()
    }
    this.active.add(handle)
    return stop
  }

  /** Test hook: ends every open watch stream (clients see the stream close and re-watch). */
  dropAll(): void {
    for (const w of [...this.active]) w.close()
  }

  /** Test hook: a BOOKMARK now on every watch that asked for bookmarks. */
  bookmarkAll(): void {
    for (const w of this.active) w.bookmark()
  }
}
