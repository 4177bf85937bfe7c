/**
 * Reading the network configuration the runtime pipes to `mesh-cni` on stdin: JSON decoding
 * (error 6), the spec version (error 1) and, for ADD, the plugin's own fields (error 7).
 * DEL and CHECK only need a decodable config of a supported version: DEL must succeed as far
 * as it can, and neither reads the plugin's fields.
 */
import { Either } from "effect"
import type { MeshCniPluginConfig } from "./plugin-config.js"
import { type CniCommand, CniError, CniErrorCodes, checkVersion, effectiveVersion } from "./plugin-protocol.js"

export interface DecodedConfig {
  /** The config's `cniVersion` (0.1.0 when absent). */
  readonly cniVersion: string
  readonly raw: Readonly<Record<string, unknown>>
}

const invalidConfig = (details: string) =>
  new CniError({ code: CniErrorCodes.invalidNetworkConfig, msg: "invalid network configuration", details })

/** Decodes stdin and checks the version; the config's version is also known when the check fails. */
export const decodeConfig = (
  stdin: string,
  command: CniCommand,
): { readonly cniVersion: string | undefined; readonly result: Either.Either<DecodedConfig, CniError> } => {
  let parsed: unknown
  try {
    parsed = JSON.parse(stdin)
  } catch (error) {
    return {
      cniVersion: undefined,
      result: Either.left(
        new CniError({
          code: CniErrorCodes.decodingFailure,
          msg: "failed to decode the network configuration",
          details: (error as Error).message,
        }),
      ),
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return {
      cniVersion: undefined,
      result: Either.left(
        new CniError({
          code: CniErrorCodes.decodingFailure,
          msg: "failed to decode the network configuration",
          details: "it is not a JSON object",
        }),
      ),
    }
  }
  const raw = parsed as Record<string, unknown>
  const declared = raw.cniVersion
  if (declared !== undefined && typeof declared !== "string") {
    return { cniVersion: undefined, result: Either.left(invalidConfig("cniVersion must be a string")) }
  }
  const cniVersion = effectiveVersion(declared)
  return {
    cniVersion,
    result: Either.map(checkVersion(cniVersion, command), () => ({ cniVersion, raw })),
  }
}

const isStringArray = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

/** The plugin's fields, checked as ADD needs them. */
export const pluginConfigOf = (decoded: DecodedConfig): Either.Either<MeshCniPluginConfig, CniError> => {
  const raw = decoded.raw
  const kubernetes = raw.kubernetes
  if (typeof kubernetes !== "object" || kubernetes === null || Array.isArray(kubernetes)) {
    return Either.left(invalidConfig("the kubernetes section is missing (it names the kubeconfig)"))
  }
  const section = kubernetes as Record<string, unknown>
  if (typeof section.kubeconfig !== "string" || section.kubeconfig === "") {
    return Either.left(invalidConfig("kubernetes.kubeconfig must name the kubeconfig file"))
  }
  if (section.exclude_namespaces !== undefined && !isStringArray(section.exclude_namespaces)) {
    return Either.left(invalidConfig("kubernetes.exclude_namespaces must be a list of namespace names"))
  }
  for (const field of ["log_level", "plugin_log_level", "cni_agent_run_dir", "name"] as const) {
    if (raw[field] !== undefined && typeof raw[field] !== "string") {
      return Either.left(invalidConfig(`${field} must be a string`))
    }
  }
  if (raw.ambient_enabled !== undefined && typeof raw.ambient_enabled !== "boolean") {
    return Either.left(invalidConfig("ambient_enabled must be true or false"))
  }
  return Either.right({
    ...(raw as Omit<MeshCniPluginConfig, "type" | "kubernetes">),
    type: "mesh-cni",
    cniVersion: decoded.cniVersion,
    kubernetes: {
      ...(section as Record<string, unknown>),
      kubeconfig: section.kubeconfig,
      ...(section.exclude_namespaces === undefined ? {} : { exclude_namespaces: section.exclude_namespaces }),
    },
  })
}
