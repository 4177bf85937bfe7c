/**
 * The in-memory index of the Wasm module cache (no I/O; the layer owns the files and the clock).
 *
 * - A module is keyed by its name (see `moduleName`) and checksum; it remembers its file and when
 *   it was last used.
 * - A URL remembers the checksum it last resolved to and, per WasmPlugin resource, the resource
 *   version that resolved it. A request without a checksum reuses the URL's checksum when its
 *   policy reuses across versions (IfNotPresent) or when its resource version is unchanged; so
 *   Always pulls again when the resource version changed, and only then.
 * - A module unused for longer than the expiry is purged, together with what URLs remember of it.
 * - Files left by a previous run can be restored: on disk a module is known only by the hash of
 *   its name and its checksum, so entries are keyed by that pair, and a restored entry learns its
 *   name from the first request that matches it.
 */
import { join } from "node:path"
import { sha256Hex } from "./checksum.js"

export interface CacheKey {
  /** The request URL as written (what the URL index is keyed by). */
  readonly url: string
  readonly moduleName: string
  /** The checksum the request pins (sha256 field or URL digest), if any. */
  readonly checksum: string | undefined
  readonly resourceName: string
  readonly resourceVersion: string
  readonly reuseAcrossVersions: boolean
}

export interface CachedModule {
  /** undefined for a module restored from disk that no request has named yet. */
  moduleName: string | undefined
  /** sha256 (hex) of the module name: the name of the module's directory in the cache. */
  readonly nameHash: string
  readonly checksum: string
  readonly path: string
  lastUsedMs: number
  readonly urls: Set<string>
}

interface UrlChecksum {
  checksum: string
  readonly versions: Map<string, string>
}

const HEX64 = /^[0-9a-f]{64}$/

/** sha256 (hex) of a module name, as its cache directory is named. */
export const moduleNameHash = (moduleName: string) => sha256Hex(Buffer.from(moduleName, "utf8"))

const moduleId = (nameHash: string, checksum: string) => `${nameHash}\n${checksum}`

export class WasmCacheIndex {
  private readonly modules = new Map<string, CachedModule>()
  private readonly byUrl = new Map<string, UrlChecksum>()

  get size() {
    return this.modules.size
  }

  /** The checksum the request resolves to without fetching, if any. */
  checksumOf(key: CacheKey): string | undefined {
    if (key.checksum !== undefined) return key.checksum
    const known = this.byUrl.get(key.url)
    if (known === undefined) return undefined
    return key.reuseAcrossVersions || known.versions.get(key.resourceName) === key.resourceVersion
      ? known.checksum
      : undefined
  }

  /** The cached module for a request (marked used at `nowMs`), or undefined: fetch it. */
  lookup(key: CacheKey, nowMs: number): CachedModule | undefined {
    const checksum = this.checksumOf(key)
    if (checksum === undefined) return undefined
    const module = this.modules.get(moduleId(moduleNameHash(key.moduleName), checksum))
    if (module === undefined) return undefined
    module.moduleName ??= key.moduleName
    module.lastUsedMs = nowMs
    this.remember(key, checksum, module)
    return module
  }

  /**
   * Records a fetched module (or reuses the entry already holding that name and checksum) and
   * what the request's URL and resource version resolved to. Returns the entry to serve.
   */
  record(key: CacheKey, checksum: string, path: string, nowMs: number): CachedModule {
    const nameHash = moduleNameHash(key.moduleName)
    const id = moduleId(nameHash, checksum)
    const module = this.modules.get(id) ?? {
      moduleName: key.moduleName,
      nameHash,
      checksum,
      path,
      lastUsedMs: nowMs,
      urls: new Set(),
    }
    module.moduleName ??= key.moduleName
    module.lastUsedMs = nowMs
    this.modules.set(id, module)
    this.remember(key, checksum, module)
    return module
  }

  /**
   * Indexes a module file found on disk at start, last used at `lastUsedMs` (its mtime). No URL
   * remembers it, so only a request pinning its checksum is served from it. An entry already
   * present wins.
   */
  restore(nameHash: string, checksum: string, path: string, lastUsedMs: number): void {
    const id = moduleId(nameHash, checksum)
    if (this.modules.has(id)) return
    this.modules.set(id, { moduleName: undefined, nameHash, checksum, path, lastUsedMs, urls: new Set() })
  }

  /** Modules unused for longer than `expiryMs` at `nowMs`. */
  expired(nowMs: number, expiryMs: number): ReadonlyArray<CachedModule> {
    return [...this.modules.values()].filter((module) => nowMs - module.lastUsedMs > expiryMs)
  }

  /** Forgets a module and the URL checksums that point at it. */
  remove(module: CachedModule): void {
    this.modules.delete(moduleId(module.nameHash, module.checksum))
    for (const url of module.urls) {
      if (this.byUrl.get(url)?.checksum === module.checksum) this.byUrl.delete(url)
    }
  }

  private remember(key: CacheKey, checksum: string, module: CachedModule) {
    const known = this.byUrl.get(key.url)
    if (known === undefined)
      this.byUrl.set(key.url, { checksum, versions: new Map([[key.resourceName, key.resourceVersion]]) })
    else {
      known.checksum = checksum
      known.versions.set(key.resourceName, key.resourceVersion)
    }
    module.urls.add(key.url)
  }
}

/**
 * Where a module's file lives: one directory per module name (hashed, so any URL is a safe file
 * name), one file per checksum.
 */
export const moduleFilePath = (cacheDir: string, moduleName: string, checksum: string) =>
  join(cacheDir, moduleNameHash(moduleName), `${checksum}.wasm`)

/**
 * The name hash and checksum a cache file's place encodes (`<nameHash>/<checksum>.wasm`), or
 * undefined for anything else (temporary files of an interrupted write, strays).
 */
export const parseModuleFilePlace = (
  directoryName: string,
  fileName: string,
): { readonly nameHash: string; readonly checksum: string } | undefined => {
  const checksum = fileName.endsWith(".wasm") ? fileName.slice(0, -".wasm".length) : ""
  return HEX64.test(directoryName) && HEX64.test(checksum) ? { nameHash: directoryName, checksum } : undefined
}
