/**
 * Wasm module URLs of a WasmPlugin: `http(s)://…` is downloaded as is; `oci://registry/repo[:tag]
 * [@sha256:…]` and a bare `registry/repo…` (no scheme) name an OCI image. Docker Hub's
 * conventions apply to OCI names: no registry component means `docker.io`, a single-component
 * repository there lives under `library/`, and no tag and no digest means `latest`.
 */
import { Either } from "effect"
import type { WasmPullPolicy } from "./contract.js"

export interface HttpModuleSource {
  readonly kind: "http"
  readonly url: string
}

export interface OciModuleSource {
  readonly kind: "oci"
  /** Registry as written (`docker.io` when omitted), `host[:port]`. */
  readonly registry: string
  readonly repository: string
  /** The tag, `latest` when neither a tag nor a digest is given; undefined when only a digest is. */
  readonly tag: string | undefined
  /** `sha256:<hex>` when the reference pins a digest. */
  readonly digest: string | undefined
}

export type WasmModuleSource = HttpModuleSource | OciModuleSource

export const DEFAULT_REGISTRY = "docker.io"
export const DEFAULT_TAG = "latest"

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//
const DIGEST = /^sha256:[0-9a-f]{64}$/
const TAG = /^[\w][\w.-]{0,127}$/
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/

/** A first path component names a registry when it looks like a host (the Docker rule). */
const isRegistryComponent = (component: string) =>
  component.includes(".") || component.includes(":") || component === "localhost"

const parseOciReference = (reference: string): Either.Either<OciModuleSource, string> => {
  const at = reference.indexOf("@")
  const digest = at === -1 ? undefined : reference.slice(at + 1)
  if (digest !== undefined && !DIGEST.test(digest)) return Either.left(`digest "${digest}" is not sha256:<64 hex>`)
  let name = at === -1 ? reference : reference.slice(0, at)
  let tag: string | undefined
  const colon = name.lastIndexOf(":")
  if (colon > name.lastIndexOf("/")) {
    tag = name.slice(colon + 1)
    name = name.slice(0, colon)
    if (!TAG.test(tag)) return Either.left(`tag "${tag}" is invalid`)
  }
  const components = name.split("/")
  const registry = components.length > 1 && isRegistryComponent(components[0]!) ? components.shift()! : DEFAULT_REGISTRY
  if (registry === DEFAULT_REGISTRY && components.length === 1) components.unshift("library")
  if (components.length === 0 || !components.every((c) => PATH_COMPONENT.test(c)))
    return Either.left(`repository "${components.join("/")}" is invalid`)
  return Either.right({
    kind: "oci",
    registry,
    repository: components.join("/"),
    tag: tag ?? (digest === undefined ? DEFAULT_TAG : undefined),
    digest,
  })
}

/** Parses a module URL; the Left is the reason it cannot be fetched. */
export const parseModuleUrl = (raw: string): Either.Either<WasmModuleSource, string> => {
  const url = raw.trim()
  if (url === "") return Either.left("empty module URL")
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase()
  if (scheme === undefined) return parseOciReference(url)
  if (scheme === "oci") return parseOciReference(url.slice("oci://".length))
  if (scheme === "http" || scheme === "https") {
    try {
      return Either.right({ kind: "http", url: new URL(url).href })
    } catch {
      return Either.left(`"${url}" is not a valid URL`)
    }
  }
  return Either.left(`unsupported module URL scheme "${scheme}" (want http, https or oci)`)
}

/** The host the registry API answers on (Docker Hub's API is not at `docker.io`). */
export const registryApiHost = (registry: string) =>
  registry === DEFAULT_REGISTRY || registry === "index.docker.io" ? "registry-1.docker.io" : registry

/** The reference the manifest is requested by: the digest when pinned, else the tag. */
export const manifestReference = (source: OciModuleSource) => source.digest ?? source.tag ?? DEFAULT_TAG

/** The host[:port] a source is fetched from (matched against WASM_INSECURE_REGISTRIES). */
export const sourceHost = (source: WasmModuleSource) =>
  source.kind === "oci" ? source.registry : new URL(source.url).host

/**
 * The module's identity neutral of its content version: the cache keys a module by this name
 * plus its checksum, so pulling an image by tag and by digest shares one cached file.
 */
export const moduleName = (source: WasmModuleSource) =>
  source.kind === "http" ? source.url : `oci://${source.registry}/${source.repository}`

/**
 * Whether a cached module may be reused when the WasmPlugin's resource version changed.
 * IfNotPresent: yes. Always: no. Unset: like IfNotPresent, except for an OCI image resolved by
 * the tag `latest`, which is expected to move (the reference's rule).
 */
export const reusesAcrossVersions = (policy: WasmPullPolicy, source: WasmModuleSource) => {
  if (policy === "Always") return false
  if (policy === "IfNotPresent") return true
  return !(source.kind === "oci" && source.digest === undefined && source.tag === DEFAULT_TAG)
}
