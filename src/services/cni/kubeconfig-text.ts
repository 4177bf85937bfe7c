/**
 * The orchestrator config (kubeconfig) the mesh plugin uses to read pods, written beside the
 * CNI config: the API server from the pod's service environment, the installer's service-account
 * token, and either the CA (`--orch-ca-file`, else the service account's) or
 * `insecure-skip-tls-verify` (`--skip-tls-verify`).
 */
import { stringify } from "yaml"

export interface KubeconfigInput {
  /** `https` unless the service environment says otherwise. */
  readonly protocol: string
  readonly host: string
  readonly port: string
  readonly token: string
  /** The CA's PEM; ignored with `skipTlsVerify`. */
  readonly caPem: string | undefined
  readonly skipTlsVerify: boolean
}

/** `https://[fd00::1]:443`: an IPv6 host is bracketed. */
export const serverUrl = (protocol: string, host: string, port: string): string =>
  `${protocol}://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`

const document = (input: KubeconfigInput, token: string, caData: string | undefined) => ({
  apiVersion: "v1",
  kind: "Config",
  clusters: [
    {
      name: "local",
      cluster: {
        server: serverUrl(input.protocol, input.host, input.port),
        ...(input.skipTlsVerify ? { "insecure-skip-tls-verify": true } : { "certificate-authority-data": caData }),
      },
    },
  ],
  users: [{ name: "mesh-cni", user: { token } }],
  contexts: [{ name: "mesh-cni-context", context: { cluster: "local", user: "mesh-cni" } }],
  "current-context": "mesh-cni-context",
})

const HEADER = "# Orchestrator config file for the mesh CNI plugin.\n"

export const kubeconfigText = (input: KubeconfigInput): string =>
  HEADER +
  stringify(
    document(input, input.token, input.caPem === undefined ? "" : Buffer.from(input.caPem).toString("base64")),
    { lineWidth: 0 },
  )

/** The same file with its secrets replaced, for the log. */
export const redactedKubeconfigText = (input: KubeconfigInput, caSource: string): string =>
  HEADER + stringify(document(input, "<redacted>", `<CA cert from ${caSource}>`), { lineWidth: 0 })
