/**
 * FILE_MOUNTED_CERTS: follows the key, chain and root mounted in a directory. A change seen by
 * fs.watch on the directory (the orchestrator swaps a `..data` symlink, an operator may copy
 * files one by one) or by the poll (fs.watch misses events on some file systems and after the
 * directory is replaced) re-reads the three files after a debounce. A set that fails to parse,
 * or whose key does not match the certificate (caught half-replaced), keeps the previous good
 * identity and logs a warning once; the next change or poll tries again.
 */
import { type FSWatcher, watch } from "node:fs"
import { Duration, Effect, Queue, SubscriptionRef } from "effect"
import type { WorkloadCertificate } from "../../../services/agent/identity/identity.js"
import { withScope } from "../../../services/logging/logging.js"
import { readCertFiles } from "./files.js"

export interface MountedWatch {
  /** Delay between a detected change and the read (FILE_DEBOUNCE_DURATION). */
  readonly debounce: Duration.Duration
  /** Re-read at least this often, whatever fs.watch reports. */
  readonly pollInterval: Duration.Duration
}

export const DEFAULT_MOUNTED_WATCH: MountedWatch = {
  debounce: Duration.millis(100),
  pollInterval: Duration.seconds(5),
}

const sameFiles = (a: WorkloadCertificate, b: WorkloadCertificate) =>
  a.keyPem === b.keyPem && a.certChainPem === b.certChainPem && a.rootCertPem === b.rootCertPem

/** Forks (in the current scope) the loop that keeps `ref` in step with the files in `dir`. */
export const watchMountedCerts = (
  dir: string,
  ref: SubscriptionRef.SubscriptionRef<WorkloadCertificate>,
  options: MountedWatch,
  onReload: (cert: WorkloadCertificate) => Effect.Effect<void>,
) =>
  Effect.gen(function* () {
    const wake = yield* Queue.sliding<void>(1)
    yield* Effect.acquireRelease(
      Effect.sync((): FSWatcher | undefined => {
        try {
          const watcher = watch(dir, () => Queue.unsafeOffer(wake, undefined))
          // e.g. the directory was removed: the poll keeps going
          watcher.on("error", () => watcher.close())
          return watcher
        } catch {
          return undefined
        }
      }),
      (watcher) => Effect.sync(() => watcher?.close()),
    )
    yield* Effect.forkScoped(
      Effect.forever(Effect.sleep(options.pollInterval).pipe(Effect.zipRight(Queue.offer(wake, undefined)))),
    )
    let lastProblem = ""
    const reload = Effect.gen(function* () {
      yield* Queue.take(wake)
      if (Duration.toMillis(options.debounce) > 0) {
        yield* Effect.sleep(options.debounce)
        yield* Queue.takeAll(wake)
      }
      const current = yield* SubscriptionRef.get(ref)
      const next = yield* Effect.either(readCertFiles(dir))
      if (next._tag === "Left") {
        if (next.left.reason !== lastProblem) {
          lastProblem = next.left.reason
          yield* Effect.logWarning(
            `mounted certificates in ${dir} not reloaded, keeping the held certificate (valid until ${current.notAfter.toISOString()}): ${next.left.reason}`,
          )
        }
        return
      }
      lastProblem = ""
      if (sameFiles(current, next.right)) return
      yield* onReload(next.right)
      yield* SubscriptionRef.set(ref, next.right)
      yield* Effect.logInfo(
        `mounted certificate for ${next.right.identity} reloaded from ${dir}, valid until ${next.right.notAfter.toISOString()}`,
      )
    }).pipe(withScope("cache"))
    yield* Effect.forkScoped(Effect.forever(reload))
  })
