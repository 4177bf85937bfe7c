/**
 * One watch request on the client's own agent (shared TLS context and sessions, unlike a
 * connection per watch): the API server streams one JSON event per line. A non-200 answer ends
 * it with the server's Status as the error (410 Gone included); a line that is not JSON is
 * skipped; `close` ends it with no error. `onDone` is called exactly once.
 */
import type * as http from "node:http"
import type { OrchestratorError, WatchEvent, WatchHandle } from "../../services/orchestrator/client.js"

/** TCP keep-alive probes on the watch's socket: a silently dropped connection is noticed. */
const KEEP_ALIVE_MILLIS = 30_000

export interface WatchStreamOptions {
  /** Starts the request (`http.request` or `https.request` with the client's agent and headers). */
  readonly start: (onResponse: (res: http.IncomingMessage) => void) => http.ClientRequest
  /** The error of a non-200 answer, from its status and body. */
  readonly errorOf: (status: number, body: string, retryAfter: string | undefined) => OrchestratorError
  /** The error of a request or stream that failed (network). */
  readonly networkError: (e: NodeJS.ErrnoException) => OrchestratorError
}

/** Splits a byte stream into lines without copying more than the unfinished tail. */
const lineSplitter = (onLine: (line: string) => void) => {
  let tail = ""
  return {
    push: (chunk: string) => {
      let start = 0
      let end = chunk.indexOf("\n")
      if (end < 0) {
        tail += chunk
        return
      }
      onLine(tail + chunk.slice(0, end))
      tail = ""
      start = end + 1
      for (end = chunk.indexOf("\n", start); end >= 0; end = chunk.indexOf("\n", start)) {
        onLine(chunk.slice(start, end))
        start = end + 1
      }
      tail = chunk.slice(start)
    },
    end: () => {
      if (tail !== "") onLine(tail)
      tail = ""
    },
  }
}

export const openWatchStream = (
  options: WatchStreamOptions,
  onEvent: (event: WatchEvent) => void,
  onDone: (error: OrchestratorError | undefined) => void,
): WatchHandle => {
  let finished = false
  const done = (error: OrchestratorError | undefined) => {
    if (finished) return
    finished = true
    onDone(error)
  }
  const req = options.start((res) => {
    const status = res.statusCode ?? 0
    res.setEncoding("utf8")
    if (status !== 200) {
      let body = ""
      res.on("data", (c: string) => {
        if (body.length < 64 * 1024) body += c
      })
      res.on("end", () => {
        const retry = res.headers["retry-after"]
        done(options.errorOf(status, body, Array.isArray(retry) ? retry[0] : retry))
      })
      res.on("error", (e) => done(options.networkError(e)))
      return
    }
    res.socket?.setKeepAlive(true, KEEP_ALIVE_MILLIS)
    const lines = lineSplitter((line) => {
      if (finished || line.trim() === "") return
      let parsed: { type?: unknown; object?: unknown }
      try {
        parsed = JSON.parse(line) as { type?: unknown; object?: unknown }
      } catch {
        return
      }
      onEvent({ type: parsed.type as WatchEvent["type"], object: parsed.object })
    })
    res.on("data", (c: string) => lines.push(c))
    res.on("end", () => {
      lines.end()
      done(undefined)
    })
    res.on("error", (e) => done(options.networkError(e)))
    // A connection reset mid-stream closes without 'end' or 'error' on some Node.js versions.
    res.on("close", () => done(res.complete ? undefined : options.networkError(new Error("watch stream closed"))))
  })
  req.on("error", (e: NodeJS.ErrnoException) => done(options.networkError(e)))
  req.end()
  return {
    close: () => {
      if (finished) return
      done(undefined)
      req.destroy()
    },
  }
}
