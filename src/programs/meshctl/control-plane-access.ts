/**
 * How meshctl reaches the control plane (mesh-discovery). Load it lazily: the orchestrator path
 * brings in the orchestrator client.
 *
 * `proxy-status`, `x internal-debug` and `version` (remote) ask over xDS, as the reference does
 * (spec part 3 §5 rule 2): `debugTargets` gives one target per control-plane instance, and each
 * question is one ADS stream with the type URL `mesh.io/debug/<path>`, answered with the body of
 * the server's debug page `/debug/<path>` (control-plane-xds.ts; the server side is
 * services/xds/protocol/debug-type.ts). The rule for where:
 *   - `--xds-address host:port` is the control plane's xDS address: TLS (15012) by default,
 *     plain HTTP/2 gRPC with `--plaintext` (the 15010 listener);
 *   - `--xds-address http://host:port` keeps the older HTTP way: the debug pages of the
 *     monitoring listener (15014) at that address, which serves them to loopback callers only
 *     (so through a port-forward or on the control plane's host);
 *   - without it, the pods labelled `--xds-label` (default `app=meshd`) in `-i` are found through
 *     the orchestrator and dialled at their pod IP, on `--xds-port` (15012; 15010 is usual with
 *     `--plaintext`) — or, when the pod declares it, on its container port named `tls-xds`
 *     (`grpc-xds` with `--plaintext`), where that listener really is.
 * Over TLS the server certificate must chain to `<--cert-dir>/root-cert.pem` (else, on the pod
 * path, to the mesh root the orchestrator distributes in the `mesh-ca-root-cert` ConfigMap of
 * `-i`; else the system roots) and carry `--authority` (default `meshd.<-i>.svc`, `meshd-<rev>`
 * with a revision); `--insecure` skips both checks. The caller is authenticated by the client
 * certificate of `--cert-dir` (`cert-chain.pem` and `key.pem`) when it holds one, else by a token
 * of the `default` service account of `-i` from the orchestrator's TokenRequest, for the
 * audience the control plane accepts by default (`mesh-ca`). The server gives debug pages over
 * TLS only to identities of its own namespace, and on the plaintext listener to anyone.
 *
 * `admin log` asks the introspection listener (ControlZ, 9876) over HTTP and `remote-clusters` the
 * monitoring listener (`controlPlaneTargets`, `controlPlaneFetch`): those stay HTTP.
 */
import { readFileSync } from "node:fs"
import { Data, Duration, Effect, type Scope } from "effect"
import { DEFAULT_TOKEN_AUDIENCE } from "../../services/ca/jwt.js"
import { ROOT_CERT_CONFIGMAP, ROOT_CERT_KEY } from "../../services/ca/root-cert-configmap.js"
import { MeshctlEnv } from "../../services/config/meshctl-env.js"
import type { OrchConfigMap, OrchPod } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"
import type { GlobalOptions } from "./global-options.js"
import { orchestratorClient } from "./orchestrator-access.js"
import { kubeconfigPath } from "./orchestrator-source.js"

/** The monitoring listener's port (`--monitoringAddr` default). */
export const MONITORING_PORT = 15014
/** The container port name that overrides MONITORING_PORT for a pod. */
export const MONITORING_PORT_NAME = "http-monitoring"

/** The control plane could not be found or did not answer. */
export class ControlPlaneUnavailable extends Data.TaggedError("ControlPlaneUnavailable")<{
  readonly message: string
}> {}

/** One control-plane instance: a name for tables (its pod, or the address given) and where it is. */
export interface ControlPlaneTarget {
  readonly name: string
  readonly host: string
  /** The monitoring listener's port. */
  readonly monitoringPort: number
}

export interface ControlPlaneSelection {
  readonly global: GlobalOptions
  /** `--xds-address`: "" to find pods through the orchestrator. */
  readonly xdsAddress: string
  /** `--xds-label` (or `admin -l`). */
  readonly label: string
  /** A pod name to pick among the labelled pods ("" for all). */
  readonly podName?: string
}

/** Splits `host:port` (`[v6]:port` too); undefined when it is not one. */
export const splitHostPort = (address: string): { host: string; port: number } | undefined => {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address.trim())
  if (match === null) return undefined
  const port = Number(match[3])
  return port > 65535 ? undefined : { host: match[1] ?? match[2] ?? "", port }
}

