/**
 * A real OCI registry for the Wasm tests: Debian's `docker-registry` (Distribution) on loopback
 * with filesystem storage in a temp directory, and a pusher speaking its HTTP API (monolithic
 * blob upload, then the manifest).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { createServer } from "node:net"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { Effect } from "effect"
import { sha256Hex } from "../../../../src/services/agent/wasm/checksum.js"
import { MediaType } from "../../../../src/services/agent/wasm/oci-manifest.js"
import { tarOf, tempDir, waitUntil } from "./helpers.js"

export const REGISTRY_BINARY = "/usr/bin/docker-registry"
export const registryAvailable = existsSync(REGISTRY_BINARY)

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

const reachable = async (base: string) => {
  try {
    return (await fetch(`${base}/v2/`)).status === 200
  } catch {
    return false
  }
}

/** Starts the registry for the scope; resolves once `/v2/` answers. */
export const startRegistry = Effect.gen(function* () {
  const dir = yield* tempDir("mesh-wasm-registry-")
  const port = yield* Effect.promise(freePort)
  const config = join(dir, "config.yml")
  yield* Effect.promise(() =>
    writeFile(
      config,
      [
        "version: 0.1",
        "log:",
        "  level: error",
        "storage:",
        "  filesystem:",
        `    rootdirectory: ${join(dir, "data")}`,
        "  delete:",
        "    enabled: true",
        "http:",
        `  addr: 127.0.0.1:${port}`,
        "",
      ].join("\n"),
    ),
  )
  let output = ""
  const child = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const process = spawn(REGISTRY_BINARY, ["serve", config], { stdio: ["ignore", "pipe", "pipe"] })
      process.stdout?.on("data", (c: Buffer) => {
        output += c.toString()
      })
      process.stderr?.on("data", (c: Buffer) => {
        output += c.toString()
      })
      return process
    }),
    (process: ChildProcess) =>
      Effect.async<void>((resume) => {
        if (process.exitCode !== null) return resume(Effect.void)
        process.once("exit", () => resume(Effect.void))
        process.kill("SIGTERM")
      }),
  )
  const host = `127.0.0.1:${port}`
  const base = `http://${host}`
  yield* waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`docker-registry exited: ${output}`)
    return reachable(base)
  })
  return { host, base }
})

export interface PushedImage {
  /** sha256 hex of the manifest. */
  readonly digest: string
  readonly manifest: Buffer
}

const check = async (response: Response, what: string) => {
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${await response.text()}`)
  return response
}

/** Monolithic upload: POST a session, PUT the bytes with their digest. */
export const pushBlob = async (base: string, repository: string, bytes: Buffer) => {
  const digest = `sha256:${sha256Hex(bytes)}`
  const session = await check(
    await fetch(`${base}/v2/${repository}/blobs/uploads/`, { method: "POST" }),
    "start upload",
  )
  const location = new URL(session.headers.get("location")!, base)
  location.searchParams.set("digest", digest)
  await check(
    await fetch(location, {
      method: "PUT",
      body: bytes,
      headers: { "content-type": "application/octet-stream", "content-length": String(bytes.length) },
    }),
    "upload blob",
  )
  return { mediaType: "", digest, size: bytes.length }
}

export const pushManifest = async (base: string, repository: string, reference: string, manifest: object) => {
  const body = Buffer.from(JSON.stringify(manifest))
  const mediaType = (manifest as { mediaType: string }).mediaType
  await check(
    await fetch(`${base}/v2/${repository}/manifests/${reference}`, {
      method: "PUT",
      body,
      headers: { "content-type": mediaType },
    }),
    "put manifest",
  )
  return { digest: sha256Hex(body), manifest: body } satisfies PushedImage
}

/** The Wasm OCI artifact: a config blob and one `application/vnd.module.wasm.content.layer.v1+wasm` layer. */
export const pushWasmArtifact = async (base: string, repository: string, tag: string, module: Buffer) => {
  const config = await pushBlob(base, repository, Buffer.from("{}"))
  const layer = await pushBlob(base, repository, module)
  return pushManifest(base, repository, tag, {
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: { ...config, mediaType: MediaType.wasmConfig },
    layers: [
      { ...layer, mediaType: MediaType.wasmLayer, annotations: { "org.opencontainers.image.title": "plugin.wasm" } },
    ],
  })
}

/** The Docker image variant: a single tar.gz layer with `plugin.wasm`, under a Docker schema 2 manifest. */
export const pushDockerImage = async (base: string, repository: string, tag: string, module: Buffer) => {
  const tar = await tarOf({ "plugin.wasm": module })
  const layerBytes = gzipSync(tar)
  const imageConfig = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: {},
      rootfs: { type: "layers", diff_ids: [`sha256:${sha256Hex(tar)}`] },
    }),
  )
  const config = await pushBlob(base, repository, imageConfig)
  const layer = await pushBlob(base, repository, layerBytes)
  return pushManifest(base, repository, tag, {
    schemaVersion: 2,
    mediaType: MediaType.dockerManifest,
    config: { ...config, mediaType: MediaType.dockerConfig },
    layers: [{ ...layer, mediaType: MediaType.dockerLayerTarGzip }],
  })
}

/** An OCI index over images pushed before, one per platform. */
export const pushIndex = async (
  base: string,
  repository: string,
  tag: string,
  images: ReadonlyArray<{ readonly image: PushedImage; readonly architecture: string }>,
) =>
  pushManifest(base, repository, tag, {
    schemaVersion: 2,
    mediaType: MediaType.ociIndex,
    manifests: images.map(({ image, architecture }) => ({
      mediaType: MediaType.ociManifest,
      digest: `sha256:${image.digest}`,
      size: image.manifest.length,
      platform: { os: "linux", architecture },
    })),
  })
