/**
 * A kubeconfig file pointing at the fake orchestrator API server, as `--orchconfig`,
 * `kubectl --kubeconfig` and `KubeConfig.loadFromFile` read it.
 */
import { writeFileSync } from "node:fs"
import { stringify } from "yaml"

export interface KubeconfigOptions {
  readonly server: string
  /** PEM of the CA that signed the server certificate (TLS mode). */
  readonly caPem?: string
  readonly token?: string
  readonly namespace?: string
  /** Name of the cluster, user and context; default `orchestrator`. */
  readonly name?: string
}

export const kubeconfigYaml = (o: KubeconfigOptions): string => {
  const name = o.name ?? "orchestrator"
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name,
        cluster: {
          server: o.server,
          ...(o.caPem === undefined ? {} : { "certificate-authority-data": Buffer.from(o.caPem).toString("base64") }),
          // client-node refuses http:// servers unless TLS verification is declared off.
          ...(o.server.startsWith("http:") ? { "insecure-skip-tls-verify": true } : {}),
        },
      },
    ],
    // kubectl prompts for a username when a user has no credentials at all: always carry a
    // token (a server without `token` ignores it).
    users: [{ name, user: { token: o.token ?? "unchecked" } }],
    contexts: [
      {
        name,
        context: { cluster: name, user: name, ...(o.namespace === undefined ? {} : { namespace: o.namespace }) },
      },
    ],
    "current-context": name,
  })
}

export const writeKubeconfig = (path: string, o: KubeconfigOptions): string => {
  writeFileSync(path, kubeconfigYaml(o))
  return path
}
