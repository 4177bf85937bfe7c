/**
 * Reading labels and annotations under both spellings: the mesh's (`sidecar.mesh.io/x`) and the
 * reference's (`sidecar.istio.io/x`), so that existing manifests keep working. When both are
 * present with different values the mesh spelling wins and a warning says which was ignored.
 */
import { upstreamSpelling } from "./names.js"

export interface AliasedValue {
  readonly value: string
  /** The key the value was read from (the mesh or the upstream spelling): named in errors. */
  readonly key: string
}

export interface AliasedReader {
  /** The value under the mesh spelling, else the upstream one; undefined when neither is set. */
  readonly get: (meshKey: string) => AliasedValue | undefined
  /** Conflicts met so far, once each. */
  readonly warnings: () => ReadonlyArray<string>
}

export const aliasedReader = (
  entries: Readonly<Record<string, string>>,
  what: "annotation" | "label" | "namespace label",
): AliasedReader => {
  const warned = new Map<string, string>()
  return {
    get: (meshKey) => {
      const upstreamKey = upstreamSpelling(meshKey)
      const mesh = Object.hasOwn(entries, meshKey) ? entries[meshKey] : undefined
      const upstream = upstreamKey !== meshKey && Object.hasOwn(entries, upstreamKey) ? entries[upstreamKey] : undefined
      if (mesh !== undefined) {
        if (upstream !== undefined && upstream !== mesh && !warned.has(meshKey)) {
          warned.set(
            meshKey,
            `${what} ${upstreamKey}="${upstream}" ignored: ${meshKey}="${mesh}" takes precedence over the upstream spelling`,
          )
        }
        return { value: mesh, key: meshKey }
      }
      return upstream === undefined ? undefined : { value: upstream, key: upstreamKey }
    },
    warnings: () => [...warned.values()],
  }
}

/** Whether either spelling of a key is present (used for "unless already set"). */
export const hasAliased = (entries: Readonly<Record<string, string>>, meshKey: string): boolean =>
  Object.hasOwn(entries, meshKey) || Object.hasOwn(entries, upstreamSpelling(meshKey))
