/** A tar archive of the given files, in memory (Wasm image layers and the like in tests). */
import { pack } from "tar-stream"

export const tarOf = (files: Record<string, Buffer>) =>
  new Promise<Buffer>((resolve, reject) => {
    const archive = pack()
    for (const [name, content] of Object.entries(files)) archive.entry({ name }, content)
    archive.finalize()
    const chunks: Array<Buffer> = []
    archive.on("data", (c) => {
      chunks.push(c as Buffer)
    })
    archive.on("end", () => resolve(Buffer.concat(chunks)))
    archive.on("error", reject)
  })
