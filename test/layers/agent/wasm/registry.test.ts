/**
 * The WasmFetcher against a real OCI registry (Debian `docker-registry` on loopback): modules pushed
 * over the registry HTTP API as the Wasm OCI artifact, as a Docker image with plugin.wasm and
 * behind an image index, pulled by tag and by digest; WASM_INSECURE_REGISTRIES deciding plain
 * http; and the Bearer token flow through an authenticating gate in front of the registry.
 */
import { readFile } from "node:fs/promises"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { counter, makeFetcher, startServer, wasmModule } from "./helpers.js"
import {
  pushDockerImage,
  pushIndex,
  pushWasmArtifact,
  REGISTRY_BINARY,
  registryAvailable,
  startRegistry,
} from "./registry.js"

if (!registryAvailable) console.warn(`skipping the OCI registry tests: ${REGISTRY_BINARY} is not installed`)

const ARTIFACT = wasmModule("oci artifact")
const IMAGE = wasmModule("docker image")
const ARM = wasmModule("arm64 image")

const moduleAt = (path: string) => Effect.promise(() => readFile(path))

describe.skipIf(!registryAvailable)("WasmFetcher against docker-registry", () => {
  it.scopedLive("pulls the Wasm OCI artifact by tag, then by digest from the cache", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const registry = yield* startRegistry
      const pushed = yield* Effect.promise(() => pushWasmArtifact(registry.base, "filters/artifact", "v1", ARTIFACT))
      const { fetcher } = yield* makeFetcher({ insecureRegistries: registry.host })

      const byTag = yield* fetcher.fetch({ url: `oci://${registry.host}/filters/artifact:v1`, pullPolicy: "" })
      expect(yield* moduleAt(byTag)).toEqual(ARTIFACT)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "success" })).toBe(1)

      // The digest is the manifest's: the same module, served from the cache.
      const byDigest = yield* fetcher.fetch({
        url: `${registry.host}/filters/artifact@sha256:${pushed.digest}`,
        pullPolicy: "IfNotPresent",
      })
      expect(byDigest).toBe(byTag)
      expect(yield* counter(metrics, "wasm_cache_lookup_count", { hit: "true" })).toBe(1)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "success" })).toBe(1)

      // A fresh cache pulls by digest over the network, and checks a pinned sha256 against it.
      const fresh = yield* makeFetcher({ insecureRegistries: "*" })
      const pulled = yield* fresh.fetcher.fetch({
        url: `oci://${registry.host}/filters/artifact@sha256:${pushed.digest}`,
        sha256: pushed.digest,
        pullPolicy: "Always",
      })
      expect(yield* moduleAt(pulled)).toEqual(ARTIFACT)
      const mismatch = yield* Effect.flip(
        fresh.fetcher.fetch({
          url: `oci://${registry.host}/filters/artifact:v1`,
          sha256: "0".repeat(64),
          pullPolicy: "",
        }),
      )
      expect(mismatch.reason).toContain(`checksum ${pushed.digest}`)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "checksum_mismatched" })).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("pulls the Docker image variant (tar.gz layer with plugin.wasm) by tag and by digest", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry
      const pushed = yield* Effect.promise(() => pushDockerImage(registry.base, "filters/image", "1.0", IMAGE))
      const { fetcher } = yield* makeFetcher({ insecureRegistries: registry.host })
      const byTag = yield* fetcher.fetch({ url: `oci://${registry.host}/filters/image:1.0`, pullPolicy: "" })
      expect(yield* moduleAt(byTag)).toEqual(IMAGE)
      const other = yield* makeFetcher({ insecureRegistries: registry.host })
      const byDigest = yield* other.fetcher.fetch({
        url: `oci://${registry.host}/filters/image@sha256:${pushed.digest}`,
        pullPolicy: "",
      })
      expect(yield* moduleAt(byDigest)).toEqual(IMAGE)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("resolves an image index to its linux/amd64 image", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry
      const arm = yield* Effect.promise(() => pushWasmArtifact(registry.base, "filters/multi", "arm", ARM))
      const amd = yield* Effect.promise(() => pushWasmArtifact(registry.base, "filters/multi", "amd", ARTIFACT))
      yield* Effect.promise(() =>
        pushIndex(registry.base, "filters/multi", "v1", [
          { image: arm, architecture: "arm64" },
          { image: amd, architecture: "amd64" },
        ]),
      )
      const { fetcher } = yield* makeFetcher({ insecureRegistries: registry.host })
      const path = yield* fetcher.fetch({ url: `oci://${registry.host}/filters/multi:v1`, pullPolicy: "" })
      expect(yield* moduleAt(path)).toEqual(ARTIFACT)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("speaks https to a registry missing from WASM_INSECURE_REGISTRIES, and reports unknown tags", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const registry = yield* startRegistry
      yield* Effect.promise(() => pushWasmArtifact(registry.base, "filters/artifact", "v1", ARTIFACT))
      const secure = yield* makeFetcher({ insecureRegistries: "other.example:5000", maxAttempts: 1 })
      const error = yield* Effect.flip(
        secure.fetcher.fetch({ url: `oci://${registry.host}/filters/artifact:v1`, pullPolicy: "" }),
      )
      expect(error.reason).toContain(`https://${registry.host}/v2/`)
      const insecure = yield* makeFetcher({ insecureRegistries: registry.host })
      const unknown = yield* Effect.flip(
        insecure.fetcher.fetch({ url: `oci://${registry.host}/filters/artifact:nope`, pullPolicy: "" }),
      )
      expect(unknown.reason).toContain("404")
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "manifest_failure" })).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("answers a Bearer challenge with a token got with the pull secret's credentials", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry
      yield* Effect.promise(() => pushDockerImage(registry.base, "private/filter", "v1", IMAGE))
      const issued: Array<string> = []
      // The gate: /token wants Basic user:secret; /v2/* wants the token it issued.
      const gate = yield* startServer(async (req, res) => {
        const url = new URL(req.url ?? "/", "http://gate")
        if (url.pathname === "/token") {
          if (req.headers.authorization !== `Basic ${Buffer.from("user:secret").toString("base64")}`) {
            res.statusCode = 401
            return void res.end()
          }
          issued.push(`${url.searchParams.get("service")} ${url.searchParams.get("scope")}`)
          return void res.end(JSON.stringify({ token: "granted" }))
        }
        if (req.headers.authorization !== "Bearer granted") {
          res.statusCode = 401
          res.setHeader(
            "www-authenticate",
            `Bearer realm="http://127.0.0.1:${gatePort()}/token",service="gate",scope="repository:private/filter:pull"`,
          )
          return void res.end()
        }
        const upstream = await fetch(`${registry.base}${req.url}`, {
          headers: { accept: String(req.headers.accept ?? "*/*") },
        })
        res.statusCode = upstream.status
        const contentType = upstream.headers.get("content-type")
        if (contentType !== null) res.setHeader("content-type", contentType)
        res.end(Buffer.from(await upstream.arrayBuffer()))
      })
      const gatePort = () => gate.port
      const gateHost = `127.0.0.1:${gate.port}`
      const pullSecret = JSON.stringify({
        auths: { [gateHost]: { auth: Buffer.from("user:secret").toString("base64") } },
      })
      const { fetcher } = yield* makeFetcher({ insecureRegistries: gateHost })
      const url = `oci://${gateHost}/private/filter:v1`

      const anonymous = yield* Effect.flip(fetcher.fetch({ url, pullPolicy: "" }))
      expect(anonymous.reason).toContain("token request: HTTP 401")

      const path = yield* fetcher.fetch({ url, pullPolicy: "", pullSecret })
      expect(yield* moduleAt(path)).toEqual(IMAGE)
      expect(issued[0]).toBe("gate repository:private/filter:pull")
      // One token for the whole pull: manifest and blob.
      expect(issued.length).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
