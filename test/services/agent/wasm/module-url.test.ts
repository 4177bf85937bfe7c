/** Module URL parsing, the pinned checksum and the pull-policy rule of the Wasm fetcher. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { expectedChecksum, isWasmBinary } from "../../../../src/services/agent/wasm/checksum.js"
import {
  manifestReference,
  moduleName,
  parseModuleUrl,
  registryApiHost,
  reusesAcrossVersions,
} from "../../../../src/services/agent/wasm/module-url.js"

const DIGEST = `sha256:${"ab".repeat(32)}`
const ok = (url: string) => Either.getOrThrow(parseModuleUrl(url))

describe("parseModuleUrl", () => {
  it("reads http and https URLs as downloads", () => {
    expect(ok("https://example.com/filters/a.wasm")).toEqual({
      kind: "http",
      url: "https://example.com/filters/a.wasm",
    })
    expect(ok(" http://10.0.0.1:8080/a.wasm ").kind).toBe("http")
  })

  it("reads oci:// references with registry, repository, tag and digest", () => {
    expect(ok("oci://ghcr.io/org/filter:v1")).toEqual({
      kind: "oci",
      registry: "ghcr.io",
      repository: "org/filter",
      tag: "v1",
      digest: undefined,
    })
    expect(ok(`oci://localhost:5000/filter@${DIGEST}`)).toMatchObject({
      registry: "localhost:5000",
      repository: "filter",
      tag: undefined,
      digest: DIGEST,
    })
    expect(ok(`oci://127.0.0.1:5000/a/b:v2@${DIGEST}`)).toMatchObject({ tag: "v2", digest: DIGEST })
    expect(manifestReference(ok(`oci://127.0.0.1:5000/a/b:v2@${DIGEST}`) as never)).toBe(DIGEST)
  })

  it("reads a reference without scheme as OCI, with Docker Hub's defaults and tag latest", () => {
    expect(ok("example/filter")).toEqual({
      kind: "oci",
      registry: "docker.io",
      repository: "example/filter",
      tag: "latest",
      digest: undefined,
    })
    expect(ok("filter:1.0")).toMatchObject({ registry: "docker.io", repository: "library/filter", tag: "1.0" })
    expect(ok("registry.local:5000/filter")).toMatchObject({ registry: "registry.local:5000", tag: "latest" })
    expect(registryApiHost("docker.io")).toBe("registry-1.docker.io")
    expect(registryApiHost("ghcr.io")).toBe("ghcr.io")
  })

  it("rejects other schemes and malformed references", () => {
    expect(parseModuleUrl("file:///tmp/a.wasm")).toEqual(Either.left(expect.stringContaining("unsupported")))
    expect(Either.isLeft(parseModuleUrl("oci://ghcr.io/Org/filter"))).toBe(true)
    expect(Either.isLeft(parseModuleUrl("oci://ghcr.io/org/filter@sha256:1234"))).toBe(true)
    expect(Either.isLeft(parseModuleUrl(""))).toBe(true)
  })

  it("names a module without its tag or digest, so tag and digest pulls share a cache entry", () => {
    expect(moduleName(ok("oci://ghcr.io/org/filter:v1"))).toBe("oci://ghcr.io/org/filter")
    expect(moduleName(ok(`ghcr.io/org/filter@${DIGEST}`))).toBe("oci://ghcr.io/org/filter")
    expect(moduleName(ok("https://example.com/a.wasm"))).toBe("https://example.com/a.wasm")
  })
})

describe("pull policy", () => {
  it("IfNotPresent reuses across versions, Always does not, unset does except for OCI latest", () => {
    expect(reusesAcrossVersions("IfNotPresent", ok("oci://ghcr.io/a:latest"))).toBe(true)
    expect(reusesAcrossVersions("Always", ok("https://example.com/a.wasm"))).toBe(false)
    expect(reusesAcrossVersions("", ok("oci://ghcr.io/a:v1"))).toBe(true)
    expect(reusesAcrossVersions("", ok("oci://ghcr.io/a"))).toBe(false)
    expect(reusesAcrossVersions("", ok(`oci://ghcr.io/a@${DIGEST}`))).toBe(true)
    expect(reusesAcrossVersions("", ok("https://example.com/latest.wasm"))).toBe(true)
  })
})

describe("expectedChecksum", () => {
  const hex = "ab".repeat(32)
  it("takes the request's sha256 or the URL digest, and rejects a conflict or a malformed value", () => {
    expect(expectedChecksum(undefined, ok("https://e.com/a.wasm"))).toEqual(Either.right(undefined))
    expect(expectedChecksum(hex.toUpperCase(), ok("https://e.com/a.wasm"))).toEqual(Either.right(hex))
    expect(expectedChecksum(`sha256:${hex}`, ok("https://e.com/a.wasm"))).toEqual(Either.right(hex))
    expect(expectedChecksum(undefined, ok(`oci://ghcr.io/a@${DIGEST}`))).toEqual(Either.right(hex))
    expect(Either.isLeft(expectedChecksum("cd".repeat(32), ok(`oci://ghcr.io/a@${DIGEST}`)))).toBe(true)
    expect(Either.isLeft(expectedChecksum("xyz", ok("https://e.com/a.wasm")))).toBe(true)
  })

  it("recognises the Wasm binary header", () => {
    expect(isWasmBinary(Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]))).toBe(true)
    expect(isWasmBinary(Uint8Array.from([0, 0x61, 0x73, 0x6d, 2, 0, 0, 0]))).toBe(false)
    expect(isWasmBinary(Buffer.from("not wasm"))).toBe(false)
  })
})
