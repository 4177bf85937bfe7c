/**
 * Recognising the archives a module may come in, from a file's first bytes: the image variant's
 * layer is a (gzipped) tar holding `plugin.wasm`; an http(s) download may be a gzip and/or tar
 * around the module (the reference's rule). The unpacking itself streams files
 * (layers/agent/wasm/unbox-file.ts).
 */

export const PLUGIN_FILE = "plugin.wasm"

export const isGzip = (bytes: Uint8Array) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b

/** POSIX/GNU tar: "ustar" at offset 257 of the first header. */
export const isTar = (bytes: Uint8Array) =>
  bytes.length >= 262 && Buffer.from(bytes.subarray(257, 262)).toString("latin1") === "ustar"
