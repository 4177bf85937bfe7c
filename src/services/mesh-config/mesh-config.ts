/**
 * Mesh configuration: built-in defaults, how a file applies over them, and the
 * `SHARED_MESH_CONFIG` precedence rule — all pure. The watcher service and its layers use these.
 *
 * Applying a file follows the reference: every field given replaces the current value, except
 * - `defaultConfig` (ProxyConfig) merges field by field into the current proxy config, and its
 *   `proxyMetadata` map merges key by key;
 * - `extensionProviders` merge by name (a provider of an existing name replaces it, new names
 *   are appended);
 * - `trustDomainAliases` accumulate (sorted union);
 * - `defaultProviders` merge field by field.
 * With a shared mesh config, the result is defaults ← shared ← standard: the standard mesh
 * config takes precedence.
 */
import { Either, type Schema } from "effect"
import { describeYamlLimitProblem, parseDocumentBounded } from "../config-model/bounded-yaml.js"
import { decodeAll, renderPath } from "../config-model/issues.js"
import type { ValidationIssue } from "../config-model/resource.js"
import { DEFAULT_TRUST_DOMAIN, SYSTEM_NAMESPACE } from "../constants.js"
import { DEFAULT_RAW_EXTENSION_PROVIDERS } from "./extension-providers.js"
import {
  type MeshConfigInput,
  MeshConfig as MeshConfigSchema,
  type MeshNetworks,
  MeshNetworks as MeshNetworksSchema,
  type ProxyConfig,
} from "./schema.js"

export type { MeshConfigInput, MeshNetworks, ProxyConfig }

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** A proxy config with the fields every consumer relies on always present. */
export interface EffectiveProxyConfig extends ProxyConfig {
  readonly configPath: string
  readonly binaryPath: string
  readonly serviceCluster: string
  readonly drainDuration: string
  readonly terminationDrainDuration: string
  readonly discoveryAddress: string
  readonly proxyAdminPort: number
  readonly statusPort: number
  readonly concurrency: number
  readonly statNameLength: number
  readonly controlPlaneAuthPolicy: "NONE" | "MUTUAL_TLS" | "INHERIT"
  readonly proxyMetadata: Readonly<Record<string, string>>
}

/** The effective mesh configuration: defaults with the files applied. */
export interface MeshConfig extends MeshConfigInput {
  readonly proxyListenPort: number
  readonly proxyInboundListenPort: number
  readonly connectTimeout: string
  readonly protocolDetectionTimeout: string
  readonly ingressClass: string
  readonly ingressService: string
  readonly ingressControllerMode: "UNSPECIFIED" | "OFF" | "DEFAULT" | "STRICT"
  readonly enableTracing: boolean
  readonly accessLogFile: string
  readonly accessLogFormat: string
  readonly accessLogEncoding: "TEXT" | "JSON"
  readonly enableEnvoyAccessLogService: boolean
  readonly defaultConfig: EffectiveProxyConfig
  readonly outboundTrafficPolicy: { readonly mode: "REGISTRY_ONLY" | "ALLOW_ANY" }
  readonly inboundTrafficPolicy: { readonly mode: "PASSTHROUGH" | "LOCALHOST" }
  readonly enableAutoMtls: boolean
  readonly trustDomain: string
  readonly trustDomainAliases: ReadonlyArray<string>
  readonly rootNamespace: string
  readonly defaultServiceExportTo: ReadonlyArray<string>
  readonly defaultVirtualServiceExportTo: ReadonlyArray<string>
  readonly defaultDestinationRuleExportTo: ReadonlyArray<string>
  readonly dnsRefreshRate: string
  readonly localityLbSetting: Readonly<Record<string, unknown>>
  readonly enablePrometheusMerge: boolean
  readonly extensionProviders: ReadonlyArray<{ readonly name: string; readonly [field: string]: unknown }>
  readonly defaultProviders: {
    readonly tracing?: ReadonlyArray<string>
    readonly metrics?: ReadonlyArray<string>
    readonly accessLogging?: ReadonlyArray<string>
  }
}

/** Address of the discovery server's TLS xDS port inside the mesh. */
export const DEFAULT_DISCOVERY_ADDRESS = `meshd.${SYSTEM_NAMESPACE}.svc:15012`

