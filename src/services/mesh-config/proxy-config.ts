/**
 * The proxy config the agent bootstraps its proxy with (spec 001 §2 "Proxy bootstrap config"):
 * the mesh config's `defaultConfig`, then the proxy-config environment variable (`PROXY_CONFIG`),
 * then the pod's proxy-config annotation, each a YAML/JSON ProxyConfig merged field by field
 * (proxyMetadata key by key), as the reference does. Pure: the caller reads the sources.
 *
 * An override that is not valid YAML, not a mapping, or fails the ProxyConfig schema is an error
 * naming its source and field; so is a merged result whose fields conflict (e.g. statusPort ==
 * proxyAdminPort coming from two sources). Unknown fields are warnings, as for the mesh config.
 */
import { Either, type Schema } from "effect"
import { decodeAll, renderPath } from "../config-model/issues.js"
import {
  type EffectiveProxyConfig,
  mergeProxyConfig,
  type ProxyConfig,
  ProxyConfigSchema,
  parseYamlMapping,
} from "./index.js"

/** One override: its source's name (the variable or annotation) and its text. */
export interface ProxyConfigOverride {
  readonly source: string
  readonly text: string
}

export interface ResolvedProxyConfig {
  readonly value: EffectiveProxyConfig
  readonly warnings: ReadonlyArray<string>
}

const schema = ProxyConfigSchema as unknown as Schema.Schema<ProxyConfig, unknown>

const decode = (source: string, input: unknown): Either.Either<ProxyConfig, ReadonlyArray<string>> =>
  Either.mapLeft(decodeAll(schema, input, { strict: false }), (problems) =>
    problems.map((p) => {
      const field = renderPath(p.path)
      return `${source}: ${field === "" ? "" : `field ${field}: `}${p.message}`
    }),
  )

/** Applies `overrides` in order over `base`; Left lists every problem, each naming its source. */
export const resolveProxyConfig = (
  base: EffectiveProxyConfig,
  overrides: ReadonlyArray<ProxyConfigOverride>,
): Either.Either<ResolvedProxyConfig, ReadonlyArray<string>> => {
  const known = new Set(Object.keys(ProxyConfigSchema.from.fields))
  const problems: Array<string> = []
  const warnings: Array<string> = []
  let value = base
  for (const override of overrides) {
    if (override.text.trim() === "") continue
    const parsed = parseYamlMapping(override.source, override.text)
    if (Either.isLeft(parsed)) {
      problems.push(...parsed.left.map((i) => `${override.source}: ${i.message}`))
      continue
    }
    for (const key of Object.keys(parsed.right)) {
      if (!known.has(key)) warnings.push(`${override.source}: unknown field ${key} ignored`)
    }
    const decoded = decode(override.source, parsed.right)
    if (Either.isLeft(decoded)) problems.push(...decoded.left)
    else value = mergeProxyConfig(value, decoded.right)
  }
  if (problems.length > 0) return Either.left(problems)
  // Cross-field rules over the merged result: each source may be valid alone.
  const merged = decode("merged proxy config", value)
  if (Either.isLeft(merged)) return Either.left(merged.left)
  return Either.right({ value, warnings })
}
