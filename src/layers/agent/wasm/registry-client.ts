/**
 * Pulling a Wasm module from an OCI registry over the Distribution HTTP API, in two steps as the
 * reference does: `resolve` reads the manifest (following an index to its linux/amd64 image) and
 * gives the image digest, so a pinned checksum is checked before any layer is downloaded; then
 * `download` fetches the module layer, verifies it against its descriptor and unpacks it.
 *
 * Bodies are bounded: manifests and token answers at 4 MiB (the registry's own manifest limit),
 * the module layer at MESH_WASM_MAX_BINARY_SIZE_BYTES (refused unread when its descriptor says
 * more), streamed into a temporary file of the cache directory and verified as it arrives.
 *
 * Auth: anonymous first; on a 401 the `WWW-Authenticate` challenge is answered — Basic with the
 * pull secret's credentials, Bearer by asking the realm for a token (with those credentials when
 * there are some) — and the answer is reused for the rest of the pull.
 */
import { Data, Effect, Either, type Scope } from "effect"
import { digestHex, sha256Hex } from "../../../services/agent/wasm/checksum.js"
import { manifestReference, type OciModuleSource, registryApiHost } from "../../../services/agent/wasm/module-url.js"
import {
  MANIFEST_ACCEPT,
  type ModuleLayer,
  parseManifest,
  selectModuleLayer,
  selectPlatformManifest,
} from "../../../services/agent/wasm/oci-manifest.js"
import {
  basicAuthorization,
  parseChallenge,
  parseTokenResponse,
  type RegistryCredentials,
  tokenRequestUrl,
} from "../../../services/agent/wasm/registry-auth.js"
import { type HttpGetOptions, httpDownload, httpGet, type RetryPolicy, type SavedFile } from "./http-get.js"
import { temporaryFile } from "./module-files.js"
import { pluginFromTarLayer } from "./unbox-file.js"

/** Which step failed (the `result` of `wasm_remote_fetch_count`). */
export class RegistryPullError extends Data.TaggedError("RegistryPullError")<{
  readonly step: "manifest" | "download" | "module"
  readonly reason: string
}> {}

export interface RegistryPullOptions {
  /** Plain http instead of https (WASM_INSECURE_REGISTRIES). */
  readonly insecure: boolean
  readonly credentials: RegistryCredentials | undefined
  readonly request: Omit<HttpGetOptions, "headers" | "maxBytes" | "maxBytesSource">
  readonly retry: RetryPolicy
  /** MESH_WASM_MAX_BINARY_SIZE_BYTES: the largest layer, and the largest module unpacked from it. */
  readonly maxModuleBytes: number
  /** Where the layer is downloaded to (temporary files of the cache directory). */
  readonly cacheDir: string
}

/** Distribution refuses manifests over 4 MiB; nothing larger is read as a manifest or a token. */
export const MANIFEST_MAX_BYTES = 4 * 1024 * 1024

export interface ResolvedImage {
  /** The hex sha256 of the manifest (or index) the reference resolved to. */
  readonly digest: string
  readonly module: ModuleLayer
  /** Downloads, verifies and unpacks the module into a temporary file of the scope. */
  readonly download: Effect.Effect<SavedFile, RegistryPullError, Scope.Scope>
}

const describe = (answer: { readonly status: number; readonly body: Buffer }) => {
  const text = answer.body.toString("utf8").slice(0, 200).trim()
  return `HTTP ${answer.status}${text === "" ? "" : `: ${text}`}`
}