export const defaultProxyConfig = (): EffectiveProxyConfig => ({
  configPath: "./etc/mesh/proxy",
  binaryPath: "/usr/local/bin/proxy",
  serviceCluster: "mesh-proxy",
  drainDuration: "45s",
  terminationDrainDuration: "5s",
  discoveryAddress: DEFAULT_DISCOVERY_ADDRESS,
  proxyAdminPort: 15000,
  statusPort: 15020,
  concurrency: 2,
  statNameLength: 189,
  controlPlaneAuthPolicy: "MUTUAL_TLS",
  tracing: { zipkin: { address: `zipkin.${SYSTEM_NAMESPACE}:9411` } },
  proxyMetadata: {},
})

export const defaultMeshConfig = (): MeshConfig => ({
  proxyListenPort: 15001,
  proxyInboundListenPort: 15006,
  connectTimeout: "10s",
  protocolDetectionTimeout: "0s",
  ingressClass: "mesh",
  ingressService: "mesh-ingressgateway",
  ingressControllerMode: "STRICT",
  enableTracing: true,
  accessLogFile: "",
  accessLogFormat: "",
  accessLogEncoding: "TEXT",
  enableEnvoyAccessLogService: false,
  defaultConfig: defaultProxyConfig(),
  outboundTrafficPolicy: { mode: "ALLOW_ANY" },
  inboundTrafficPolicy: { mode: "PASSTHROUGH" },
  enableAutoMtls: true,
  trustDomain: DEFAULT_TRUST_DOMAIN,
  trustDomainAliases: [],
  rootNamespace: SYSTEM_NAMESPACE,
  defaultServiceExportTo: ["*"],
  defaultVirtualServiceExportTo: ["*"],
  defaultDestinationRuleExportTo: ["*"],
  dnsRefreshRate: "60s",
  localityLbSetting: { enabled: true },
  enablePrometheusMerge: true,
  extensionProviders: [...DEFAULT_RAW_EXTENSION_PROVIDERS],
  defaultProviders: {},
})

export const defaultMeshNetworks = (): MeshNetworks => ({ networks: {} })

/** The result of reading one configuration text. */
export type Applied<A> = Either.Either<
  { readonly value: A; readonly warnings: ReadonlyArray<string> },
  ReadonlyArray<ValidationIssue>
>

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const issue = (file: string, path: string, message: string): ValidationIssue => ({
  file,
  documentIndex: 0,
  path,
  message,
})

/** Parses a single-document YAML mapping; empty text is an empty mapping. */
export const parseYamlMapping = (
  file: string,
  text: string,
): Either.Either<Record<string, unknown>, ReadonlyArray<ValidationIssue>> => {
  // Nesting and node bounds as every config reader (config-model/yaml-limits.ts).
  const parsed = parseDocumentBounded(text, { prettyErrors: true, uniqueKeys: true })
  if ("problem" in parsed) return Either.left([issue(file, "", describeYamlLimitProblem(parsed.problem))])
  const doc = parsed.document
  if (doc.errors.length > 0) {
    return Either.left(
      doc.errors.map((e) => {
        const line = e.linePos?.[0]?.line
        const reason = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "")
        return issue(file, "", `YAML syntax error${line !== undefined ? ` at line ${line}` : ""}: ${reason}`)
      }),
    )
  }
  const value: unknown = doc.toJS({ maxAliasCount: 1000 })
  if (value === null || value === undefined) return Either.right({})
  if (!isRecord(value)) return Either.left([issue(file, "", "must be a YAML mapping")])
  return Either.right(value)
}

/** Top-level (and defaultConfig) field names the schema does not know: ignored, but worth a warning. */
const unknownFields = (input: Record<string, unknown>): ReadonlyArray<string> => {
  const known = new Set(Object.keys(MeshConfigSchema.from.fields))
  const knownProxy = new Set(Object.keys(MeshConfigSchema.from.fields.defaultConfig.from.from.fields))
  const out = Object.keys(input).filter((k) => !known.has(k))
  if (isRecord(input.defaultConfig)) {
    out.push(
      ...Object.keys(input.defaultConfig)
        .filter((k) => !knownProxy.has(k))
        .map((k) => `defaultConfig.${k}`),
    )
  }
  return out
}