/** The context a message names: `--context`, else the kubeconfig's current-context (`kubeconfigEnv`: `$KUBECONFIG`). */
export const usedContext = (global: GlobalOptions, kubeconfigEnv: string): string => {
  if (global.context !== "") return global.context
  const source = kubeconfigPath(global, kubeconfigEnv)
  if (source === undefined) return ""
  try {
    const line = /^current-context:\s*"?([^"\n]*)"?\s*$/m.exec(readFileSync(source.path, "utf8"))
    return line?.[1]?.trim() ?? ""
  } catch {
    return ""
  }
}

const monitoringPortOf = (pod: OrchPod): number =>
  pod.spec?.containers?.flatMap((c) => c.ports ?? []).find((p) => p.name === MONITORING_PORT_NAME)?.containerPort ??
  MONITORING_PORT

/** The running, addressed pods of the control plane (sorted by name). */
export const controlPlanePods = (
  selection: ControlPlaneSelection,
): Effect.Effect<ReadonlyArray<OrchPod & { readonly ip: string }>, ControlPlaneUnavailable, Scope.Scope | MeshctlEnv> =>
  Effect.gen(function* () {
    const namespace = selection.global.meshNamespace
    const client = yield* orchestratorClient(selection.global).pipe(
      Effect.mapError((e) => new ControlPlaneUnavailable({ message: e.message })),
    )
    const page = yield* client
      .list<OrchPod>(Resources.pods, {
        namespace,
        ...(selection.label !== "" ? { labelSelector: selection.label } : {}),
      })
      .pipe(
        Effect.mapError(
          (e) =>
            new ControlPlaneUnavailable({
              message: `cannot list pods in ${namespace} on ${client.server}: ${e.message}`,
            }),
        ),
      )
    const pods = page.items
      .filter((p) => (p.status?.phase ?? "Running") === "Running" && (p.status?.podIP ?? "") !== "")
      .filter(
        (p) => selection.podName === undefined || selection.podName === "" || p.metadata.name === selection.podName,
      )
      .map((p) => ({ ...p, ip: p.status?.podIP ?? "" }))
      .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))
    if (pods.length === 0) {
      const what = selection.podName ? `pod ${selection.podName}` : "control plane"
      const { KUBECONFIG } = yield* MeshctlEnv
      return yield* new ControlPlaneUnavailable({
        message: `no ${what} found in namespace ${namespace} with label ${selection.label} (used context ${usedContext(selection.global, KUBECONFIG)})`,
      })
    }
    return pods
  })

/** The control-plane instances to ask: the one `--xds-address` names, or the labelled pods. */
export const controlPlaneTargets = (
  selection: ControlPlaneSelection,
): Effect.Effect<ReadonlyArray<ControlPlaneTarget>, ControlPlaneUnavailable, Scope.Scope | MeshctlEnv> => {
  if (selection.xdsAddress !== "") {
    const split = splitHostPort(selection.xdsAddress)
    if (split === undefined)
      return new ControlPlaneUnavailable({ message: `--xds-address ${selection.xdsAddress}: expected host:port` })
    return Effect.succeed([{ name: selection.xdsAddress, host: split.host, monitoringPort: split.port }])
  }
  return Effect.map(controlPlanePods(selection), (pods) =>
    pods.map((p) => ({ name: p.metadata.name ?? p.ip, host: p.ip, monitoringPort: monitoringPortOf(p) })),
  )
}

/** `http://host:port` with IPv6 hosts bracketed. */
export const httpBase = (host: string, port: number): string =>
  `http://${host.includes(":") ? `[${host}]` : host}:${port}`

