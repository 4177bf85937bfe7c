/** extensions.mesh.io WasmPlugin: WebAssembly extensions loaded into proxies. */
import { Schema } from "effect"
import {
  checked,
  Enum,
  Int32,
  oneOfSelectorType,
  opt,
  PolicyTargetReference,
  portProblem,
  Struct,
  WorkloadSelector,
  withDefault,
} from "./common.js"

const VALID_SCHEMES = new Set(["", "file", "http", "https", "oci"])

/** The scheme of a plugin URL (`oci://...`, `https://...`, `file:///...`, or a bare image reference). */
export const wasmUrlProblem = (url: string): string | undefined => {
  if (url === "") return "url field needs to be set"
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)
  const scheme = m === null ? "" : (m[1] ?? "").toLowerCase()
  if (!VALID_SCHEMES.has(scheme)) return `url contains unsupported scheme: ${scheme}`
  try {
    new URL(m === null ? `http://${url}` : url)
  } catch {
    return `failed to parse url: ${url}`
  }
  return undefined
}

const EnvVar = Schema.Struct({
  name: Schema.String,
  valueFrom: opt(Enum("INLINE", "HOST")),
  value: opt(Schema.String),
})

export const WasmPlugin = Schema.Struct({
  selector: opt(WorkloadSelector),
  targetRef: opt(PolicyTargetReference),
  targetRefs: opt(Schema.Array(PolicyTargetReference)),
  url: Schema.String,
  sha256: opt(Schema.String),
  imagePullPolicy: opt(Enum("UNSPECIFIED_POLICY", "IfNotPresent", "Always")),
  imagePullSecret: opt(Schema.String),
  pluginConfig: opt(Struct),
  pluginName: opt(Schema.String),
  phase: withDefault(Enum("UNSPECIFIED_PHASE", "AUTHN", "AUTHZ", "STATS"), () => "UNSPECIFIED_PHASE" as const),
  priority: opt(Int32),
  failStrategy: opt(Enum("FAIL_CLOSE", "FAIL_OPEN", "FAIL_RELOAD")),
  vmConfig: opt(Schema.Struct({ env: opt(Schema.Array(EnvVar)) })),
  match: opt(
    Schema.Array(
      Schema.Struct({
        mode: opt(Enum("UNDEFINED", "CLIENT", "SERVER", "CLIENT_AND_SERVER")),
        ports: opt(Schema.Array(Schema.Struct({ number: Schema.Number }))),
      }),
    ),
  ),
  type: opt(Enum("UNSPECIFIED_PLUGIN_TYPE", "HTTP", "NETWORK")),
}).pipe(
  checked((wp, report) => {
    oneOfSelectorType(wp, report)
    const urlProblem = wasmUrlProblem(wp.url)
    if (urlProblem !== undefined) report(["url"], urlProblem)
    if (wp.sha256 !== undefined && wp.sha256 !== "") {
      if (wp.sha256.length !== 64) report(["sha256"], "sha256 field must be 64 characters long")
      else if (!/^[a-f0-9]{64}$/.test(wp.sha256)) report(["sha256"], "sha256 field must match [a-f0-9]{64} pattern")
    }
    if ((wp.imagePullSecret ?? "").length > 253)
      report(["imagePullSecret"], "imagePullSecret field must be less than 253 characters long")
    if ((wp.pluginName ?? "").length > 256)
      report(["pluginName"], "pluginName field must be less than 255 characters long")
    const names = new Set<string>()
    wp.vmConfig?.env?.forEach((env, i) => {
      if (env.name === "") report(["vmConfig", "env", i, "name"], "spec.vmConfig.env invalid")
      if (env.name.length > 256)
        report(["vmConfig", "env", i, "name"], "env.name field must be less than 255 characters long")
      if (names.has(env.name)) report(["vmConfig", "env", i, "name"], "duplicate env")
      names.add(env.name)
      if ((env.valueFrom ?? "INLINE") !== "INLINE" && (env.value ?? "") !== "") {
        report(["vmConfig", "env", i, "value"], "value may only be set when valueFrom is INLINE")
      }
    })
    for (const [i, sel] of (wp.match ?? []).entries()) {
      for (const [j, port] of (sel.ports ?? []).entries()) {
        if (portProblem(port.number) !== undefined) {
          report(["match", i, "ports", j, "number"], `spec.Match[${i}].Ports[${j}] is out of range: ${port.number}`)
        }
      }
    }
  }),
)
export type WasmPluginSpec = typeof WasmPlugin.Type
