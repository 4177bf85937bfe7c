/**
 * How meshctl reaches the control plane (mesh-discovery) for `proxy-status`, `version` and
 * `admin log`. Load it lazily: the orchestrator path brings in the orchestrator client.
 *
 * Choice (spec part 3 §5 rule 2): the reference asks over xDS (a debug type URL on the ADS
 * stream). Here the control plane is asked over HTTP instead: its monitoring listener (15014)
 * serves `/debug/syncz` and `/version`, its introspection listener (ControlZ, 9876) the log
 * scopes. Those endpoints already exist and answer the same questions, so no xDS debug
 * generator was added to the server. Consequences:
 *   - `--xds-address host:port` names the control plane's monitoring listener directly;
 *   - without it, the pods labelled `--xds-label` (default `app=meshd`) in `-i` are found
 *     through the orchestrator and asked at their pod IP, on the container port named
 *     `http-monitoring` when the pod declares one, else 15014;
 *   - `--plaintext` is what is used; `--cert-dir`, `--authority` and `--insecure` are
 *     accepted for compatibility and have no effect (the monitoring listener has no TLS);
 *   - the server serves `/debug/*` and ControlZ changes to loopback callers only, so from
 *     outside the pod this works through a port-forward or on the control plane's host.
 */
import { readFileSync } from "node:fs"
import { Data, Duration, Effect, type Scope } from "effect"
import type { OrchPod } from "../../services/orchestrator/objects.js"
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

/** The context a message names: `--context`, else the kubeconfig's current-context. */
export const usedContext = (global: GlobalOptions): string => {
  if (global.context !== "") return global.context
  const source = kubeconfigPath(global)
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
): Effect.Effect<ReadonlyArray<OrchPod & { readonly ip: string }>, ControlPlaneUnavailable, Scope.Scope> =>
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
      return yield* new ControlPlaneUnavailable({
        message: `no ${what} found in namespace ${namespace} with label ${selection.label} (used context ${usedContext(selection.global)})`,
      })
    }
    return pods
  })

/** The control-plane instances to ask: the one `--xds-address` names, or the labelled pods. */
export const controlPlaneTargets = (
  selection: ControlPlaneSelection,
): Effect.Effect<ReadonlyArray<ControlPlaneTarget>, ControlPlaneUnavailable, Scope.Scope> => {
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
