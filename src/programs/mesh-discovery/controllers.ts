/**
 * mesh-discovery's writing controllers on the orchestrator, each run only while this instance
 * leads (spec 000 part 1 rule 6): the `mesh-ca-root-cert` ConfigMaps of every namespace, the
 * caBundle of the webhook configurations (rule 9), node untainting, analysis messages in the
 * status of config resources, the status of Gateway-API objects, the deployment of Gateways'
 * proxies and InferencePools' shadow Services when their variables ask for them (all read from
 * `ControllersConfig`). Leadership is a coordination Lease unless `ENABLE_LEADER_ELECTION=false`;
 * without an orchestrator this instance always leads and there is nothing to write.
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
import { ControllersConfig } from "../../services/config/discovery-config.js"
import type { ConfigStore } from "../../services/config-store/config-store.js"
import { WatchedConfigKinds } from "../../services/config-store/watched-kinds.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import { LeaderElection, layerAlwaysLeader } from "../../services/orchestrator/leader.js"
import { LocalCluster, withCluster } from "../../services/orchestrator/local-cluster.js"
import type { ServiceRegistry } from "../../services/registry/registry.js"

/** `LeaderElection` on the LocalCluster's Lease (`ENABLE_LEADER_ELECTION`, `POD_NAME`), or always leading. */
export const layerLeaderElection: Layer.Layer<LeaderElection, never, LocalCluster | ControllersConfig> =
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const local = yield* LocalCluster
      const config = yield* ControllersConfig
      return config.ENABLE_LEADER_ELECTION && Option.isSome(local)
        ? Layer.scoped(
            LeaderElection,
            // The Lease lives in --namespace; POD_NAME "" = host name and a random suffix.
            makeLeaderElection({ namespace: config.namespace, identity: config.POD_NAME }).pipe(
              withCluster(local.value),
            ),
          )
        : layerAlwaysLeader
    }),
  )

/** The longest time between two Gateway-API status rounds (changes start one sooner). */
const GATEWAY_API_STATUS_INTERVAL = Duration.seconds(30)

export const layerControllers: Layer.Layer<
  never,
  never,
  | ControllersConfig
  | LocalCluster
  | LeaderElection
  | CertificateAuthority
  | ServingCert
  | Metrics
  | ConfigStore
  | WatchedConfigKinds
  | ServiceRegistry
  | MeshWatcher
> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const local = yield* LocalCluster
    if (Option.isNone(local)) return
    const config = yield* ControllersConfig
    const leader = yield* LeaderElection
    const serving = yield* ServingCert
    const watchNamespace = config.MESH_WATCH_NAMESPACE
    yield* leader.whileLeader("root-cert", rootCertDistributor({ watchNamespace }).pipe(withCluster(local.value)))
    yield* leader.whileLeader(
      "webhook-ca-bundle",
      runCaBundlePatcher({
        validatingWebhookConfigName: config.VALIDATION_WEBHOOK_CONFIG_NAME,
        // "" = not patched: injection is off.
        mutatingWebhookConfigName: config.INJECT_ENABLED ? config.INJECTION_WEBHOOK_CONFIG_NAME : "",
        // The webhook configurations labelled with the revision get their caBundle patched too.
        revision: config.REVISION,
        caPem: Stream.provideService(servingCaPem, ServingCert, serving),
      }).pipe(withCluster(local.value)),
    )
    if (config.PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS) {
      // The install-cni pods run in --namespace.
      yield* leader.whileLeader(
        "untaint",
        runNodeUntainter({ namespace: config.namespace }).pipe(withCluster(local.value)),
      )
    }
    if (config.PILOT_ENABLE_ANALYSIS) {
      yield* leader.whileLeader(
        "analysis",
        runAnalysisStatus({
          interval: config.PILOT_ANALYSIS_INTERVAL,
          watched: yield* WatchedConfigKinds,
          watchNamespace,
          domainSuffix: config.domain,
        }).pipe(withCluster(local.value)),
      )
    }
    // The load-balancer status of the Ingresses the mesh serves (mesh config ingressControllerMode).
    yield* leader.whileLeader(
      "ingress-status",
      runIngressStatus({
        systemNamespace: config.namespace,
        domainSuffix: config.domain,
        interval: GATEWAY_API_STATUS_INTERVAL,
        watched: yield* WatchedConfigKinds,
        watchNamespace,
      }).pipe(withCluster(local.value)),
    )
    // Every Gateway-API controller needs PILOT_ENABLE_GATEWAY_API.
    const gatewayApi = config.PILOT_ENABLE_GATEWAY_API
    const writeStatus = gatewayApi && config.PILOT_ENABLE_GATEWAY_API_STATUS
    const deployGateways = gatewayApi && config.PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER
    const inferenceExtension = gatewayApi && config.ENABLE_GATEWAY_API_INFERENCE_EXTENSION
    // AMBIENT_ENABLE_MULTI_NETWORK: the built-in east-west class exists too.
    const classes = {
      controllerName: config.PILOT_GATEWAY_API_CONTROLLER_NAME,
      defaultClassName: config.PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME,
      eastWestClass: config.AMBIENT_ENABLE_MULTI_NETWORK,
    }
    if (deployGateways) {
      yield* leader.whileLeader(
        "gateway-api-deployment",
        runGatewayDeployments({
          ...classes,
          watched: yield* WatchedConfigKinds,
          watchNamespace,
          injection: yield* makeInjectionSources.pipe(Effect.provideService(LocalCluster, local)),
          writeStatus,
          interval: GATEWAY_API_STATUS_INTERVAL,
        }).pipe(withCluster(local.value)),
      )
    }
    if (writeStatus) {
      yield* leader.whileLeader(
        "gateway-api-status",
        runGatewayApiStatus({
          ...classes,
          domainSuffix: config.domain,
          interval: GATEWAY_API_STATUS_INTERVAL,
          watched: yield* WatchedConfigKinds,
          watchNamespace,
          deployedGateways: deployGateways,
          inferenceExtension,
        }).pipe(withCluster(local.value)),
      )
    }
    // InferencePools' shadow Services: routes to a pool go to its Service, status or not.
    if (inferenceExtension) {
      yield* leader.whileLeader(
        "inference-pool-services",
        runInferencePoolServices({
          watched: yield* WatchedConfigKinds,
          watchNamespace,
          interval: GATEWAY_API_STATUS_INTERVAL,
        }).pipe(withCluster(local.value)),
      )
    }
  }),
)
