/**
 * The mesh plugin's config entry, from the template in `--cni-network-config` /
 * `--cni-network-config-file` (the file wins when both are set, as in the reference) or the
 * built-in one, with the reference's placeholders filled in.
 */
import { Data, Either } from "effect"
import { MESH_CNI_PLUGIN_TYPE } from "./plugin-config.js"

export class CniTemplateError extends Data.TaggedError("CniTemplateError")<{
  readonly source: string
  readonly reason: string
}> {
  override get message(): string {
    return `CNI config template (${this.source}): ${this.reason}`
  }
}

/** What the placeholders stand for. */
export interface TemplateValues {
  /** `--log-level`. */
  readonly logLevel: string
  readonly logUdsAddress: string
  /** The kubeconfig's file name and its full path as the plugin sees it. */
  readonly kubeconfigFilename: string
  readonly kubeconfigFilepath: string
  readonly serviceHost: string
  readonly servicePort: string
  readonly nodeName: string
}

/** The reference's placeholders, in the order it replaces them. */
export const PLACEHOLDERS: ReadonlyArray<readonly [string, (v: TemplateValues) => string]> = [
  ["__LOG_LEVEL__", (v) => v.logLevel],
  ["__LOG_UDS_ADDRESS__", (v) => v.logUdsAddress],
  ["__KUBECONFIG_FILENAME__", (v) => v.kubeconfigFilename],
  ["__KUBECONFIG_FILEPATH__", (v) => v.kubeconfigFilepath],
  ["__KUBERNETES_SERVICE_HOST__", (v) => v.serviceHost],
  ["__KUBERNETES_SERVICE_PORT__", (v) => v.servicePort],
  ["__KUBERNETES_NODE_NAME__", (v) => v.nodeName],
]

/**
 * Used when neither template flag is set (the reference requires one; its chart's default is
 * this shape). Field names follow src/services/cni/plugin-config.ts.
 */
export const DEFAULT_TEMPLATE = `{
  "cniVersion": "0.3.1",
  "name": "mesh-cni",
  "type": "${MESH_CNI_PLUGIN_TYPE}",
  "log_level": "__LOG_LEVEL__",
  "kubernetes": {
    "kubeconfig": "__KUBECONFIG_FILEPATH__",
    "cni_bin_dir": "/opt/cni/bin",
    "exclude_namespaces": ["mesh-system", "kube-system"]
  }
}
`

export const fillPlaceholders = (template: string, values: TemplateValues): string =>
  PLACEHOLDERS.reduce((text, [placeholder, value]) => text.replaceAll(placeholder, value(values)), template)

/** The filled template as a JSON object whose `type` is the mesh plugin's. */
export const renderMeshEntry = (
  source: string,
  template: string,
  values: TemplateValues,
): Either.Either<Record<string, unknown>, CniTemplateError> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(fillPlaceholders(template, values))
  } catch (error) {
    return Either.left(new CniTemplateError({ source, reason: `not valid JSON (${(error as Error).message})` }))
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return Either.left(new CniTemplateError({ source, reason: "not a JSON object" }))
  const type = (parsed as { type?: unknown }).type
  // The installer finds its own entry again by this type; another type could never be replaced or removed.
  if (type !== MESH_CNI_PLUGIN_TYPE)
    return Either.left(new CniTemplateError({ source, reason: `"type" must be "${MESH_CNI_PLUGIN_TYPE}"` }))
  return Either.right(parsed as Record<string, unknown>)
}
