/**
 * The plugin's pod lookup: one GET of the pod from the orchestrator named by the config's
 * kubeconfig (the project's orchestrator client, whose credentials come from
 * `@kubernetes/client-node`'s KubeConfig), retried briefly while the API server is unreachable
 * or overloaded. The client is loaded only when a pod is actually looked up: skipped
 * invocations (excluded namespaces, DEL, VERSION) do not pay for loading it.
 */
import { existsSync } from "node:fs"
import { Effect, Layer, Schedule } from "effect"
import type { PodRef } from "../../services/cni/plugin-decision.js"
import type { PluginPod } from "../../services/cni/plugin-pod.js"
import { PluginPodSource, type PluginPodSourceShape, podLookupError } from "../../services/cni/plugin-pod-source.js"
import { CniError, CniErrorCodes } from "../../services/cni/plugin-protocol.js"
import { Resources } from "../../services/orchestrator/resources.js"

export interface PodLookupOptions {
  /** Retries after the first attempt while the failure is transient. */
  readonly retries?: number
  /** Delay before the first retry; doubles after each. */
  readonly firstRetryDelayMillis?: number
  readonly requestTimeoutMillis?: number
}

/** About three seconds of retries in all: the runtime retries a failed sandbox itself. */
export const DEFAULT_LOOKUP_RETRIES = 5
export const DEFAULT_FIRST_RETRY_DELAY_MILLIS = 100
export const DEFAULT_REQUEST_TIMEOUT_MILLIS = 2000

/** The orchestrator client of the config's kubeconfig (loaded only when a lookup is needed). */
const clientFor = (options: PodLookupOptions, kubeconfig: string) =>
  Effect.gen(function* () {
    const { makeOrchestratorClient } = yield* Effect.promise(() => import("../orchestrator/client.js"))
    return yield* makeOrchestratorClient({
      source: { _tag: "file", path: kubeconfig },
      clusterId: "",
      qps: 0,
      burst: 0,
      requestTimeoutMillis: options.requestTimeoutMillis ?? DEFAULT_REQUEST_TIMEOUT_MILLIS,
    }).pipe(
      Effect.mapError(
        (error) =>
          new CniError({
            code: CniErrorCodes.invalidNetworkConfig,
            msg: "invalid network configuration",
            details: error.message,
          }),
      ),
    )
  })

/** Retried while the API server is unreachable or overloaded. */
const retryingTransient = <A>(effect: Effect.Effect<A, CniError>, options: PodLookupOptions) =>
  Effect.retry(effect, {
    schedule: Schedule.exponential(options.firstRetryDelayMillis ?? DEFAULT_FIRST_RETRY_DELAY_MILLIS),
    times: options.retries ?? DEFAULT_LOOKUP_RETRIES,
    while: (error) => error.code === CniErrorCodes.tryAgainLater,
  })

const fetchPod = (options: PodLookupOptions, kubeconfig: string, ref: PodRef): Effect.Effect<PluginPod, CniError> =>
  Effect.scoped(
    Effect.gen(function* () {
      // install-cni writes the kubeconfig; until it has, the runtime should come back later.
      if (!existsSync(kubeconfig)) {
        return yield* new CniError({
          code: CniErrorCodes.tryAgainLater,
          msg: "the plugin's kubeconfig is not there yet; try again later",
          details: kubeconfig,
        })
      }
      const client = yield* clientFor(options, kubeconfig)
      return yield* client
        .get<PluginPod & { readonly metadata: { readonly name: string } }>(Resources.pods, ref.namespace, ref.name)
        .pipe(Effect.mapError((error) => podLookupError(ref, error.status, error.message)))
    }),
  )

/** One GET of a namespace, for its labels (same client, retries and errors as the pod's). */
const fetchNamespaceLabels = (
  options: PodLookupOptions,
  kubeconfig: string,
  namespace: string,
): Effect.Effect<Readonly<Record<string, string>>, CniError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* clientFor(options, kubeconfig)
      const object = yield* client
        .get<{ readonly metadata: { readonly name: string; readonly labels?: Record<string, string> } }>(
          Resources.namespaces,
          undefined,
          namespace,
        )
        .pipe(Effect.mapError((error) => podLookupError({ namespace, name: "" }, error.status, error.message)))
      return object.metadata.labels ?? {}
    }),
  ).pipe((effect) => retryingTransient(effect, options))

export const makePodLookup = (options: PodLookupOptions = {}): PluginPodSourceShape => ({
  namespaceLabels: (kubeconfig, namespace) => fetchNamespaceLabels(options, kubeconfig, namespace),
  get: (kubeconfig, ref) =>
    fetchPod(options, kubeconfig, ref).pipe(
      Effect.tapError((error) =>
        error.code === CniErrorCodes.tryAgainLater
          ? Effect.logDebug(`pod lookup failed: ${error.message}`)
          : Effect.void,
      ),
      (effect) => retryingTransient(effect, options),
      Effect.withSpan("CniPlugin.getPod", { attributes: { pod: `${ref.namespace}/${ref.name}` } }),
    ),
})

export const layer = (options: PodLookupOptions = {}): Layer.Layer<PluginPodSource> =>
  Layer.succeed(PluginPodSource, PluginPodSource.of(makePodLookup(options)))
