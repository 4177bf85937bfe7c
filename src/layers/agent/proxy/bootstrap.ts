/**
 * Writes the sidecar proxy's bootstrap: reads `--templateFile` and `MESH_BOOTSTRAP_OVERRIDE`,
 * composes the bootstrap (services/agent/proxy/bootstrap.ts) and writes it as JSON atomically,
 * so the proxy never reads a half-written file. A missing or bad file fails the start-up with
 * an error naming it.
 */
import { readFile } from "node:fs/promises"
import { Data, Effect, Either } from "effect"
import type { JsonObject } from "../../../services/agent/bootstrap/override.js"
import { composeBootstrap, type SourceFile } from "../../../services/agent/proxy/bootstrap.js"
import { writeFileAtomic } from "../bootstrap/grpc-bootstrap.js"

export class ProxyBootstrapError extends Data.TaggedError("ProxyBootstrapError")<{ readonly message: string }> {}

export interface ProxyBootstrapFiles {
  readonly outFile: string
  /** Empty: the built-in bootstrap. */
  readonly templateFile: string
  /** Empty: no override. */
  readonly overrideFile: string
  readonly values: Record<string, unknown>
  readonly builtIn: JsonObject
}

const readSource = (what: string, file: string): Effect.Effect<SourceFile | undefined, ProxyBootstrapError> =>
  Effect.tryPromise({
    try: async () => (file === "" ? undefined : { file, text: await readFile(file, "utf8") }),
    catch: (e) => new ProxyBootstrapError({ message: `${what} ${file}: cannot read: ${(e as Error).message}` }),
  })

/** Composes and writes the bootstrap; returns what was written. */
export const writeProxyBootstrap = (files: ProxyBootstrapFiles) =>
  Effect.gen(function* () {
    const template = yield* readSource("--templateFile", files.templateFile)
    const override = yield* readSource("MESH_BOOTSTRAP_OVERRIDE", files.overrideFile)
    const composed = composeBootstrap({ template, override, values: files.values, builtIn: files.builtIn })
    if (Either.isLeft(composed)) return yield* new ProxyBootstrapError({ message: composed.left })
    yield* writeFileAtomic(files.outFile, `${JSON.stringify(composed.right, null, 2)}\n`).pipe(
      Effect.mapError((e) => new ProxyBootstrapError({ message: e.reason })),
    )
    yield* Effect.logInfo(
      `proxy bootstrap written to ${files.outFile}${template ? ` from template ${template.file}` : ""}${override ? `, override ${override.file} merged` : ""}`,
    )
    return composed.right
  })
