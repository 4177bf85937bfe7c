/**
 * mesh-discovery's writing controllers on the orchestrator, each run only while this instance
 * leads (spec 000 part 1 rule 6): the `mesh-ca-root-cert` ConfigMaps of every namespace, the
 * caBundle of the webhook configurations (rule 9), node untainting, analysis messages in the
 * status of config resources, the status of Gateway-API objects, the deployment of Gateways'
 * proxies and InferencePools' shadow Services when their variables ask for them. Leadership is a coordination Lease unless `ENABLE_LEADER_ELECTION=false`; without an
 * orchestrator this instance always leads and there is nothing to write.
 */
import { Duration, Effect, Layer, Option, Stream } from "effect"
import { rootCertDistributor } from "../../layers/ca/orchestrator/root-cert-distributor.js"
import { runGatewayDeployments } from "../../layers/gateway-api/deployment-controller.js"
import { runInferencePoolServices } from "../../layers/gateway-api/inference-pool-services.js"
import { runGatewayApiStatus } from "../../layers/gateway-api/status-writer.js"
import { runIngressStatus } from "../../layers/ingress/status-writer.js"
import { makeInjectionSources } from "../../layers/injection/gateway-sources.js"
import { runAnalysisStatus } from "../../layers/orchestrator/analysis-status.js"
import { makeLeaderElection } from "../../layers/orchestrator/leader-election.js"
import { runNodeUntainter } from "../../layers/orchestrator/node-untaint.js"
import { ServingCert } from "../../layers/secure-grpc/serving-cert.js"
import { runCaBundlePatcher } from "../../layers/webhook/ca-bundle-patcher.js"
import { servingCaPem } from "../../layers/webhook/serving-ca.js"
import type { CertificateAuthority } from "../../services/ca/ca.js"
import type { ConfigStore } from "../../services/config-store/config-store.js"
import { WatchedConfigKinds } from "../../services/config-store/watched-kinds.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import { LeaderElection, layerAlwaysLeader } from "../../services/orchestrator/leader.js"
import { LocalCluster, withCluster } from "../../services/orchestrator/local-cluster.js"
import type { ServiceRegistry } from "../../services/registry/registry.js"

export interface LeaderElectionSettings {
  /** `ENABLE_LEADER_ELECTION`. */
  readonly enabled: boolean
  /** `--namespace` / `POD_NAMESPACE`: where the Lease lives. */
  readonly namespace: string
  /** `POD_NAME` ("" = host name and a random suffix). */
  readonly podName: string
}

/** `LeaderElection` on the LocalCluster's Lease, or always leading. */
export const layerLeaderElection = (
  settings: LeaderElectionSettings,
): Layer.Layer<LeaderElection, never, LocalCluster> =>
  Layer.unwrapEffect(
    Effect.map(LocalCluster, (local) =>
      settings.enabled && Option.isSome(local)
        ? Layer.scoped(
            LeaderElection,
            makeLeaderElection({ namespace: settings.namespace, identity: settings.podName }).pipe(
              withCluster(local.value),
            ),
          )
        : layerAlwaysLeader,
    ),
  )

export interface ControllersSettings {
  /** `MESH_WATCH_NAMESPACE` ("" = every namespace). */
  readonly watchNamespace: string
  /** `VALIDATION_WEBHOOK_CONFIG_NAME`. */
  readonly validationWebhookConfigName: string
  /** `INJECTION_WEBHOOK_CONFIG_NAME`; "" (or `INJECT_ENABLED=false`) = not patched. */
  readonly injectionWebhookConfigName: string
  /** `REVISION` ("" = default): the webhook configurations labelled with it get their caBundle patched too. */
  readonly revision: string
  /** `--namespace`: where the install-cni pods run. */
  readonly namespace: string
  /** `PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS`. */
  readonly untaintNodes: boolean
  /** `PILOT_ENABLE_ANALYSIS` and `PILOT_ANALYSIS_INTERVAL`; `--domain`. */
  readonly analysis: { readonly enabled: boolean; readonly interval: Duration.DurationInput; readonly domain: string }
  /**
   * `PILOT_ENABLE_GATEWAY_API` and `PILOT_ENABLE_GATEWAY_API_STATUS`,
   * `PILOT_GATEWAY_API_CONTROLLER_NAME`, `PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME`; `--domain`.
   * Absent: not written.
   */
  readonly gatewayApiStatus?: {
    readonly enabled: boolean
    readonly controllerName: string
    readonly defaultClassName: string
    readonly domain: string
    /** `AMBIENT_ENABLE_MULTI_NETWORK`: the built-in east-west class exists too. */
    readonly eastWestClass?: boolean
    /**
     * `ENABLE_GATEWAY_API_INFERENCE_EXTENSION` (with `PILOT_ENABLE_GATEWAY_API`): InferencePools
     * get their status and their shadow Service (written whatever `enabled` says).
     */
    readonly inferenceExtension?: boolean
  }
  /**
   * `PILOT_ENABLE_GATEWAY_API` and `PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER`: Gateways of
   * the mesh's classes get their proxy deployed (needs `gatewayApiStatus` for the controller and
   * class names); absent, nothing is deployed.
   */
  readonly gatewayApiDeployment?: { readonly enabled: boolean; readonly copyLabelsAnnotations?: boolean }
}