export const resolveImage = (source: OciModuleSource, options: RegistryPullOptions) =>
  Effect.gen(function* () {
    const base = `${options.insecure ? "http" : "https"}://${registryApiHost(source.registry)}/v2/${source.repository}`
    let authorization: string | undefined

    const fail = (step: RegistryPullError["step"], reason: string) => new RegistryPullError({ step, reason })
    const small = { ...options.request, maxBytes: MANIFEST_MAX_BYTES, maxBytesSource: "the 4 MiB manifest limit" }
    const withAuthorization = (headers: Record<string, string>) =>
      authorization === undefined ? headers : { ...headers, authorization }
    const get = (url: string, headers: Record<string, string>, step: RegistryPullError["step"]) =>
      httpGet(url, { ...small, headers: withAuthorization(headers) }, options.retry).pipe(
        Effect.mapError((e) => fail(step, `GET ${e.url}: ${e.reason}`)),
      )

    /** Answers a 401's challenge; false when it cannot be answered. */
    const authenticate = (answer: { readonly headers: Headers }, step: RegistryPullError["step"]) =>
      Effect.gen(function* () {
        const challenge = parseChallenge(answer.headers.get("www-authenticate") ?? "")
        if (challenge?.scheme === "basic") {
          if (options.credentials === undefined) return false
          authorization = basicAuthorization(options.credentials)
          return true
        }
        if (challenge?.scheme !== "bearer") return false
        const tokenUrl = tokenRequestUrl(challenge, source.repository)
        if (Either.isLeft(tokenUrl)) return yield* fail(step, tokenUrl.left)
        const tokenAnswer = yield* httpGet(
          tokenUrl.right,
          {
            ...small,
            headers:
              options.credentials === undefined ? {} : { authorization: basicAuthorization(options.credentials) },
          },
          options.retry,
        ).pipe(Effect.mapError((e) => fail(step, `token request: ${e.reason}`)))
        if (tokenAnswer.status !== 200) return yield* fail(step, `token request: ${describe(tokenAnswer)}`)
        const token = parseTokenResponse(tokenAnswer.body)
        if (Either.isLeft(token)) return yield* fail(step, token.left)
        authorization = `Bearer ${token.right}`
        return true
      })

    /** GET with auth; 2xx or a failure of `step`. */
    const getAuthorized = (url: string, headers: Record<string, string>, step: RegistryPullError["step"]) =>
      Effect.gen(function* () {
        let answer = yield* get(url, headers, step)
        if (answer.status === 401 && (yield* authenticate(answer, step))) answer = yield* get(url, headers, step)
        if (answer.status < 200 || answer.status >= 300) return yield* fail(step, `GET ${url}: ${describe(answer)}`)
        return answer
      })

    /** A manifest by tag or digest; a digest reference is verified against the bytes. */
    const manifest = (reference: string) =>
      Effect.gen(function* () {
        const answer = yield* getAuthorized(`${base}/manifests/${reference}`, { accept: MANIFEST_ACCEPT }, "manifest")
        const digest = sha256Hex(answer.body)
        const pinned = reference.startsWith("sha256:") ? digestHex(reference) : undefined
        if (pinned !== undefined && pinned !== digest)
          return yield* fail("manifest", `manifest ${reference} has digest sha256:${digest}`)
        const document = parseManifest(answer.body, answer.headers.get("content-type") ?? "")
        if (Either.isLeft(document)) return yield* fail("manifest", document.left)
        return { digest, document: document.right }
      })

    const top = yield* manifest(manifestReference(source))
    let image = top.document
    if (image.kind === "index") {
      const chosen = selectPlatformManifest(image.manifests)
      if (Either.isLeft(chosen)) return yield* fail("manifest", chosen.left)
      image = (yield* manifest(chosen.right.digest)).document
      if (image.kind !== "image") return yield* fail("manifest", "an image index points at another index")
    }
    const module = selectModuleLayer(image.layers)
    if (Either.isLeft(module)) return yield* fail("manifest", module.left)
    const layer = module.right.layer

    const limits = { cacheDir: options.cacheDir, maxBytes: options.maxModuleBytes }
    const blobUrl = `${base}/blobs/${layer.digest}`
    const getBlob = (path: string) =>
      httpDownload(
        blobUrl,
        path,
        {
          ...options.request,
          headers: withAuthorization({}),
          maxBytes: options.maxModuleBytes,
          maxBytesSource: "MESH_WASM_MAX_BINARY_SIZE_BYTES",
        },
        options.retry,
      ).pipe(Effect.mapError((e) => fail("download", `GET ${e.url}: ${e.reason}`)))

    const download = Effect.gen(function* () {
      if (layer.size > options.maxModuleBytes)
        return yield* fail(
          "download",
          `layer ${layer.digest} has ${layer.size} bytes, over the limit of ${options.maxModuleBytes} (MESH_WASM_MAX_BINARY_SIZE_BYTES)`,
        )
      const path = yield* temporaryFile(options.cacheDir).pipe(Effect.mapError((e) => fail("download", e.reason)))
      let answer = yield* getBlob(path)
      if (answer.status === 401 && (yield* authenticate(answer, "download"))) answer = yield* getBlob(path)
      if (answer.file === undefined)
        return yield* fail("download", `GET ${blobUrl}: ${describe({ status: answer.status, body: answer.errorBody })}`)
      if (answer.file.sha256 !== digestHex(layer.digest))
        return yield* fail("download", `layer ${layer.digest} downloaded with digest sha256:${answer.file.sha256}`)
      if (module.right.packaging === "wasm") return answer.file
      return yield* pluginFromTarLayer(answer.file, limits).pipe(Effect.mapError((e) => fail("module", e.reason)))
    })

    return { digest: top.digest, module: module.right, download } satisfies ResolvedImage
  })
