/** extensions.mesh.io WasmPlugin: WebAssembly extensions loaded into proxies. */
import { Schema } from "effect"
import {
  checked,
  Enum,
  Int32,
  opt,
  PolicyTargetReference,
  portProblem,
  Struct,
  structuralKeywords,
  WorkloadSelector,
  withDefault,
} from "./common.js"
import { attachmentKeywords, attachmentProblems, maxItemsProblem, TargetRefs } from "./policy-attachment.js"

/** The CRD's bounds. */
const MAX_IMAGE_PULL_SECRET_LENGTH = 253
const MAX_PLUGIN_NAME_LENGTH = 256
const MAX_ENV_NAME_LENGTH = 256
const MAX_ENV_VALUE_LENGTH = 2048
const MAX_ENV = 256

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
}).annotations(
  // No value beside valueFrom HOST.
  structuralKeywords({ not: { required: ["valueFrom", "value"], properties: { valueFrom: { enum: ["HOST"] } } } }),
)

export const WasmPlugin = Schema.Struct({
  selector: opt(WorkloadSelector),
  targetRef: opt(PolicyTargetReference),
  targetRefs: opt(TargetRefs),
  url: Schema.String.annotations(structuralKeywords({ minLength: 1 })),
  sha256: opt(Schema.String.annotations(structuralKeywords({ pattern: "^$|^[a-f0-9]{64}$" }))),
  imagePullPolicy: opt(Enum("UNSPECIFIED_POLICY", "IfNotPresent", "Always")),
  imagePullSecret: opt(
    Schema.String.annotations(structuralKeywords({ minLength: 1, maxLength: MAX_IMAGE_PULL_SECRET_LENGTH })),
  ),
  pluginConfig: opt(Struct),
  verificationKey: opt(Schema.String),
  pluginName: opt(Schema.String),
  phase: withDefault(Enum("UNSPECIFIED_PHASE", "AUTHN", "AUTHZ", "STATS"), () => "UNSPECIFIED_PHASE" as const),
  priority: opt(Int32),
  failStrategy: opt(Enum("FAIL_CLOSE", "FAIL_OPEN", "FAIL_RELOAD")),
  vmConfig: opt(
    Schema.Struct({
      env: opt(
        Schema.Array(EnvVar).annotations(
          structuralKeywords({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
        ),
      ),
    }),
  ),
  match: opt(
    Schema.Array(
      Schema.Struct({
        mode: opt(Enum("UNDEFINED", "CLIENT", "SERVER", "CLIENT_AND_SERVER")),
        ports: opt(
          Schema.Array(
            Schema.Struct({
              number: Schema.Number.annotations(structuralKeywords({ type: "integer", minimum: 1, maximum: 65535 })),
            }),
          ),
        ),
      }),
    ),
  ),
  type: opt(Enum("UNSPECIFIED_PLUGIN_TYPE", "HTTP", "NETWORK")),
})
  .annotations(attachmentKeywords)
  .pipe(
    checked((wp, report) => {
      attachmentProblems(wp, report)
      const urlProblem = wasmUrlProblem(wp.url)
      if (urlProblem !== undefined) report(["url"], urlProblem)
      if (wp.sha256 !== undefined && wp.sha256 !== "") {
        if (wp.sha256.length !== 64) report(["sha256"], "sha256 field must be 64 characters long")
        else if (!/^[a-f0-9]{64}$/.test(wp.sha256)) report(["sha256"], "sha256 field must match [a-f0-9]{64} pattern")
      }
      // Both names, when given, must be non-empty and bounded (the CRD's minLength / maxLength).
      if (wp.imagePullSecret !== undefined) {
        if (wp.imagePullSecret === "") report(["imagePullSecret"], "imagePullSecret field must not be empty")
        else if (wp.imagePullSecret.length > MAX_IMAGE_PULL_SECRET_LENGTH)
          report(
            ["imagePullSecret"],
            `imagePullSecret field must be at most ${MAX_IMAGE_PULL_SECRET_LENGTH} characters long`,
          )
      }
      if (wp.pluginName !== undefined) {
        if (wp.pluginName === "") report(["pluginName"], "pluginName field must not be empty")
        else if (wp.pluginName.length > MAX_PLUGIN_NAME_LENGTH)
          report(["pluginName"], `pluginName field must be at most ${MAX_PLUGIN_NAME_LENGTH} characters long`)
      }
      maxItemsProblem(wp.vmConfig?.env, MAX_ENV, ["vmConfig", "env"], report)
      const names = new Set<string>()
      wp.vmConfig?.env?.forEach((env, i) => {
        if (env.name === "") report(["vmConfig", "env", i, "name"], "spec.vmConfig.env invalid")
        if (env.name.length > MAX_ENV_NAME_LENGTH)
          report(
            ["vmConfig", "env", i, "name"],
            `env.name field must be at most ${MAX_ENV_NAME_LENGTH} characters long`,
          )
        if (names.has(env.name)) report(["vmConfig", "env", i, "name"], "duplicate env")
        names.add(env.name)
        if ((env.value ?? "").length > MAX_ENV_VALUE_LENGTH)
          report(
            ["vmConfig", "env", i, "value"],
            `env.value field must be at most ${MAX_ENV_VALUE_LENGTH} characters long`,
          )
        // The CRD refuses any value beside HOST, an empty one included.
        if (env.valueFrom === "HOST" && env.value !== undefined) {
          report(["vmConfig", "env", i, "value"], "value may only be set when valueFrom is INLINE")
        }
      })
      for (const [i, sel] of (wp.match ?? []).entries()) {
        // Ports are a list keyed by number: a number may appear once.
        const seen = new Set<number>()
        for (const [j, port] of (sel.ports ?? []).entries()) {
          if (portProblem(port.number) !== undefined) {
            report(["match", i, "ports", j, "number"], `spec.Match[${i}].Ports[${j}] is out of range: ${port.number}`)
          } else if (seen.has(port.number)) {
            report(["match", i, "ports", j, "number"], `duplicate port ${port.number}`)
          }
          seen.add(port.number)
        }
      }
    }),
  )
export type WasmPluginSpec = typeof WasmPlugin.Type
