/**
 * The sidecar proxy's bootstrap: the built-in one (proxy.ts) or `--templateFile` rendered with
 * the bootstrap values below, then `MESH_BOOTSTRAP_OVERRIDE` deep-merged over it. Pure: the
 * layer reads the files and writes the result.
 *
 * Template values (`{{ .name }}`, `{{ toJSON .name }}`):
 *   nodeID, cluster            the node id and service cluster
 *   metadata, meta_json_str    the node metadata, as an object and as JSON text
 *   adminPort                  the proxy admin port (config.proxyAdminPort)
 *   xdsSocket, sdsSocket       the agent's xDS and SDS socket paths
 *   discoveryAddress           the control plane address (config.discoveryAddress)
 *   localhost, wildcard        127.0.0.1 and 0.0.0.0
 *   statNameLength             config.statNameLength
 *   extraStatTags              config.extraStatTags, [] when unset
 *   config                     the effective proxy config, with its mesh-config field names
 */
import { Either } from "effect"
import type { EffectiveProxyConfig } from "../../mesh-config/index.js"
import type { NodeIdentity } from "../bootstrap/node.js"
import { deepMerge, type JsonObject, parseOverride } from "../bootstrap/override.js"
import { renderTemplate } from "../bootstrap/template.js"

export interface BootstrapValueInputs {
  readonly node: NodeIdentity
  readonly serviceCluster: string
  readonly proxyConfig: EffectiveProxyConfig
  readonly xdsSocket: string
  readonly sdsSocket: string
}

export const bootstrapValues = (inputs: BootstrapValueInputs): Record<string, unknown> => ({
  nodeID: inputs.node.id,
  cluster: inputs.serviceCluster,
  metadata: inputs.node.metadata,
  meta_json_str: JSON.stringify(inputs.node.metadata),
  adminPort: inputs.proxyConfig.proxyAdminPort,
  xdsSocket: inputs.xdsSocket,
  sdsSocket: inputs.sdsSocket,
  discoveryAddress: inputs.proxyConfig.discoveryAddress,
  localhost: "127.0.0.1",
  wildcard: "0.0.0.0",
  statNameLength: inputs.proxyConfig.statNameLength,
  extraStatTags: inputs.proxyConfig.extraStatTags ?? [],
  config: inputs.proxyConfig,
})

export interface SourceFile {
  readonly file: string
  readonly text: string
}

export interface BootstrapSources {
  /** `--templateFile` (or the proxy config's proxyBootstrapTemplatePath). */
  readonly template?: SourceFile | undefined
  /** `MESH_BOOTSTRAP_OVERRIDE`. */
  readonly override?: SourceFile | undefined
  readonly values: Record<string, unknown>
  /** The built-in bootstrap, used without a template. */
  readonly builtIn: JsonObject
}

const isRecord = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The bootstrap object to write, or an error naming the file at fault. */
export const composeBootstrap = (sources: BootstrapSources): Either.Either<JsonObject, string> => {
  let generated: JsonObject = sources.builtIn
  if (sources.template !== undefined) {
    const { file, text } = sources.template
    const rendered = renderTemplate(file, text, sources.values)
    if (Either.isLeft(rendered)) return Either.left(`--templateFile ${rendered.left.message}`)
    let parsed: unknown
    try {
      parsed = JSON.parse(rendered.right)
    } catch (e) {
      return Either.left(`--templateFile ${file}: the rendered bootstrap is not valid JSON: ${(e as Error).message}`)
    }
    if (!isRecord(parsed)) return Either.left(`--templateFile ${file}: the rendered bootstrap is not a JSON object`)
    generated = parsed
  }
  if (sources.override === undefined) return Either.right(generated)
  return Either.map(
    parseOverride(sources.override.file, sources.override.text),
    (o) => deepMerge(generated, o) as JsonObject,
  )
}
