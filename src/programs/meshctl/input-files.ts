/**
 * How meshctl reads the files a user names (`-f`, `--filename`, `--file`, `--meshConfigFile`,
 * `--injectConfigFile`, `--valuesFile`, ...), one reader for every command:
 *
 * - At most MAX_INPUT_BYTES per file (the `--configDir` store's 4 MiB limit): a larger file is
 *   refused from its size without being read; a stream (`-` for standard input, a named pipe or
 *   `<(...)`, a device such as /dev/zero) is read up to the limit and then refused, so nothing
 *   costs more than the limit whatever it is.
 * - A directory is walked as the config store walks one (config-tree.ts): every real directory
 *   (device + inode) once, so a link back to a directory being walked is reported and not
 *   followed; entries that are not regular files (FIFOs, devices, links looping between files)
 *   are skipped with a message, never opened.
 */
import * as fs from "node:fs"
import { Data, Effect } from "effect"
import { type BoundedRead, readBoundedFile, readBoundedStream } from "../../layers/config-store/bounded-read.js"
import { walkConfigTree } from "../../layers/config-store/config-tree.js"
import { MAX_CONFIG_FILE_BYTES } from "../../services/config-model/yaml-limits.js"

/** Largest input file meshctl reads (bytes): the config store's limit for one config file. */
export const MAX_INPUT_BYTES = MAX_CONFIG_FILE_BYTES

/**
 * Largest proxy config dump meshctl reads from a file (`--file` of proxy-config, proxy-status,
 * x authz check): a dump of a large mesh's proxy is several MiB (the xDS debug client takes
 * answers over 4 MiB for the same reason); 64 MiB holds any of them.
 */
export const MAX_CONFIG_DUMP_BYTES = 64 * 1024 * 1024

/** `-`: standard input. */
export const STDIN = "-"

/** A named input that cannot be read: the path and why (the message says both). */
export class InputError extends Data.TaggedError("InputError")<{ readonly path: string; readonly reason: string }> {
  override get message(): string {
    return `${this.path}: ${this.reason}`
  }
}

const formatMiB = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MiB`

/** The reason a read failed, in words (`no such file or directory`, `permission denied`). */
const reasonOf = (read: Exclude<BoundedRead, { readonly _tag: "Text" }>, limit: number): string => {
  switch (read._tag) {
    case "TooLarge":
      return read.stats !== undefined
        ? `file is ${formatMiB(read.bytes)} (${read.bytes} bytes), over the limit of ${formatMiB(limit)} for one input file`
        : `input is over the limit of ${formatMiB(limit)} (${limit} bytes) for one input file; stopped reading after ${read.bytes} bytes`
    case "NotRegular":
      return `not read: ${read.kind}`
    case "Failed":
      return read.code === "ENOENT"
        ? "no such file or directory"
        : read.code === "EACCES"
          ? "permission denied"
          : read.code === "ELOOP"
            ? "symbolic link loop (too many levels of links)"
            : read.message
  }
}

const textOr = (file: string, read: BoundedRead, limit: number): Effect.Effect<string, InputError> =>
  read._tag === "Text"
    ? Effect.succeed(read.text)
    : Effect.fail(new InputError({ path: file, reason: reasonOf(read, limit) }))

/** Reads standard input, at most MAX_INPUT_BYTES. */
export const readProcessStdin: Effect.Effect<string, InputError> = Effect.flatMap(
  Effect.promise(() => readBoundedStream(process.stdin, MAX_INPUT_BYTES)),
  (read) => textOr("standard input", read, MAX_INPUT_BYTES),
)

/**
 * Reads one named file within `maxBytes` (default MAX_INPUT_BYTES). A regular file is refused from its size; anything else
 * named explicitly (a pipe, `<(...)`, a device) is read as a stream up to the limit; a directory
 * is refused (commands that take directories expand them first with `expandInputs`).
 */
export const readInputFile = (file: string, maxBytes: number = MAX_INPUT_BYTES): Effect.Effect<string, InputError> =>
  Effect.flatMap(
    Effect.promise(async (): Promise<BoundedRead> => {
      const read = await readBoundedFile(file, maxBytes)
      if (read._tag !== "NotRegular" || read.kind === "a directory") return read
      return readBoundedStream(fs.createReadStream(file), maxBytes)
    }),
    (read) => textOr(file, read, maxBytes),
  )

/** `-` from standard input (through `readStdin`), anything else with `readInputFile`. */
export const readInput = (
  file: string,
  readStdin: Effect.Effect<string, InputError> = readProcessStdin,
): Effect.Effect<string, InputError> => (file === STDIN ? readStdin : readInputFile(file))

export interface ExpandedInputs {
  /** Files to read, in order: each path as given, directories replaced by their files (sorted). */
  readonly files: ReadonlyArray<string>
  /** Paths that do not exist or cannot be listed. */
  readonly problems: ReadonlyArray<InputError>
  /** What a walk left out and why: directory loops, entries that are not regular files. */
  readonly skipped: ReadonlyArray<string>
}

/**
 * Expands paths: a directory becomes its files whose name ends with one of `extensions`
 * (recursively, links followed once per real directory, see the module doc); a file, a stream
 * or `-` stays as given.
 */
export const expandInputs = (
  paths: ReadonlyArray<string>,
  extensions: ReadonlyArray<string>,
): Effect.Effect<ExpandedInputs> =>
  Effect.promise(async () => {
    const files: Array<string> = []
    const problems: Array<InputError> = []
    const skipped: Array<string> = []
    const wanted = (name: string) => extensions.some((ext) => name.toLowerCase().endsWith(ext))
    for (const given of paths) {
      if (given === STDIN) {
        files.push(STDIN)
        continue
      }
      const stats = await fs.promises.stat(given).catch((error: { code?: string }) => error)
      if (!(stats instanceof fs.Stats)) {
        const code = stats.code
        problems.push(
          new InputError({
            path: given,
            reason:
              code === "ENOENT"
                ? "no such file or directory"
                : code === "EACCES"
                  ? "permission denied"
                  : code === "ELOOP"
                    ? "symbolic link loop (too many levels of links)"
                    : String((stats as Error).message ?? stats),
          }),
        )
        continue
      }
      if (!stats.isDirectory()) {
        files.push(given)
        continue
      }
      const root = given.replace(/\/+$/, "") || "/"
      const tree = await walkConfigTree(root, { wanted, hidden: true })
      files.push(...tree.files)
      for (const loop of tree.loops)
        skipped.push(`${loop.link}: symbolic link loops back to ${loop.target}; not followed`)
      for (const entry of tree.skipped) skipped.push(`${entry.path}: skipped: ${entry.reason}`)
    }
    return { files, problems, skipped }
  })
