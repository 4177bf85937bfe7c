/** OCI manifests (image, index, layer choice), registry credentials and challenges. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { isInsecureHost, parseInsecureHosts } from "../../../../src/services/agent/wasm/insecure-hosts.js"
import {
  type ManifestDocument,
  MediaType,
  parseManifest,
  selectModuleLayer,
  selectPlatformManifest,
} from "../../../../src/services/agent/wasm/oci-manifest.js"
import {
  credentialsFor,
  parseChallenge,
  parseDockerConfig,
  parseTokenResponse,
  tokenRequestUrl,
} from "../../../../src/services/agent/wasm/registry-auth.js"

const digest = (c: string) => `sha256:${c.repeat(64)}`
const json = (value: unknown) => Buffer.from(JSON.stringify(value))

const layersOf = (doc: ManifestDocument) => (doc.kind === "image" ? doc.layers : [])
const manifestsOf = (doc: ManifestDocument) => (doc.kind === "index" ? doc.manifests : [])

describe("manifests", () => {
  it("reads Docker schema 2 and OCI image manifests and picks the module layer", () => {
    const docker = parseManifest(
      json({
        schemaVersion: 2,
        mediaType: MediaType.dockerManifest,
        layers: [{ mediaType: MediaType.dockerLayerTarGzip, digest: digest("a"), size: 3 }],
      }),
      "",
    )
    expect(Either.getOrThrow(docker).kind).toBe("image")
    const layer = selectModuleLayer(layersOf(Either.getOrThrow(docker)))
    expect(Either.getOrThrow(layer)).toMatchObject({ packaging: "tar", layer: { digest: digest("a") } })

    // OCI manifests may omit mediaType: the Content-Type and the shape decide.
    const oci = Either.getOrThrow(
      parseManifest(
        json({ schemaVersion: 2, layers: [{ mediaType: MediaType.wasmLayer, digest: digest("b"), size: 9 }] }),
        `${MediaType.ociManifest}; charset=utf-8`,
      ),
    )
    expect(oci).toMatchObject({ kind: "image", mediaType: MediaType.ociManifest })
    expect(Either.getOrThrow(selectModuleLayer(layersOf(oci))).packaging).toBe("wasm")
  })

  it("rejects images without a module layer, with several tar layers, or malformed descriptors", () => {
    const tar = { mediaType: MediaType.ociLayerTarGzip, digest: digest("a"), size: 1 }
    expect(Either.isLeft(selectModuleLayer([tar, { ...tar, digest: digest("b") }]))).toBe(true)
    expect(Either.isLeft(selectModuleLayer([{ ...tar, mediaType: "application/json" }]))).toBe(true)
    expect(Either.isLeft(selectModuleLayer([]))).toBe(true)
    expect(Either.isLeft(parseManifest(json({ layers: [{ digest: "md5:00", size: 1 }] }), ""))).toBe(true)
    expect(Either.isLeft(parseManifest(Buffer.from("{"), ""))).toBe(true)
    expect(Either.isLeft(parseManifest(json({ mediaType: "application/x-other", layers: [] }), ""))).toBe(true)
  })

  it("resolves an index to linux/amd64, or to its only image", () => {
    const index = Either.getOrThrow(
      parseManifest(
        json({
          mediaType: MediaType.ociIndex,
          manifests: [
            {
              mediaType: MediaType.ociManifest,
              digest: digest("1"),
              size: 1,
              platform: { os: "linux", architecture: "arm64" },
            },
            {
              mediaType: MediaType.ociManifest,
              digest: digest("2"),
              size: 1,
              platform: { os: "linux", architecture: "amd64" },
            },
          ],
        }),
        "",
      ),
    )
    expect(index.kind).toBe("index")
    const manifests = manifestsOf(index)
    expect(Either.getOrThrow(selectPlatformManifest(manifests)).digest).toBe(digest("2"))
    expect(Either.isLeft(selectPlatformManifest([manifests[0]!, manifests[0]!]))).toBe(true)
    expect(Either.getOrThrow(selectPlatformManifest([manifests[0]!])).digest).toBe(digest("1"))
  })
})

describe("registry auth", () => {
  it("reads auths by host from auth or username/password, and matches Docker Hub aliases", () => {
    const config = Either.getOrThrow(
      parseDockerConfig(
        JSON.stringify({
          auths: {
            "https://index.docker.io/v1/": { auth: Buffer.from("hub:pa:ss").toString("base64") },
            "127.0.0.1:5000": { username: "u", password: "p" },
          },
        }),
      ),
    )
    expect(credentialsFor(config, "docker.io")).toEqual({ username: "hub", password: "pa:ss" })
    expect(credentialsFor(config, "127.0.0.1:5000")).toEqual({ username: "u", password: "p" })
    expect(credentialsFor(config, "ghcr.io")).toBeUndefined()
    expect(Either.isLeft(parseDockerConfig("nope"))).toBe(true)
  })

  it("parses a Bearer challenge and builds the token request", () => {
    const challenge = parseChallenge(
      'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"',
    )!
    expect(challenge).toEqual({
      scheme: "bearer",
      params: { realm: "https://auth.example/token", service: "registry.example", scope: "repository:a/b:pull,push" },
    })
    const url = new URL(Either.getOrThrow(tokenRequestUrl(challenge, "a/b")))
    expect(url.searchParams.get("scope")).toBe("repository:a/b:pull,push")
    expect(url.searchParams.get("service")).toBe("registry.example")
    const noScope = Either.getOrThrow(tokenRequestUrl(parseChallenge('Bearer realm="http://h/t"')!, "x/y"))
    expect(new URL(noScope).searchParams.get("scope")).toBe("repository:x/y:pull")
    expect(parseChallenge('Basic realm="r"')?.scheme).toBe("basic")
    expect(Either.getOrThrow(parseTokenResponse(json({ access_token: "t1" })))).toBe("t1")
    expect(Either.isLeft(parseTokenResponse(json({})))).toBe(true)
  })

  it("matches WASM_INSECURE_REGISTRIES by host:port, bare host, or *", () => {
    const list = parseInsecureHosts(" registry.local:5000, other.local ")
    expect(isInsecureHost(list, "registry.local:5000")).toBe(true)
    expect(isInsecureHost(list, "registry.local:5001")).toBe(false)
    expect(isInsecureHost(list, "other.local:443")).toBe(true)
    expect(isInsecureHost(parseInsecureHosts("*"), "anything:1")).toBe(true)
    expect(isInsecureHost(parseInsecureHosts(""), "anything")).toBe(false)
  })
})
