/**
 * Walking a directory of config files, as the `--configDir` store and meshctl's `-f DIR` do:
 * links are followed, but every real directory (device + inode) is walked once, so a link back to
 * a directory being walked is a loop, reported and not followed; entries that cannot be read as a
 * file (a link loop between files, a FIFO, a device such as /dev/zero, a socket) are reported
 * with the reason and never opened.
 */
import type { Dirent, Stats } from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"

/** The config-store's files: `.yaml` / `.yml`. */
export const isConfigFile = (file: string): boolean => /\.ya?ml$/i.test(file)

/** A directory link the walk did not follow because it leads back to a directory above it. */
export interface SymlinkLoop {
  /** The link, as reached under the walked directory. */
  readonly link: string
  /** The real path of the directory it leads back to. */
  readonly target: string
}

/** An entry the walk did not read, and why (`symbolic link loop`, `a FIFO (named pipe)`, ...). */
export interface SkippedEntry {
  readonly path: string
  readonly reason: string
}

export interface ConfigTree {
  /** Every config file (absolute paths as reached, sorted), each real file once. */
  readonly files: ReadonlyArray<string>
  /** Directory links that loop, sorted by link. */
  readonly loops: ReadonlyArray<SymlinkLoop>
  /** Entries that are not readable files, sorted by path: file link loops, special files. */
  readonly skipped: ReadonlyArray<SkippedEntry>
}

export interface WalkOptions {
  /** Which file names are config files; default `isConfigFile`. */
  readonly wanted?: (name: string) => boolean
  /** Walk entries whose name starts with `.` too (meshctl does, as the reference's walk); default false. */
  readonly hidden?: boolean
}

/** What a non-regular, non-directory entry is, in words. */
export const specialFileKind = (stats: Stats): string =>
  stats.isCharacterDevice()
    ? "a character device"
    : stats.isBlockDevice()
      ? "a block device"
      : stats.isFIFO()
        ? "a FIFO (named pipe)"
        : stats.isSocket()
          ? "a socket"
          : "not a regular file"

/** Identity of a file or directory whatever path reaches it. */
const identityOf = (stats: Stats): string => `${stats.dev}:${stats.ino}`

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String((error as { code: unknown }).code) : undefined

const byPath =
  <A>(key: (a: A) => string) =>
  (a: A, b: A) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0

/**
 * Walks `dir` for config files, following links. Links make the tree a graph, so every real
 * directory (device + inode) is walked once: a link back to a directory being walked (`ln -s .
 * loop`) is a loop, skipped and reported; a second way into a directory already walked adds
 * nothing. A file reached through several paths (links, hard links) is listed once, under the
 * first path met. The walk is depth-first in name order, so the path kept is the same every time;
 * links are taken after the real entries of a directory, so a real path wins over a link to it.
 * Hidden entries (a name starting with `.`) are not walked unless `hidden`. A link that loops between files
 * (ELOOP) is reported whatever its name; a special file or an unreadable link only when its name
 * is a config file's.
 */
export const walkConfigTree = async (dir: string, options: WalkOptions = {}): Promise<ConfigTree> => {
  const wanted = options.wanted ?? isConfigFile
  const files: Array<string> = []
  const loops: Array<SymlinkLoop> = []
  const skipped: Array<SkippedEntry> = []
  const seenFiles = new Set<string>()
  const walkedDirs = new Set<string>()
  const walk = async (current: string, stats: Stats, ancestors: ReadonlySet<string>): Promise<void> => {
    const id = identityOf(stats)
    walkedDirs.add(id)
    let entries: Array<Dirent>
    try {
      entries = await fsp.readdir(current, { withFileTypes: true })
    } catch {
      return
    }
    const visible = options.hidden === true ? entries : entries.filter((entry) => !entry.name.startsWith("."))
    // Stat in parallel (the slow part), then visit in a fixed order.
    const targets = await Promise.all(
      visible.map((entry) =>
        fsp.stat(path.join(current, entry.name)).then(
          (target) => ({ target }),
          (error: unknown) => ({ error }),
        ),
      ),
    )
    const order = visible
      .map((entry, i) => ({ entry, result: targets[i]! }))
      .sort((a, b) =>
        a.entry.isSymbolicLink() !== b.entry.isSymbolicLink()
          ? a.entry.isSymbolicLink()
            ? 1
            : -1
          : a.entry.name < b.entry.name
            ? -1
            : a.entry.name > b.entry.name
              ? 1
              : 0,
      )
    const inside = new Set(ancestors).add(id)
    for (const { entry, result } of order) {
      const full = path.join(current, entry.name)
      if ("error" in result) {
        const code = errnoOf(result.error)
        if (code === "ELOOP") skipped.push({ path: full, reason: "symbolic link loop (too many levels of links)" })
        else if (wanted(entry.name))
          skipped.push({
            path: full,
            reason:
              code === "ENOENT"
                ? "symbolic link to nothing"
                : `cannot read: ${String((result.error as Error).message)}`,
          })
        continue
      }
      const target = result.target
      if (target.isDirectory()) {
        const targetId = identityOf(target)
        if (inside.has(targetId)) {
          loops.push({ link: full, target: await fsp.realpath(full).catch(() => full) })
        } else if (!walkedDirs.has(targetId)) {
          await walk(full, target, inside)
        }
      } else if (wanted(entry.name) && !target.isFile()) {
        skipped.push({ path: full, reason: specialFileKind(target) })
      } else if (wanted(entry.name) && !seenFiles.has(identityOf(target))) {
        seenFiles.add(identityOf(target))
        files.push(full)
      }
    }
  }
  const root = await fsp.stat(dir).catch(() => undefined)
  if (root?.isDirectory() === true) await walk(dir, root, new Set())
  return {
    files: files.sort(),
    loops: loops.sort(byPath((loop) => loop.link)),
    skipped: skipped.sort(byPath((entry) => entry.path)),
  }
}
