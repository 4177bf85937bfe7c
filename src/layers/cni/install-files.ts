/**
 * File operations of the CNI installer. Every write is atomic (a temporary file in the same
 * directory, then a rename): the container runtime reads these files at any moment and must
 * never see half of one. Writes are uninterruptible so that a SIGTERM in the middle cannot leave
 * a temporary file behind.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Data, Effect } from "effect"
import type { NetDirFile } from "../../services/cni/conflist-select.js"

export class InstallFileError extends Data.TaggedError("InstallFileError")<{
  readonly path: string
  readonly operation: string
  readonly cause: unknown
}> {
  override get message(): string {
    const code = (this.cause as NodeJS.ErrnoException | undefined)?.code
    const detail = code ?? (this.cause instanceof Error ? this.cause.message : String(this.cause))
    return `cannot ${this.operation} ${this.path}: ${detail}`
  }
}

const attempt = <A>(path: string, operation: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (cause) => new InstallFileError({ path, operation, cause }) })

/** Writes `text` to `path` through a temporary sibling and a rename; `mode` applies to the result. */
export const writeAtomically = (path: string, text: string, mode: number) =>
  Effect.uninterruptible(
    attempt(path, "write", async () => {
      const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`)
      try {
        await fs.writeFile(temporary, text, { mode })
        // writeFile's mode is filtered by the umask; the requested mode must hold exactly.
        await fs.chmod(temporary, mode)
        await fs.rename(temporary, path)
      } catch (error) {
        await fs.rm(temporary, { force: true })
        throw error
      }
    }),
  )

/** Removes a file; a missing one is fine. */
export const removeFile = (path: string) => attempt(path, "remove", () => fs.rm(path, { force: true }))

export const readText = (path: string) => attempt(path, "read", () => fs.readFile(path, "utf8"))

/** Fails unless `path` is a directory the installer can write into. */
export const requireWritableDirectory = (path: string, what: string) =>
  attempt(path, `use ${what}`, async () => {
    const stat = await fs.stat(path)
    if (!stat.isDirectory()) throw new Error("not a directory")
    await fs.access(path, fs.constants.W_OK)
  })

/** Fails unless `path` is a readable file. */
export const requireReadableFile = (path: string, what: string) =>
  attempt(path, `read ${what}`, () => fs.access(path, fs.constants.R_OK))

/**
 * The CNI config candidates of the network directory with their text (undefined when unreadable):
 * its `.conf`/`.conflist` files, and `named` (`--cni-conf-name`) whatever its name, since a file
 * named explicitly is used as it is.
 */
export const readNetDir = (dir: string, named = "") =>
  Effect.gen(function* () {
    const names = yield* attempt(dir, "list", () => fs.readdir(dir))
    const wanted = names.filter(
      (n) => n === named || ((n.endsWith(".conf") || n.endsWith(".conflist")) && !n.startsWith(".")),
    )
    return yield* Effect.forEach(
      wanted,
      (name) =>
        readText(join(dir, name)).pipe(
          Effect.map((text): NetDirFile => ({ name, text })),
          Effect.orElseSucceed((): NetDirFile => ({ name, text: undefined })),
        ),
      { concurrency: 8 },
    )
  })
