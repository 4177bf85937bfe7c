/**
 * `WatchTrustBundle` (issue 43): an agent, authenticated as for CreateCertificate (its token or
 * its current certificate), gets the CA's trust bundle now and again on every change, and
 * acknowledges each bundle once it applied it. The CA counts the streams and their
 * acknowledgements (`keyRotation.watch`), which is what phase (a) of a key rotation waits on.
 * Streams are bounded by `MESHCA_TRUST_BUNDLE_MAX_WATCHERS` (RESOURCE_EXHAUSTED past it); an
 * acknowledgement is cut to 64 characters, and nothing else a caller sends is kept.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect, Exit, Fiber, Runtime, Stream } from "effect"
import { type AuthContext, type Authenticator, authenticateWith } from "../../services/ca/authenticate.js"
import type { CertificateAuthorityShape } from "../../services/ca/ca.js"
import { bundleVersion } from "../../services/ca/key-rotation.js"
import { type SigningMaterial, toPem } from "../../services/ca/material.js"
import { peerUris } from "../secure-grpc/listener.js"

/** An acknowledged version longer than this is cut (versions are 16 characters). */
const ACK_MAX = 64

export interface TrustBundleMessage {
  readonly version: string
  readonly root_certs: ReadonlyArray<string>
}

export const trustBundleMessage = (material: SigningMaterial): TrustBundleMessage => {
  const roots = material.trustBundle.map(toPem)
  return { version: bundleVersion(roots.join("")), root_certs: roots }
}

interface Refusal {
  readonly code: number
  readonly details: string
}

export interface WatchDeps {
  readonly ca: CertificateAuthorityShape
  readonly authenticators: ReadonlyArray<Authenticator>
  /** Logs a refusal (throttled per reason by the caller). */
  readonly refused: (reason: string, line: string) => Effect.Effect<void>
}

export const watchTrustBundleHandler = (
  deps: WatchDeps,
  runtime: Runtime.Runtime<never>,
): grpc.handleBidiStreamingCall<{ version?: string }, TrustBundleMessage> => {
  const run = Runtime.runFork(runtime)
  return (call) => {
    const watch = deps.ca.keyRotation?.watch
    if (watch === undefined) {
      call.emit("error", { code: grpc.status.UNIMPLEMENTED, details: "this CA does not publish its trust bundle" })
      return
    }
    const ctx: AuthContext = {
      metadata: (key) => call.metadata.get(key).map((v) => (typeof v === "string" ? v : v.toString("utf8"))),
      verifiedPeerUris: peerUris(call.getAuthContext().sslPeerCertificate),
      remoteAddress: call.getPeer(),
    }
    const ended = Effect.async<void>((resume) => {
      const done = () => resume(Effect.void)
      call.once("end", done)
      call.once("cancelled", done)
      call.once("error", done)
      call.once("close", done)
    })
    const program = Effect.gen(function* () {
      const caller = yield* Effect.mapError(
        authenticateWith(deps.authenticators, ctx),
        (e): Refusal => ({ code: grpc.status.UNAUTHENTICATED, details: `authentication failed: ${e.reason}` }),
      )
      const id = yield* Effect.mapError(
        watch.register(caller.identities[0] ?? "", ctx.remoteAddress ?? ""),
        (reason): Refusal => ({ code: grpc.status.RESOURCE_EXHAUSTED, details: reason }),
      )
      yield* Effect.addFinalizer(() => watch.unregister(id))
      call.on("data", (message: { version?: unknown }) => {
        const version = typeof message?.version === "string" ? message.version.slice(0, ACK_MAX) : ""
        if (version !== "") run(watch.ack(id, version))
      })
      const send = deps.ca.changes.pipe(
        Stream.map(trustBundleMessage),
        Stream.changesWith((a, b) => a.version === b.version),
        Stream.runForEach((message) => Effect.sync(() => call.write(message))),
      )
      yield* Effect.raceFirst(ended, send)
    }).pipe(Effect.scoped)
    const fiber = run(
      program.pipe(
        Effect.tapError((refusal) =>
          deps.refused(
            refusal.details.slice(0, 200),
            `WatchTrustBundle refused (${ctx.remoteAddress}): ${refusal.details}`,
          ),
        ),
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit)) {
              if (!call.cancelled) call.end()
              return
            }
            const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
            if (failure !== undefined) call.emit("error", { code: failure.code, details: failure.details })
          }),
        ),
      ),
    )
    call.once("cancelled", () => run(Fiber.interrupt(fiber)))
  }
}
