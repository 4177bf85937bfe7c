/**
 * The proxy config an injected pod runs with (`PROXY_CONFIG`): the mesh config's
 * `defaultConfig`, with the values' `meshConfig.defaultConfig.proxyMetadata` beneath it, and the
 * pod's `proxy.mesh.io/config` annotation (YAML or JSON) merged over it field by field — the
 * same merge the agent applies (services/agent/bootstrap/proxy-config.ts).
 *
 * proxyMetadata keys spelled the reference's way (`ISTIO_META_DNS_CAPTURE`) are renamed to the
 * mesh's (`MESH_META_DNS_CAPTURE`), since the agent only reads the latter; a key given in both
 * spellings keeps the mesh one.
 */
import { Either } from "effect"
import { resolveProxyConfig } from "../agent/bootstrap/proxy-config.js"
import { defaultProxyConfig, type EffectiveProxyConfig } from "../mesh-config/index.js"
import type { AliasedValue } from "./aliased-metadata.js"
import { asObject, asStringMap, type Obj } from "./json.js"
import { META_PREFIXES } from "./names.js"

export interface InjectedProxyConfig {
  readonly value: EffectiveProxyConfig
  readonly warnings: ReadonlyArray<string>
}

const meshMetadataKey = (key: string): string =>
  key.startsWith(META_PREFIXES.upstream) ? `${META_PREFIXES.mesh}${key.slice(META_PREFIXES.upstream.length)}` : key

const renameMetadata = (metadata: Readonly<Record<string, string>>): Readonly<Record<string, string>> => {
  const out: Record<string, string> = {}
  // Upstream spellings first, so that a mesh spelling of the same key overwrites them.
  const entries = Object.entries(metadata).sort(
    ([a], [b]) => Number(!a.startsWith(META_PREFIXES.upstream)) - Number(!b.startsWith(META_PREFIXES.upstream)),
  )
  for (const [key, value] of entries) out[meshMetadataKey(key)] = value
  return out
}

export const injectedProxyConfig = (
  meshConfig: Obj,
  valuesProxyMetadata: Readonly<Record<string, string>>,
  annotation: AliasedValue | undefined,
): Either.Either<InjectedProxyConfig, string> => {
  const meshDefault = asObject(meshConfig.defaultConfig)
  const base = {
    ...defaultProxyConfig(),
    ...meshDefault,
    proxyMetadata: { ...valuesProxyMetadata, ...asStringMap(meshDefault.proxyMetadata) },
  } as EffectiveProxyConfig
  const overrides = annotation === undefined ? [] : [{ source: annotation.key, text: annotation.value }]
  return Either.match(resolveProxyConfig(base, overrides), {
    onLeft: (problems) =>
      Either.left(
        annotation === undefined
          ? `invalid mesh config defaultConfig: ${problems.join("; ")}`
          : `invalid annotation ${problems.map((p) => (p.startsWith(annotation.key) ? p : `${annotation.key}: ${p}`)).join("; ")}`,
      ),
    onRight: ({ value, warnings }) =>
      Either.right({ value: { ...value, proxyMetadata: renameMetadata(value.proxyMetadata) }, warnings }),
  })
}
