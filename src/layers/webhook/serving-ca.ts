/**
 * The CA certificates of the server's own serving certificate (the one `--httpsAddr` serves the
 * webhooks with), as a stream for the webhook caBundle patcher: the current ones, then each
 * change (rotation, a new root, reloaded files). Nothing is emitted when the server has no
 * serving certificate (`PILOT_CERT_PROVIDER=none`): there is then nothing to patch.
 */
import { Effect, Stream } from "effect"
import { withScope } from "../../services/logging/logging.js"
import { servingCaBundle } from "../../services/webhook/ca-bundle.js"
import { ServingCert } from "../secure-grpc/serving-cert.js"

export const servingCaPem: Stream.Stream<string, never, ServingCert> = Stream.asyncScoped<string, never, ServingCert>(
  (emit) =>
    Effect.gen(function* () {
      const { source } = yield* ServingCert
      if (source === undefined) {
        return yield* Effect.logInfo("no serving certificate: webhook caBundles are not patched").pipe(
          withScope("validationController"),
        )
      }
      yield* source((material) => Effect.sync(() => void emit.single(servingCaBundle(material))))
    }),
).pipe(Stream.changes)
