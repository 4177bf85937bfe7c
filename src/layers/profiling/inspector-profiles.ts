/**
 * V8's CPU profile and heap snapshot of this process, through `node:inspector` (an in-process
 * session: no debugger port is opened). The CPU profile waits on the Effect clock and stops
 * when its fiber is interrupted (the caller went away); the heap snapshot is written to a
 * temporary file as V8 produces it, since V8 emits it in one synchronous burst that would
 * otherwise sit in memory twice (snapshot and response), and the file is removed when the
 * stream that reads it ends.
 */
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { Session } from "node:inspector"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeStream } from "@effect/platform-node"
import { Data, type Duration, Effect, Exit, Stream } from "effect"

export class ProfilingError extends Data.TaggedError("ProfilingError")<{ readonly message: string }> {}

const post = <A>(session: Session, method: string, params?: object): Effect.Effect<A, ProfilingError> =>
  Effect.async<A, ProfilingError>((resume) => {
    session.post(method, params ?? {}, (error, result) => {
      resume(
        error === null || error === undefined
          ? Effect.succeed(result as A)
          : Effect.fail(new ProfilingError({ message: `${method}: ${error.message}` })),
      )
    })
  })

/** A connected inspector session, disconnected with the scope (which also stops its profiler). */
const session = Effect.acquireRelease(
  Effect.sync(() => {
    const s = new Session()
    s.connect()
    return s
  }),
  (s) => Effect.sync(() => s.disconnect()),
)

/** A V8 CPU profile (`.cpuprofile`: nodes, startTime, endTime, samples, timeDeltas) over `duration`. */
export const cpuProfile = (duration: Duration.DurationInput): Effect.Effect<unknown, ProfilingError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const s = yield* session
      yield* post(s, "Profiler.enable")
      yield* post(s, "Profiler.start")
      yield* Effect.sleep(duration)
      const { profile } = yield* post<{ readonly profile: unknown }>(s, "Profiler.stop")
      return profile
    }),
  )

/**
 * Takes a V8 heap snapshot (`.heapsnapshot` JSON) into a new temporary file and returns the
 * stream that reads it; the file is removed when that stream ends (or at once if taking the
 * snapshot fails). The snapshot is complete before anything is sent, so a failure is an error
 * response rather than a cut-off body.
 */
export const heapSnapshot: Effect.Effect<Stream.Stream<Uint8Array, ProfilingError>, ProfilingError> = Effect.gen(
  function* () {
    const dir = yield* Effect.sync(() => mkdtempSync(join(tmpdir(), "mesh-heap-")))
    const remove = Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, "heap.heapsnapshot")
    yield* Effect.scoped(
      Effect.gen(function* () {
        const s = yield* session
        const fd = yield* Effect.acquireRelease(
          Effect.sync(() => openSync(file, "w", 0o600)),
          (fd) => Effect.sync(() => closeSync(fd)),
        )
        s.on("HeapProfiler.addHeapSnapshotChunk", (message: { params: { chunk: string } }) => {
          writeSync(fd, message.params.chunk)
        })
        yield* post(s, "HeapProfiler.takeHeapSnapshot", { reportProgress: false })
      }),
    ).pipe(Effect.onExit((exit) => (Exit.isFailure(exit) ? remove : Effect.void)))
    return NodeStream.fromReadable<ProfilingError>(
      () => createReadStream(file),
      (error) => new ProfilingError({ message: `reading the heap snapshot: ${String(error)}` }),
    ).pipe(Stream.ensuring(remove))
  },
)
