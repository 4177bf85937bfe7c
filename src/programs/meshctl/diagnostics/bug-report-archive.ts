/**
 * Writing bug-report's artifacts: each artifact is also written under the temporary directory
 * (`--dir`) as it is captured, so that what was captured survives a timeout; the archive is a
 * gzipped tar of them (tar-stream + zlib), in the order they were captured.
 */
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { createGzip } from "node:zlib"
import { pack } from "tar-stream"

/** The artifacts captured so far: archive path → content. */
export class Artifacts {
  private readonly files = new Map<string, string>()
  constructor(private readonly tempDir: string | undefined) {}

  add(path: string, content: string): void {
    this.files.set(path, content)
    if (this.tempDir === undefined) return
    const file = join(this.tempDir, path)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, content)
  }

  get paths(): ReadonlyArray<string> {
    return [...this.files.keys()]
  }

  get size(): number {
    return this.files.size
  }

  /** Writes the gzipped tar of every artifact (sorted by path) to `file`. */
  writeArchive(file: string): Promise<void> {
    const entries = [...this.files.entries()].sort(([a], [b]) => a.localeCompare(b))
    return new Promise((resolve, reject) => {
      const archive = pack()
      const out = createWriteStream(file)
      out.on("error", reject)
      out.on("finish", () => resolve())
      archive.on("error", reject)
      const gzip = createGzip()
      archive.pipe(gzip)
      gzip.pipe(out)
      const mtime = new Date()
      for (const [name, content] of entries) archive.entry({ name, mtime, mode: 0o644 }, content)
      archive.finalize()
    })
  }
}
