/**
 * Promise-based stream work as an Effect that can be interrupted cleanly: `run` gets an
 * AbortSignal; interrupting aborts it and waits until `run` has settled, so the streams it
 * opened are destroyed and its files closed and removed before the interruption completes
 * (a temporary file removed while a stream still writes it would come back as a stray).
 */
import { Effect } from "effect"

export const abortable = <A, E>(run: (signal: AbortSignal) => Promise<A>, onError: (e: unknown) => E) =>
  Effect.async<A, E>((resume) => {
    const controller = new AbortController()
    const settled = run(controller.signal).then(
      (value) => resume(Effect.succeed(value)),
      (e) => resume(Effect.fail(onError(e))),
    )
    return Effect.promise(() => {
      controller.abort()
      return settled
    })
  })
