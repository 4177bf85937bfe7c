/**
 * What the (pure) generators have to tell about the config they read: a field they skip, a
 * policy they cannot express. Generators return their notices as data beside the resources
 * (`Generated`); the responder hands them to the notice log of the server's cache, and the ADS
 * server takes them from there and logs them with the program's logger, level and scope.
 * Notices are about config, not about requests: each is reported once per log, that is once per
 * server (the same text again is dropped), and two servers in one process each report it.
 */
import type { ResourceSpec } from "../cache/resource-spec.js"
import type { XdsResourceMessage } from "../protocol/xds-types.js"

export interface GeneratorNotice {
  readonly level: "info" | "warning"
  /** The log scope (`authorization`, `grpcgen`, ...). */
  readonly scope: string
  readonly message: string
}

/** What a generator returns: the resource specs (of message type `T`), and what it had to say about the config. */
export interface Generated<T extends XdsResourceMessage = XdsResourceMessage> {
  readonly resources: ReadonlyArray<ResourceSpec<T>>
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

/** No notices: shared, so the common case allocates nothing. */
export const noNotices: ReadonlyArray<GeneratorNotice> = Object.freeze([])

/** One server's notices: each text reported once, queued until the server takes them. */
export interface NoticeLog {
  /** Queues each notice whose text this log did not report before. */
  readonly report: (notices: ReadonlyArray<GeneratorNotice>) => void
  /** The notices queued since the last call. */
  readonly take: () => ReadonlyArray<GeneratorNotice>
}

// Bounded: a config churning through distinct texts forgets the oldest rather than growing.
const MAX_REPORTED = 10_000

export const makeNoticeLog = (): NoticeLog => {
  const reported = new Set<string>()
  let pending: Array<GeneratorNotice> = []
  return {
    report: (notices) => {
      for (const notice of notices) {
        const key = `${notice.level}\u0000${notice.scope}\u0000${notice.message}`
        if (reported.has(key)) continue
        if (reported.size >= MAX_REPORTED) reported.clear()
        reported.add(key)
        pending.push(notice)
      }
    },
    take: () => {
      if (pending.length === 0) return noNotices
      const taken = pending
      pending = []
      return taken
    },
  }
}