/** One HTTP exchange with a control plane; non-2xx answers fail with the server's text. */
export const controlPlaneFetch = (
  url: string,
  timeout: Duration.Duration,
  init: { readonly method?: string; readonly body?: string } = {},
): Effect.Effect<string, ControlPlaneUnavailable> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        method: init.method ?? "GET",
        ...(init.body !== undefined ? { body: init.body, headers: { "content-type": "application/json" } } : {}),
        signal: AbortSignal.any([signal, AbortSignal.timeout(Duration.toMillis(timeout))]),
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${text.trim()}`)
      return text
    },
    catch: (error) =>
      new ControlPlaneUnavailable({
        message: `${init.method ?? "GET"} ${url}: ${error instanceof Error ? (error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message) : String(error)}`,
      }),
  })

/** Like `controlPlaneFetch`, parsed as JSON. */
export const controlPlaneJson = <A>(
  url: string,
  timeout: Duration.Duration,
  init: { readonly method?: string; readonly body?: string } = {},
): Effect.Effect<A, ControlPlaneUnavailable> =>
  Effect.flatMap(controlPlaneFetch(url, timeout, init), (text) =>
    Effect.try({
      try: () => JSON.parse(text) as A,
      catch: () => new ControlPlaneUnavailable({ message: `${url}: the answer is not JSON` }),
    }),
  )

/** The spec's xDS flags (`--plaintext`, `--cert-dir`, `--authority`, `--insecure`, `--xds-port`). */
export interface XdsFlags {
  readonly plaintext: boolean
  readonly certDir: string
  readonly authority: string
  readonly insecure: boolean
  readonly xdsPort: number
  readonly revision: string
  readonly timeout: Duration.Duration
}

/** One control-plane instance to ask debug pages of. */
export interface DebugTarget {
  /** For tables: the pod's name, or the address given. */
  readonly name: string
  /** The body of the debug page `path` (`syncz`, `config_dump?proxyID=...`, `version`). */
  readonly ask: (path: string) => Effect.Effect<string, ControlPlaneUnavailable>
}

/** Like `DebugTarget.ask`, parsed as JSON. */
export const askJson = <A>(target: DebugTarget, path: string): Effect.Effect<A, ControlPlaneUnavailable> =>
  Effect.flatMap(target.ask(path), (text) =>
    Effect.try({
      try: () => JSON.parse(text) as A,
      catch: () =>
        new ControlPlaneUnavailable({ message: `${target.name}, debug page ${path}: the answer is not JSON` }),
    }),
  )

/** The container port names of the control plane's xDS listeners (TLS, plaintext). */
export const XDS_PORT_NAMES = { tls: "tls-xds", plaintext: "grpc-xds" } as const

/** The port to dial a pod at: its declared xDS container port, else `--xds-port`. */
export const podXdsPort = (pod: OrchPod, flags: Pick<XdsFlags, "plaintext" | "xdsPort">): number =>
  pod.spec?.containers
    ?.flatMap((c) => c.ports ?? [])
    .find((p) => p.name === (flags.plaintext ? XDS_PORT_NAMES.plaintext : XDS_PORT_NAMES.tls))?.containerPort ??
  flags.xdsPort

/** The name the control plane's serving certificate carries: `--authority`, else `meshd[-<rev>].<ns>.svc`. */
export const expectedServerName = (flags: Pick<XdsFlags, "authority" | "revision">, namespace: string): string =>
  flags.authority !== ""
    ? flags.authority
    : `meshd${flags.revision !== "" && flags.revision !== "default" ? `-${flags.revision}` : ""}.${namespace}.svc`

const readIfPresent = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

/** What `--cert-dir` holds: the roots, and the client certificate when both its files are there. */
export const certDirMaterial = (
  certDir: string,
): { readonly rootPem?: string; readonly clientCert?: { readonly certPem: string; readonly keyPem: string } } => {
  if (certDir === "") return {}
  const rootPem = readIfPresent(`${certDir}/root-cert.pem`)
  const certPem = readIfPresent(`${certDir}/cert-chain.pem`)
  const keyPem = readIfPresent(`${certDir}/key.pem`)
  return {
    ...(rootPem !== undefined ? { rootPem } : {}),
    ...(certPem !== undefined && keyPem !== undefined ? { clientCert: { certPem, keyPem } } : {}),
  }
}

/** The default service account's token of `namespace`, for the control plane's audience; undefined if none. */
const serviceAccountToken = (global: GlobalOptions) =>
  Effect.gen(function* () {
    const client = yield* orchestratorClient(global)
    const answer = yield* client.request<{ status?: { token?: string } }>({
      method: "POST",
      path: `/api/v1/namespaces/${encodeURIComponent(global.meshNamespace)}/serviceaccounts/default/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [DEFAULT_TOKEN_AUDIENCE], expirationSeconds: 600 },
      },
    })
    const token = answer.status?.token ?? ""
    return token === "" ? undefined : token
  }).pipe(Effect.orElseSucceed(() => undefined))

