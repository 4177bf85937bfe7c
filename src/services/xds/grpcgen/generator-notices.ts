/**
 * What the (pure) generators have to tell about the config they read: a field they skip, a
 * policy they cannot express. Notices are about config, not about requests: each is reported
 * once per process (the same text again is dropped), and waits here until the ADS server takes
 * it (`takeGeneratorNotices`) and logs it with the program's logger, level and scope.
 */

export interface GeneratorNotice {
  readonly level: "info" | "warning"
  /** The log scope (`authorization`, `grpcgen`, ...). */
  readonly scope: string
  readonly message: string
}

const reported = new Set<string>()
// Bounded: a config churning through distinct texts forgets the oldest rather than growing.
const MAX_REPORTED = 10_000
let pending: Array<GeneratorNotice> = []

/** Queues each notice whose text was not reported before. */
export const noticeOnce = (notices: ReadonlyArray<GeneratorNotice>): void => {
  for (const notice of notices) {
    const key = `${notice.level}\u0000${notice.scope}\u0000${notice.message}`
    if (reported.has(key)) continue
    if (reported.size >= MAX_REPORTED) reported.clear()
    reported.add(key)
    pending.push(notice)
  }
}

/** The notices queued since the last call, each reported once per process. */
export const takeGeneratorNotices = (): ReadonlyArray<GeneratorNotice> => {
  const taken = pending
  pending = []
  return taken
}
