/**
 * `meshctl create-remote-secret`, the pure part: the Secret another cluster's control plane reads
 * to watch this cluster, the kubeconfig inside it, which service-account token Secret supplies
 * the credentials, and the reader service account with its RBAC.
 *
 * The Secret is shaped for mesh-discovery's remote-secret controller
 * (src/services/multicluster/secrets.ts): labelled `mesh/multiCluster: "true"` in the
 * system namespace, one key per cluster ID holding that cluster's kubeconfig. It is written with
 * `stringData` (readable when piped to the orchestrator CLI); the API server stores it as `data`.
 */
import { stringify } from "yaml"
import { ApiGroups, MESH_DOMAIN } from "../constants.js"
import { discoveryClusterRules, discoveryNamespaceRules, rbacFor } from "../install/control-plane.js"
import { DISCOVERY_NAME } from "../install/names.js"
import type { Obj } from "../orchestrator/json.js"
import type { OrchSecret } from "../orchestrator/objects.js"
import { MULTICLUSTER_SECRET_LABELS } from "./secrets.js"

export const REMOTE_SECRET_TYPES = ["remote", "config"] as const
export type RemoteSecretType = (typeof REMOTE_SECRET_TYPES)[number]
export const AUTH_TYPES = ["bearer-token", "plugin"] as const
export type AuthType = (typeof AUTH_TYPES)[number]

export const REMOTE_SECRET_PREFIX = "mesh-remote-secret-"
/** Type `config`: the kubeconfig an external control plane mounts to reach its config cluster. */
export const CONFIG_SECRET_NAME = "mesh-kubeconfig"
export const CONFIG_SECRET_KEY = "config"
export const CLUSTER_ANNOTATION = `${ApiGroups.networking}/cluster`
export const DEFAULT_READER_SERVICE_ACCOUNT = "mesh-reader-service-account"
export const SERVICE_ACCOUNT_TOKEN_TYPE = "kubernetes.io/service-account-token"
export const SERVICE_ACCOUNT_NAME_ANNOTATION = "kubernetes.io/service-account.name"
const MULTICLUSTER_LABEL = MULTICLUSTER_SECRET_LABELS[0]

export const defaultServiceAccount = (type: RemoteSecretType): string =>
  type === "remote" ? DEFAULT_READER_SERVICE_ACCOUNT : DISCOVERY_NAME

/** The token Secret meshctl creates when the service account has none (orchestrators since 1.24). */
export const tokenSecretName = (serviceAccount: string): string => `${serviceAccount}-${REMOTE_SECRET_PREFIX}token`

export interface AuthFlags {
  readonly authType: AuthType
  readonly authPluginName: string
  readonly authPluginConfig: Readonly<Record<string, string>>
}

/** Why the auth flags do not fit together, or undefined. */
export const authFlagsProblem = (flags: AuthFlags): string | undefined => {
  if (flags.authType !== "plugin") {
    if (flags.authPluginName !== "") return "--auth-plugin-name requires --auth-type=plugin"
    if (Object.keys(flags.authPluginConfig).length > 0) return "--auth-plugin-config requires --auth-type=plugin"
    return undefined
  }
  return flags.authPluginName === "" ? "--auth-type=plugin requires --auth-plugin-name" : undefined
}

export type RemoteAuth =
  | { readonly _tag: "token"; readonly token: string }
  | { readonly _tag: "plugin"; readonly name: string; readonly config: Readonly<Record<string, string>> }

export interface RemoteKubeconfigInput {
  readonly clusterName: string
  readonly server: string
  /** PEM of the API server's CA; empty leaves the system trust store in charge. */
  readonly caPem: string
  readonly tlsServerName: string
  readonly auth: RemoteAuth
}

/** A kubeconfig with one cluster, user and context, all named after the cluster. */
export const remoteKubeconfig = (input: RemoteKubeconfigInput): Obj => {
  const name = input.clusterName
  const user =
    input.auth._tag === "token"
      ? { token: input.auth.token }
      : {
          "auth-provider": {
            name: input.auth.name,
            ...(Object.keys(input.auth.config).length > 0 ? { config: { ...input.auth.config } } : {}),
          },
        }
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name,
        cluster: {
          server: input.server,
          ...(input.caPem === "" ? {} : { "certificate-authority-data": Buffer.from(input.caPem).toString("base64") }),
          ...(input.tlsServerName === "" ? {} : { "tls-server-name": input.tlsServerName }),
        },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
    preferences: {},
    users: [{ name, user }],
  }
}

export interface RemoteSecretInput {
  readonly type: RemoteSecretType
  readonly clusterName: string
  /** The system namespace (`-i`): where the reading control plane looks for remote secrets. */
  readonly namespace: string
  readonly kubeconfig: Obj
}

/** The Secret manifest (before the API server turns `stringData` into `data`). */
export const remoteSecret = (input: RemoteSecretInput): Obj => {
  const remote = input.type === "remote"
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: remote ? `${REMOTE_SECRET_PREFIX}${input.clusterName}` : CONFIG_SECRET_NAME,
      namespace: input.namespace,
      annotations: { [CLUSTER_ANNOTATION]: input.clusterName },
      // A config-type secret is mounted by an external control plane, not discovered as a
      // remote cluster: labelling it would make every control plane also register it.
      ...(remote ? { labels: { [MULTICLUSTER_LABEL]: "true" } } : {}),
    },
    stringData: { [remote ? input.clusterName : CONFIG_SECRET_KEY]: stringify(input.kubeconfig) },
  }
}

