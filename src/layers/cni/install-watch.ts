/**
 * Changes under a set of directories as a stream of "something changed" ticks: Node's fs.watch
 * bridged into Effect, bursts merged (debounced), plus a slow periodic tick because fs.watch
 * can miss events (overlay and network file systems, a directory replaced as a whole).
 */
import * as fs from "node:fs"
import { type Duration, Effect, Stream } from "effect"
import { withScope } from "../../services/logging/logging.js"

/** One directory's events; a directory that cannot be watched ends its stream with a warning. */
const watchDirectory = (dir: string): Stream.Stream<void> =>
  Stream.asyncPush<void, unknown>((emit) =>
    Effect.acquireRelease(
      Effect.try(() => {
        const watcher = fs.watch(dir, { persistent: false }, () => emit.single(undefined))
        watcher.on("error", (error) => {
          emit.fail(error)
        })
        // A change between the caller's last look and this watch starting would otherwise go unseen.
        emit.single(undefined)
        return watcher
      }),
      (watcher) => Effect.sync(() => watcher.close()),
    ),
  ).pipe(
    Stream.catchAll((error) =>
      Stream.fromEffect(
        Effect.logWarning(`cannot watch ${dir} (${String(error)}); relying on the periodic check`).pipe(
          withScope("default"),
        ),
      ).pipe(Stream.drain),
    ),
  )

export const directoryChanges = (
  dirs: ReadonlyArray<string>,
  options: { readonly debounce: Duration.DurationInput; readonly resync: Duration.DurationInput },
): Stream.Stream<void> =>
  Stream.mergeAll([...dirs.map(watchDirectory), Stream.tick(options.resync).pipe(Stream.drop(1))], {
    concurrency: "unbounded",
  }).pipe(Stream.debounce(options.debounce))
