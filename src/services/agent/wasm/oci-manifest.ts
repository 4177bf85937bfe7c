/**
 * OCI / Docker registry manifests as far as a Wasm pull needs them: an image index (or Docker
 * manifest list) resolves to the linux/amd64 image (or its only image); an image manifest
 * (Docker schema 2 or OCI) names the layer holding the module — the Wasm artifact layer
 * (`application/vnd.module.wasm.content.layer.v1+wasm`, the bytes are the module), else a single
 * tar layer with `plugin.wasm` inside (the image variant).
 */
import { Either } from "effect"
import { digestHex } from "./checksum.js"

export const MediaType = {
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  ociIndex: "application/vnd.oci.image.index.v1+json",
  wasmLayer: "application/vnd.module.wasm.content.layer.v1+wasm",
  wasmConfig: "application/vnd.module.wasm.config.v1+json",
  dockerLayerTarGzip: "application/vnd.docker.image.rootfs.diff.tar.gzip",
  dockerLayerTar: "application/vnd.docker.image.rootfs.diff.tar",
  ociLayerTarGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  ociLayerTar: "application/vnd.oci.image.layer.v1.tar",
  dockerConfig: "application/vnd.docker.container.image.v1+json",
  ociConfig: "application/vnd.oci.image.config.v1+json",
} as const

/** The Accept header of a manifest request: every form this module can read. */
export const MANIFEST_ACCEPT = [
  MediaType.ociManifest,
  MediaType.dockerManifest,
  MediaType.ociIndex,
  MediaType.dockerManifestList,
].join(", ")

const TAR_LAYERS: ReadonlySet<string> = new Set([
  MediaType.dockerLayerTarGzip,
  MediaType.dockerLayerTar,
  MediaType.ociLayerTarGzip,
  MediaType.ociLayerTar,
])

export interface Descriptor {
  readonly mediaType: string
  readonly digest: string
  readonly size: number
  readonly platform?: { readonly os?: string; readonly architecture?: string }
}

export type ManifestDocument =
  | { readonly kind: "index"; readonly mediaType: string; readonly manifests: ReadonlyArray<Descriptor> }
  | { readonly kind: "image"; readonly mediaType: string; readonly layers: ReadonlyArray<Descriptor> }

export type ModuleLayer = { readonly packaging: "wasm" | "tar"; readonly layer: Descriptor }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const descriptor = (value: unknown, where: string): Either.Either<Descriptor, string> => {
  if (!isRecord(value)) return Either.left(`${where}: not an object`)
  const { mediaType, digest, size, platform } = value
  if (typeof digest !== "string" || digestHex(digest) === undefined)
    return Either.left(`${where}: digest ${JSON.stringify(digest)} is not sha256:<64 hex>`)
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0)
    return Either.left(`${where}: size ${JSON.stringify(size)} is invalid`)
  return Either.right({
    mediaType: typeof mediaType === "string" ? mediaType : "",
    digest,
    size,
    ...(isRecord(platform)
      ? {
          platform: {
            ...(typeof platform.os === "string" ? { os: platform.os } : {}),
            ...(typeof platform.architecture === "string" ? { architecture: platform.architecture } : {}),
          },
        }
      : {}),
  })
}

const descriptors = (value: unknown, field: string) =>
  Array.isArray(value)
    ? Either.all(value.map((item, i) => descriptor(item, `${field}[${i}]`)))
    : Either.left(`${field} is missing`)

/**
 * Reads a manifest body. Its kind comes from its `mediaType` field, else the response's
 * Content-Type, else its shape (OCI documents may omit `mediaType`).
 */
export const parseManifest = (body: Uint8Array, contentType: string): Either.Either<ManifestDocument, string> => {
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(body).toString("utf8"))
  } catch {
    return Either.left("the manifest is not JSON")
  }
  if (!isRecord(json)) return Either.left("the manifest is not a JSON object")
  const mediaType =
    typeof json.mediaType === "string" && json.mediaType !== ""
      ? json.mediaType
      : (contentType.split(";")[0]?.trim() ?? "")
  const isIndex =
    mediaType === MediaType.ociIndex ||
    mediaType === MediaType.dockerManifestList ||
    (Array.isArray(json.manifests) && !Array.isArray(json.layers))
  if (isIndex)
    return Either.map(descriptors(json.manifests, "manifests"), (manifests) => ({
      kind: "index",
      mediaType,
      manifests,
    }))
  if (mediaType !== "" && mediaType !== MediaType.ociManifest && mediaType !== MediaType.dockerManifest)
    return Either.left(`unsupported manifest media type ${mediaType}`)
  return Either.map(descriptors(json.layers, "layers"), (layers) => ({ kind: "image", mediaType, layers }))
}

/** The image of an index to pull: linux/amd64, else the only one. */
export const selectPlatformManifest = (manifests: ReadonlyArray<Descriptor>): Either.Either<Descriptor, string> => {
  const amd64 = manifests.find((m) => m.platform?.os === "linux" && m.platform?.architecture === "amd64")
  if (amd64 !== undefined) return Either.right(amd64)
  if (manifests.length === 1) return Either.right(manifests[0]!)
  const platforms = manifests.map((m) => `${m.platform?.os ?? "?"}/${m.platform?.architecture ?? "?"}`)
  return Either.left(
    manifests.length === 0
      ? "the image index lists no manifests"
      : `the image index has no linux/amd64 image (${platforms.join(", ")})`,
  )
}

/** The layer that holds the module. */
export const selectModuleLayer = (layers: ReadonlyArray<Descriptor>): Either.Either<ModuleLayer, string> => {
  const wasm = layers.filter((l) => l.mediaType === MediaType.wasmLayer)
  if (wasm.length === 1) return Either.right({ packaging: "wasm", layer: wasm[0]! })
  if (wasm.length > 1) return Either.left(`the image has ${wasm.length} Wasm layers, want 1`)
  // The image variant is built FROM scratch with plugin.wasm copied in: exactly one tar layer.
  if (layers.length !== 1)
    return Either.left(`the image has ${layers.length} layers and no Wasm layer; an image variant must have 1 layer`)
  const only = layers[0]!
  if (!TAR_LAYERS.has(only.mediaType)) return Either.left(`layer media type ${only.mediaType} holds no Wasm module`)
  return Either.right({ packaging: "tar", layer: only })
}
