/** Helpers for the config-model tests: documents built from objects, issues as `path: message`. */
import { stringify } from "yaml"
import { parseConfigDocuments } from "../../../src/services/config-model/parse.js"

export const GROUPS: Record<string, string> = {
  ServiceEntry: "networking.mesh.io",
  WorkloadEntry: "networking.mesh.io",
  WorkloadGroup: "networking.mesh.io",
  DestinationRule: "networking.mesh.io",
  VirtualService: "networking.mesh.io",
  Gateway: "networking.mesh.io",
  Sidecar: "networking.mesh.io",
  EnvoyFilter: "networking.mesh.io",
  ProxyConfig: "networking.mesh.io",
  PeerAuthentication: "security.mesh.io",
  RequestAuthentication: "security.mesh.io",
  AuthorizationPolicy: "security.mesh.io",
  Telemetry: "telemetry.mesh.io",
  WasmPlugin: "extensions.mesh.io",
}

/** One YAML document of `kind` named `name` in namespace `ns` with `spec`. */
export const doc = (kind: string, spec: unknown, options: { name?: string; apiVersion?: string } = {}): string =>
  stringify(
    {
      apiVersion: options.apiVersion ?? `${GROUPS[kind]}/v1`,
      kind,
      metadata: { name: options.name ?? "example", namespace: "ns" },
      spec,
      // YAML 1.1 quoting: strings such as "ON" or "y" stay strings for the reader (Go's YAML 1.1 dialect).
    },
    { version: "1.1" },
  )

/** The problems of one document as `path: message` lines (path `-` when document-level). */
export const problems = (text: string): ReadonlyArray<string> =>
  parseConfigDocuments("test.yaml", text).issues.map((i) => `${i.path === "" ? "-" : i.path}: ${i.message}`)

export const parse = (text: string) => parseConfigDocuments("test.yaml", text)

/** ~30 KB: a VirtualService whose 1,000 anchored routes are aliased 999 times (999k routes once expanded). */
export const billionLaughs = (name = "laughs"): string => {
  let text = `apiVersion: networking.mesh.io/v1\nkind: VirtualService\nmetadata: {name: ${name}}\nspec:\n  hosts: [a]\n  http:\n  - route: &r\n`
  for (let i = 0; i < 1000; i++) text += `    - {destination: {host: r${i}}}\n`
  for (let i = 0; i < 999; i++) text += "  - route: *r\n"
  return text
}
