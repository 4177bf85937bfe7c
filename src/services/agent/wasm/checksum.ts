/**
 * Checksums of Wasm modules: the sha256 (hex) a WasmPlugin pins, checked against the downloaded
 * bytes for http(s) and against the image's manifest digest for OCI (the reference's rule: an
 * image is identified by its digest; its layers are verified against the manifest on the way).
 */
import { createHash } from "node:crypto"
import { Either } from "effect"
import type { WasmModuleSource } from "./module-url.js"

const HEX64 = /^[0-9a-f]{64}$/

export const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** `sha256:<hex>` → `<hex>`; undefined for another algorithm or a malformed value. */
export const digestHex = (digest: string): string | undefined => {
  const hex = digest.startsWith("sha256:") ? digest.slice("sha256:".length) : undefined
  return hex !== undefined && HEX64.test(hex) ? hex : undefined
}

/**
 * The checksum the fetched module must have: the request's `sha256` (hex, an optional `sha256:`
 * prefix tolerated) and/or the digest an OCI reference pins; both given must agree.
 */
export const expectedChecksum = (
  requested: string | undefined,
  source: WasmModuleSource,
): Either.Either<string | undefined, string> => {
  const trimmed = (requested ?? "").trim().toLowerCase()
  const fromRequest = trimmed === "" ? undefined : trimmed.replace(/^sha256:/, "")
  if (fromRequest !== undefined && !HEX64.test(fromRequest))
    return Either.left(`sha256 "${requested}" is not 64 hex digits`)
  const fromUrl = source.kind === "oci" && source.digest !== undefined ? digestHex(source.digest) : undefined
  if (fromRequest !== undefined && fromUrl !== undefined && fromRequest !== fromUrl)
    return Either.left(`sha256 ${fromRequest} does not match the digest in the URL (${fromUrl})`)
  return Either.right(fromRequest ?? fromUrl)
}

/** `\0asm` followed by binary format version 1. */
export const isWasmBinary = (bytes: Uint8Array) =>
  bytes.length >= 8 &&
  bytes[0] === 0x00 &&
  bytes[1] === 0x61 &&
  bytes[2] === 0x73 &&
  bytes[3] === 0x6d &&
  bytes[4] === 0x01 &&
  bytes[5] === 0x00 &&
  bytes[6] === 0x00 &&
  bytes[7] === 0x00