const decodeWith = <A, I>(
  schema: Schema.Schema<A, I>,
  file: string,
  input: unknown,
): Either.Either<A, ReadonlyArray<ValidationIssue>> =>
  Either.mapLeft(decodeAll(schema as unknown as Schema.Schema<A, unknown>, input, { strict: false }), (problems) =>
    problems.map((p) => issue(file, renderPath(p.path), p.message)),
  )

/** Applies a validated input over a proxy config (field by field; proxyMetadata key by key). */
export const mergeProxyConfig = (base: EffectiveProxyConfig, input: ProxyConfig): EffectiveProxyConfig => {
  const out: Mutable<EffectiveProxyConfig> = { ...base }
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue
    if (key === "proxyMetadata") out.proxyMetadata = { ...base.proxyMetadata, ...(value as Record<string, string>) }
    else (out as Record<string, unknown>)[key] = value
  }
  return out
}

/** Applies a validated input over a mesh config, with the reference's merge rules. */
export const mergeMeshConfig = (base: MeshConfig, input: MeshConfigInput): MeshConfig => {
  const out: Mutable<MeshConfig> = { ...base }
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue
    switch (key) {
      case "defaultConfig":
        out.defaultConfig = mergeProxyConfig(base.defaultConfig, value as ProxyConfig)
        break
      case "extensionProviders": {
        const providers = [...base.extensionProviders]
        for (const provider of value as MeshConfig["extensionProviders"]) {
          const at = providers.findIndex((p) => p.name === provider.name)
          if (at >= 0) providers[at] = provider
          else providers.push(provider)
        }
        out.extensionProviders = providers
        break
      }
      case "trustDomainAliases":
        out.trustDomainAliases = [...new Set([...base.trustDomainAliases, ...(value as ReadonlyArray<string>)])].sort()
        break
      case "defaultProviders":
        out.defaultProviders = { ...base.defaultProviders, ...(value as MeshConfig["defaultProviders"]) }
        break
      default:
        ;(out as Record<string, unknown>)[key] = value
    }
  }
  return out
}

/** Reads a mesh config text and applies it over `base` (defaults when omitted). */
export const applyMeshConfig = (
  file: string,
  text: string,
  base: MeshConfig = defaultMeshConfig(),
): Applied<MeshConfig> =>
  Either.flatMap(parseYamlMapping(file, text), (raw) =>
    Either.map(decodeWith(MeshConfigSchema, file, raw), (input) => ({
      value: mergeMeshConfig(base, input),
      warnings: unknownFields(raw).map((field) => `${file}: unknown field ${field} ignored`),
    })),
  )

export interface MeshConfigSource {
  readonly file: string
  readonly text: string
}

/**
 * The `SHARED_MESH_CONFIG` rule: defaults, then the shared config, then the standard config —
 * the standard mesh config wins. Either source may be absent. Issues of both are reported.
 */
export const resolveMeshConfig = (sources: {
  readonly shared?: MeshConfigSource | undefined
  readonly standard?: MeshConfigSource | undefined
}): Applied<MeshConfig> => {
  const start: Applied<MeshConfig> = Either.right({ value: defaultMeshConfig(), warnings: [] })
  const shared = sources.shared === undefined ? start : applyMeshConfig(sources.shared.file, sources.shared.text)
  const base = Either.isRight(shared) ? shared.right.value : defaultMeshConfig()
  const standard =
    sources.standard === undefined
      ? Either.right({ value: base, warnings: [] })
      : applyMeshConfig(sources.standard.file, sources.standard.text, base)
  const issues = [...(Either.isLeft(shared) ? shared.left : []), ...(Either.isLeft(standard) ? standard.left : [])]
  if (issues.length > 0 || Either.isLeft(standard) || Either.isLeft(shared)) return Either.left(issues)
  return Either.right({ value: standard.right.value, warnings: [...shared.right.warnings, ...standard.right.warnings] })
}

/** Reads a mesh networks text (a missing `networks` is an empty set). */
export const parseMeshNetworks = (file: string, text: string): Applied<MeshNetworks> =>
  Either.flatMap(parseYamlMapping(file, text), (raw) =>
    Either.map(decodeWith(MeshNetworksSchema, file, raw), (value) => ({
      value: { networks: value.networks ?? {} },
      warnings: Object.keys(raw)
        .filter((k) => k !== "networks")
        .map((k) => `${file}: unknown field ${k} ignored`),
    })),
  )