/** The longest time between two Gateway-API status rounds (changes start one sooner). */
const GATEWAY_API_STATUS_INTERVAL = Duration.seconds(30)

export const layerControllers = (
  settings: ControllersSettings,
): Layer.Layer<
  never,
  never,
  | LocalCluster
  | LeaderElection
  | CertificateAuthority
  | ServingCert
  | Metrics
  | ConfigStore
  | WatchedConfigKinds
  | ServiceRegistry
  | MeshWatcher
> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const local = yield* LocalCluster
      if (Option.isNone(local)) return
      const leader = yield* LeaderElection
      const serving = yield* ServingCert
      yield* leader.whileLeader(
        "root-cert",
        rootCertDistributor({ watchNamespace: settings.watchNamespace }).pipe(withCluster(local.value)),
      )
      yield* leader.whileLeader(
        "webhook-ca-bundle",
        runCaBundlePatcher({
          validatingWebhookConfigName: settings.validationWebhookConfigName,
          mutatingWebhookConfigName: settings.injectionWebhookConfigName,
          revision: settings.revision,
          caPem: Stream.provideService(servingCaPem, ServingCert, serving),
        }).pipe(withCluster(local.value)),
      )
      if (settings.untaintNodes) {
        yield* leader.whileLeader(
          "untaint",
          runNodeUntainter({ namespace: settings.namespace }).pipe(withCluster(local.value)),
        )
      }
      if (settings.analysis.enabled) {
        yield* leader.whileLeader(
          "analysis",
          runAnalysisStatus({
            interval: settings.analysis.interval,
            watched: yield* WatchedConfigKinds,
            watchNamespace: settings.watchNamespace,
            domainSuffix: settings.analysis.domain,
          }).pipe(withCluster(local.value)),
        )
      }
      // The load-balancer status of the Ingresses the mesh serves (mesh config ingressControllerMode).
      yield* leader.whileLeader(
        "ingress-status",
        runIngressStatus({
          systemNamespace: settings.namespace,
          domainSuffix: settings.analysis.domain,
          interval: GATEWAY_API_STATUS_INTERVAL,
          watched: yield* WatchedConfigKinds,
          watchNamespace: settings.watchNamespace,
        }).pipe(withCluster(local.value)),
      )
      const gatewayApi = settings.gatewayApiStatus
      const deployGateways = gatewayApi !== undefined && settings.gatewayApiDeployment?.enabled === true
      if (gatewayApi !== undefined && deployGateways) {
        yield* leader.whileLeader(
          "gateway-api-deployment",
          runGatewayDeployments({
            controllerName: gatewayApi.controllerName,
            defaultClassName: gatewayApi.defaultClassName,
            ...(gatewayApi.eastWestClass !== undefined ? { eastWestClass: gatewayApi.eastWestClass } : {}),
            watched: yield* WatchedConfigKinds,
            watchNamespace: settings.watchNamespace,
            injection: yield* makeInjectionSources.pipe(Effect.provideService(LocalCluster, local)),
            writeStatus: gatewayApi.enabled,
            ...(settings.gatewayApiDeployment?.copyLabelsAnnotations !== undefined
              ? { copyLabelsAnnotations: settings.gatewayApiDeployment.copyLabelsAnnotations }
              : {}),
            interval: GATEWAY_API_STATUS_INTERVAL,
          }).pipe(withCluster(local.value)),
        )
      }
      if (gatewayApi?.enabled === true) {
        yield* leader.whileLeader(
          "gateway-api-status",
          runGatewayApiStatus({
            controllerName: gatewayApi.controllerName,
            defaultClassName: gatewayApi.defaultClassName,
            ...(gatewayApi.eastWestClass !== undefined ? { eastWestClass: gatewayApi.eastWestClass } : {}),
            domainSuffix: gatewayApi.domain,
            interval: GATEWAY_API_STATUS_INTERVAL,
            watched: yield* WatchedConfigKinds,
            watchNamespace: settings.watchNamespace,
            deployedGateways: deployGateways,
            inferenceExtension: gatewayApi.inferenceExtension ?? false,
          }).pipe(withCluster(local.value)),
        )
      }
      // InferencePools' shadow Services: routes to a pool go to its Service, status or not.
      if (gatewayApi?.inferenceExtension === true) {
        yield* leader.whileLeader(
          "inference-pool-services",
          runInferencePoolServices({
            watched: yield* WatchedConfigKinds,
            watchNamespace: settings.watchNamespace,
            interval: GATEWAY_API_STATUS_INTERVAL,
          }).pipe(withCluster(local.value)),
        )
      }
    }),
  )