/** The mesh root the orchestrator distributes in `namespace`; undefined if none. */
const distributedRoot = (global: GlobalOptions) =>
  Effect.gen(function* () {
    const client = yield* orchestratorClient(global)
    const map = yield* client.get<OrchConfigMap>(Resources.configMaps, global.meshNamespace, ROOT_CERT_CONFIGMAP)
    const pem = map?.data?.[ROOT_CERT_KEY] ?? ""
    return pem === "" ? undefined : pem
  }).pipe(Effect.orElseSucceed(() => undefined))

/** The control-plane instances to ask debug pages of, reached as the header comment says. */
export const debugTargets = (
  selection: ControlPlaneSelection,
  flags: XdsFlags,
): Effect.Effect<ReadonlyArray<DebugTarget>, ControlPlaneUnavailable, Scope.Scope | MeshctlEnv> =>
  Effect.gen(function* () {
    const { global } = selection
    if (/^https?:\/\//.test(selection.xdsAddress)) {
      const address = selection.xdsAddress.replace(/^https?:\/\//, "").replace(/\/+$/, "")
      if (splitHostPort(address) === undefined)
        return yield* new ControlPlaneUnavailable({
          message: `--xds-address ${selection.xdsAddress}: expected http://host:port`,
        })
      const base = selection.xdsAddress.replace(/\/+$/, "")
      return [{ name: address, ask: (path: string) => controlPlaneFetch(`${base}/debug/${path}`, flags.timeout) }]
    }
    const addresses: ReadonlyArray<{ readonly name: string; readonly address: string }> =
      selection.xdsAddress !== ""
        ? splitHostPort(selection.xdsAddress) === undefined
          ? yield* new ControlPlaneUnavailable({
              message: `--xds-address ${selection.xdsAddress}: expected host:port (or http://host:port for the monitoring listener)`,
            })
          : [{ name: selection.xdsAddress, address: selection.xdsAddress }]
        : (yield* controlPlanePods(selection)).map((p) => ({
            name: p.metadata.name ?? p.ip,
            address: `${p.ip.includes(":") ? `[${p.ip}]` : p.ip}:${podXdsPort(p, flags)}`,
          }))
    const material = certDirMaterial(flags.certDir)
    const onPods = selection.xdsAddress === ""
    // Asked once, and only when TLS needs them (with the settings of this command).
    const settings = yield* MeshctlEnv
    const token = yield* Effect.cached(
      Effect.scoped(serviceAccountToken(global)).pipe(Effect.provideService(MeshctlEnv, settings)),
    )
    const root = yield* Effect.cached(
      onPods
        ? Effect.scoped(distributedRoot(global)).pipe(Effect.provideService(MeshctlEnv, settings))
        : Effect.sync(() => undefined),
    )
    const xds = yield* Effect.promise(() => import("./control-plane-xds.js"))
    return addresses.map(({ name, address }) => ({
      name,
      ask: (path: string) =>
        Effect.gen(function* () {
          const secure = !flags.plaintext
          const rootPem = secure && !flags.insecure ? (material.rootPem ?? (yield* root)) : undefined
          const bearer = secure && material.clientCert === undefined ? yield* token : undefined
          return yield* xds
            .askDebugOverXds(
              {
                address,
                plaintext: flags.plaintext,
                ...(rootPem !== undefined ? { rootPem } : {}),
                ...(secure && material.clientCert !== undefined ? { clientCert: material.clientCert } : {}),
                serverName: expectedServerName(flags, global.meshNamespace),
                insecure: flags.insecure,
                ...(bearer !== undefined ? { token: bearer } : {}),
                namespace: global.meshNamespace,
                timeout: flags.timeout,
              },
              path,
            )
            .pipe(Effect.mapError((message) => new ControlPlaneUnavailable({ message })))
        }),
    }))
  })
