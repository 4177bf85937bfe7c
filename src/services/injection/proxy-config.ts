/**
 * The proxy config an injected pod runs with (`PROXY_CONFIG`): the mesh config's
 * `defaultConfig`, with the values' `meshConfig.defaultConfig.proxyMetadata` beneath it, and the
 * pod's `proxy.mesh.io/config` annotation (YAML or JSON) merged over it field by field — the
 * same merge the agent applies (services/mesh-config/proxy-config.ts).
 *
 * proxyMetadata keys spelled the reference's way (`ISTIO_META_DNS_CAPTURE`) are renamed to the
 * mesh's (`MESH_META_DNS_CAPTURE`), since the agent only reads the latter; a key given in both
 * spellings keeps the mesh one.
 */
import { Either } from "effect"
import { defaultProxyConfig, type EffectiveProxyConfig } from "../mesh-config/index.js"
import { resolveProxyConfig } from "../mesh-config/proxy-config.js"
import { asObject, asStringMap, type Obj } from "../orchestrator/json.js"
import type { AliasedValue } from "./aliased-metadata.js"
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

/**
 * Fields the mesh fills in for every proxy: a pod's PROXY_CONFIG leaves them out when they hold
 * the built-in default, so that the agent takes them from the mesh config it is served (a later
 * change of the mesh's defaults then reaches pods already injected). The reference's rule.
 */
const DEFAULTED_FIELDS = [
  "configPath",
  "binaryPath",
  "controlPlaneAuthPolicy",
  "serviceCluster",
  "drainDuration",
  "terminationDrainDuration",
  "discoveryAddress",
  "envoyMetricsService",
  "envoyAccessLogService",
  "tracing",
  "proxyAdminPort",
  "statNameLength",
  "statusPort",
  "concurrency",
] as const

/**
 * Fields whose zero value is written all the same: the reference's wrapper types, where an explicit
 * `false` or `0` differs from "not set". Every other zero (false, 0, "", the first enum value, an
 * empty list or map) is the same as leaving the field out, so it is left out. `statusPort: 0` is
 * kept too: for our agent it means "no status server", and left out it would mean the default port.
 */
const EXPLICIT_ZERO_FIELDS = new Set(["concurrency", "holdApplicationUntilProxyStarts", "statusPort"])
const ENUM_ZEROS: Readonly<Record<string, string>> = { interceptionMode: "REDIRECT", controlPlaneAuthPolicy: "NONE" }

const isZero = (key: string, value: unknown): boolean => {
  if (value === undefined || value === null) return true
  if (EXPLICIT_ZERO_FIELDS.has(key)) return false
  if (value === false || value === 0 || value === "") return true
  if (ENUM_ZEROS[key] === value) return true
  if (Array.isArray(value)) return value.length === 0
  // Maps (proxyMetadata, runtimeValues) vanish when empty; a set message does not.
  return (key === "proxyMetadata" || key === "runtimeValues") && Object.keys(asObject(value)).length === 0
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** The `PROXY_CONFIG` value of an injected pod: its resolved proxy config without what the defaults give. */
export const proxyConfigEnvValue = (value: EffectiveProxyConfig): string => {
  const defaults = defaultProxyConfig() as unknown as Obj
  const resolved = value as unknown as Obj
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(resolved)) {
    if ((DEFAULTED_FIELDS as ReadonlyArray<string>).includes(key) && sameJson(field, defaults[key])) continue
    if (isZero(key, field)) continue
    out[key] = field
  }
  return JSON.stringify(out)
}