/** The manifest text, one document ready for `apply -f -`. */
export const renderRemoteSecret = (secret: Obj): string =>
  `# This file is autogenerated, do not edit.\n${stringify(secret)}---\n`

export type TokenSecretChoice =
  | { readonly _tag: "use"; readonly name: string }
  /** No token Secret yet: create `tokenSecretName(sa)` and wait for its token. */
  | { readonly _tag: "create"; readonly name: string }
  | { readonly _tag: "error"; readonly message: string }

/**
 * Which Secret holds the service account's token: `--secret-name` when given (it must belong to
 * the account), else the only token Secret of the account (listed on it, or annotated for it),
 * else one to create. Several without `--secret-name` is an error, as the choice would be a guess.
 */
export const chooseTokenSecret = (input: {
  readonly serviceAccount: string
  readonly namespace: string
  /** Names in the service account's `secrets` list. */
  readonly listed: ReadonlyArray<string>
  /** Token Secrets of the namespace. */
  readonly secrets: ReadonlyArray<OrchSecret>
  readonly secretName: string
}): TokenSecretChoice => {
  const own = new Set(input.listed)
  for (const s of input.secrets)
    if (
      s.type === SERVICE_ACCOUNT_TOKEN_TYPE &&
      s.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] === input.serviceAccount
    )
      own.add(s.metadata.name)
  const candidates = [...own].sort()
  const where = `serviceaccount ${input.namespace}/${input.serviceAccount}`
  if (input.secretName !== "")
    return own.has(input.secretName)
      ? { _tag: "use", name: input.secretName }
      : { _tag: "error", message: `secret ${input.secretName} is not a token secret of ${where}` }
  if (candidates.length === 1) return { _tag: "use", name: candidates[0]! }
  if (candidates.length > 1)
    return {
      _tag: "error",
      message: `wrong number of secrets (${candidates.length}: ${candidates.join(", ")}) in ${where}, please use --secret-name to specify one`,
    }
  return { _tag: "create", name: tokenSecretName(input.serviceAccount) }
}

/** The token Secret to create for a service account; the orchestrator fills in `token` and `ca.crt`. */
export const tokenSecret = (serviceAccount: string, namespace: string): Obj => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: tokenSecretName(serviceAccount),
    namespace,
    annotations: { [SERVICE_ACCOUNT_NAME_ANNOTATION]: serviceAccount },
  },
  type: SERVICE_ACCOUNT_TOKEN_TYPE,
})

/** The decoded token and CA of a filled token Secret, or undefined while the token is missing. */
export const tokenOf = (secret: OrchSecret): { readonly token: string; readonly caPem: string } | undefined => {
  const token = secret.data?.token
  if (token === undefined || token === "") return undefined
  const ca = secret.data?.["ca.crt"]
  return {
    token: Buffer.from(token, "base64").toString("utf8"),
    caPem: ca === undefined ? "" : Buffer.from(ca, "base64").toString("utf8"),
  }
}

const READ = ["get", "list", "watch"]
const configGroups = ["networking", "security", "telemetry", "extensions"].flatMap((g) => [
  `${g}.${MESH_DOMAIN}`,
  `${g}.istio.io`,
])

/** What a remote control plane reads from this cluster: its registry and the mesh config kinds. */
export const readerClusterRules: ReadonlyArray<Obj> = [
  { apiGroups: configGroups, resources: ["*"], verbs: READ },
  {
    apiGroups: [""],
    resources: ["endpoints", "pods", "services", "nodes", "replicationcontrollers", "namespaces", "secrets"],
    verbs: READ,
  },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
  { apiGroups: ["apps"], resources: ["replicasets"], verbs: READ },
  { apiGroups: ["gateway.networking.k8s.io"], resources: ["*"], verbs: READ },
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
]

/**
 * The service account and RBAC `--create-service-account` creates: a reader for type `remote`,
 * the control plane's own rules for type `config` (an external control plane configures the mesh
 * from this cluster).
 */
export const serviceAccountObjects = (
  type: RemoteSecretType,
  serviceAccount: string,
  namespace: string,
): ReadonlyArray<Obj> => {
  const labels = { app: type === "remote" ? "mesh-reader" : DISCOVERY_NAME }
  const account = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: serviceAccount, namespace, labels } }
  const rbac =
    type === "remote"
      ? rbacFor(
          serviceAccount,
          namespace,
          `mesh-reader-clusterrole-${namespace}`,
          undefined,
          labels,
          readerClusterRules,
          [],
        )
      : rbacFor(
          serviceAccount,
          namespace,
          `${serviceAccount}-clusterrole-${namespace}`,
          serviceAccount,
          labels,
          discoveryClusterRules,
          discoveryNamespaceRules,
        )
  return [account, ...rbac]
}
