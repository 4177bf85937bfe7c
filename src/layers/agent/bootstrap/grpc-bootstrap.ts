/** Writes the proxyless gRPC bootstrap file atomically (temp file in the same directory + rename). */
import { randomBytes } from "node:crypto"
import { mkdir, rename, rm, writeFile } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Effect } from "effect"
import type { GrpcBootstrap } from "../../../services/agent/bootstrap/grpc-bootstrap.js"
import { IdentityError } from "../../../services/agent/identity/identity.js"

/** Writes `content` to `path` so that a reader sees the old or the new file, never a part. */
export const writeFileAtomic = (path: string, content: string, mode = 0o644) =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true })
      const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`)
      try {
        await writeFile(tmp, content, { mode })
        await rename(tmp, path)
      } catch (e) {
        await rm(tmp, { force: true })
        throw e
      }
    },
    catch: (e) => new IdentityError({ reason: `cannot write ${path}: ${(e as Error).message}` }),
  })

export const writeGrpcBootstrap = (path: string, bootstrap: GrpcBootstrap) =>
  writeFileAtomic(path, `${JSON.stringify(bootstrap, null, 2)}\n`).pipe(
    Effect.tap(() => Effect.logInfo(`gRPC xDS bootstrap written to ${path}`)),
  )
