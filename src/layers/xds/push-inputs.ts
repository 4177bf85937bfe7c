/**
 * The PushContext inputs of the ADS server, followed live: every applied config change and
 * every registry change yields a full input (services, endpoints, VirtualServices,
 * DestinationRules, PeerAuthentications, AuthorizationPolicies, and the proxy-only config); the
 * server diffs consecutive inputs and debounces the pushes. Optional sources join when they are
 * there: the cluster's TLS credentials, namespace labels (for Gateway-API route binding), the
 * Secrets and ConfigMaps Gateway listeners reference (checked before a listener is served), the
 * JWKS resolver. Gateway-API resources, and the orchestrator Ingresses the mesh config's ingress
 * settings select (with a MeshWatcher), are converted into Gateways and VirtualServices here.
 */
import { Effect, Option, Stream } from "effect"
import { type AmbientInput, type AmbientPod, AmbientPods, type AmbientSettings } from "../../services/ambient/input.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import type { ConfigSnapshot } from "../../services/config-store/snapshot.js"
import { type Credential, CredentialSource } from "../../services/credentials/credential.js"
import {
  defaultGatewayApiSettings,
  type GatewayApiResources,
  GatewayApiSettings,
  makeGatewayApiView,
} from "../../services/gateway-api/push-view.js"
import type { TlsObjects } from "../../services/gateway-api/tls-objects.js"
import { GatewayTlsObjects } from "../../services/gateway-api/tls-source.js"
import type { IngressSettings } from "../../services/ingress/model.js"
import {
  defaultIngressPushSettings,
  IngressPushSettings,
  type IngressResources,
  ingressSettingsOf,
  makeIngressView,
} from "../../services/ingress/push-view.js"
import { JwksResolver } from "../../services/jwks/resolver.js"
import { meshServiceLookup, serverFetchTargets } from "../../services/jwks/targets.js"
import { withScope } from "../../services/logging/logging.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { type NamespaceLabelMap, NamespaceLabels } from "../../services/orchestrator/namespace-labels.js"
import { type RegistrySnapshot, ServiceRegistry } from "../../services/registry/registry.js"
import type { JwksInput } from "../../services/xds/model/jwks-input.js"
import type { PushContextInput } from "../../services/xds/model/push-context.js"

/** What joins the config and registry snapshots when its source is there. */
export interface PushExtras {
  readonly credentials?: ReadonlyArray<Credential>
  readonly jwks?: JwksInput
  readonly gatewayApi?: GatewayApiResources
  readonly ingress?: IngressResources
  /** With PILOT_ENABLE_AMBIENT: what the node proxy's workload API reads beyond the rest. */
  readonly ambient?: AmbientInput
}

/** The input of one moment: a config snapshot, a registry snapshot and the extras (pure). */
export const pushContextInput = (
  config: ConfigSnapshot,
  registry: RegistrySnapshot,
  extras: PushExtras = {},
): PushContextInput => {
  const converted = extras.gatewayApi
  const ingress = extras.ingress
  const withConverted = <T>(
    own: ReadonlyArray<T>,
    more: ReadonlyArray<T> | undefined,
    evenMore: ReadonlyArray<T> | undefined = undefined,
  ): ReadonlyArray<T> =>
    (more === undefined || more.length === 0) && (evenMore === undefined || evenMore.length === 0)
      ? own
      : [...own, ...(more ?? []), ...(evenMore ?? [])]
  return {
    ...(extras.jwks !== undefined ? { jwks: extras.jwks } : {}),
    ...(extras.ambient !== undefined ? { ambient: extras.ambient } : {}),
    services: withConverted(registry.services, converted?.services),
    endpoints: [...registry.endpointsByKey.values()].flat(),
    virtualServices: withConverted(config.list("VirtualService"), converted?.virtualServices, ingress?.virtualServices),
    destinationRules: withConverted(config.list("DestinationRule"), converted?.destinationRules),
    peerAuthentications: config.list("PeerAuthentication"),
    authorizationPolicies: config.list("AuthorizationPolicy"),
    proxyConfig: {
      gateways: withConverted(config.list("Gateway"), converted?.gateways, ingress?.gateways),
      sidecars: config.list("Sidecar"),
      envoyFilters: config.list("EnvoyFilter"),
      requestAuthentications: config.list("RequestAuthentication"),
      telemetries: config.list("Telemetry"),
      wasmPlugins: config.list("WasmPlugin"),
      credentials: extras.credentials ?? [],
    },
  }
}

/**
 * Namespace labels from the config (files may hold Namespaces), the cluster's overriding them.
 * The merged map is kept while both sources are the same objects, so the Gateway-API view (which
 * converts again when an input is a new object) is not redone on every endpoint change.
 */
const makeNamespaceLabels = () => {
  let last: { own: ReadonlyArray<unknown>; cluster: NamespaceLabelMap; merged: NamespaceLabelMap } | undefined
  return (config: ConfigSnapshot, cluster: NamespaceLabelMap): NamespaceLabelMap => {
    const own = config.list("Namespace")
    if (own.length === 0) return cluster
    if (last !== undefined && last.own === own && last.cluster === cluster) return last.merged
    const merged = new Map<string, Readonly<Record<string, string>>>(own.map((ns) => [ns.meta.name, ns.meta.labels]))
    for (const [name, labels] of cluster) merged.set(name, labels)
    last = { own, cluster, merged }
    return merged
  }
}

/**
 * The ambient input, kept while its sources are the same objects: a new one is a push to every
 * node proxy, so a change elsewhere (an endpoint) must not make one.
 */
const makeAmbientInput = () => {
  let last: AmbientInput | undefined
  return (
    settings: AmbientSettings,
    config: ConfigSnapshot,
    pods: ReadonlyArray<AmbientPod>,
    namespaceLabels: NamespaceLabelMap,
  ): AmbientInput => {
    const next: AmbientInput = {
      settings,
      pods,
      namespaceLabels,
      gateways: config.list("KubernetesGateway"),
      gatewayClasses: config.list("GatewayClass"),
      workloadEntries: config.list("WorkloadEntry"),
    }
    if (
      last === undefined ||
      (Object.keys(next) as ReadonlyArray<keyof AmbientInput>).some((key) => next[key] !== last?.[key])
    )
      last = next
    return last
  }
}

export const pushContextInputs: Stream.Stream<PushContextInput, never, ConfigStore | ServiceRegistry> =
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const config = yield* ConfigStore
      const registry = yield* ServiceRegistry
      // The first input is the synced state: until both have listed everything, the ADS server
      // refuses streams (a proxy served a partial registry would drop the rest of its config).
      yield* config.awaitSynced
      yield* registry.awaitSynced
      // Optional sources: without an orchestrator (or in tests) there are no Secrets or labels.
      const credentialSource = yield* Effect.serviceOption(CredentialSource)
      const credentials = Option.match(credentialSource, {
        onNone: () => Stream.succeed<ReadonlyArray<Credential>>([]),
        onSome: (source) => Stream.concat(Stream.succeed<ReadonlyArray<Credential>>([]), source.changes),
      })
      const namespaceSource = yield* Effect.serviceOption(NamespaceLabels)
      const noLabels: NamespaceLabelMap = new Map()
      const namespaceLabels = Option.match(namespaceSource, {
        onNone: () => Stream.succeed(noLabels),
        onSome: (source) => Stream.concat(Stream.succeed(noLabels), source.changes),
      })
      const namespaceLabelsOf = makeNamespaceLabels()
      // The Secrets and ConfigMaps listeners reference: unknown (not checked) without the source.
      const tlsSource = yield* Effect.serviceOption(GatewayTlsObjects)
      const tlsObjects = Option.match(tlsSource, {
        onNone: () => Stream.succeed<TlsObjects | undefined>(undefined),
        onSome: (source) => source.changes,
      })
      // The node proxy's workload API reads the pods only with PILOT_ENABLE_AMBIENT (the source's layer).
      const ambientSource = yield* Effect.serviceOption(AmbientPods)
      const ambientPods = Option.match(ambientSource, {
        onNone: () => Stream.succeed<ReadonlyArray<AmbientPod> | undefined>(undefined),
        onSome: (source) => source.changes,
      })
      const ambientInputOf = makeAmbientInput()
      // Ingresses are served only with a mesh config to say which (tests without one serve none).
      const meshWatcher = yield* Effect.serviceOption(MeshWatcher)
      const ingressSettings = Option.match(meshWatcher, {
        onNone: () => Stream.succeed<IngressSettings | undefined>(undefined),
        onSome: (mesh) =>
          mesh.configChanges.pipe(
            Stream.map((c): IngressSettings | undefined => ingressSettingsOf(c)),
            Stream.changesWith(
              (a, b) =>
                a?.ingressClass === b?.ingressClass &&
                a?.ingressControllerMode === b?.ingressControllerMode &&
                a?.ingressService === b?.ingressService,
            ),
          ),
      })
      const ingressView = makeIngressView(
        Option.getOrElse(yield* Effect.serviceOption(IngressPushSettings), () => defaultIngressPushSettings),
      )
      const gatewayApiView = makeGatewayApiView(
        Option.getOrElse(yield* Effect.serviceOption(GatewayApiSettings), () => defaultGatewayApiSettings),
      )
      // Events that only change the set of reported issues leave the served config as it was.
      const configSnapshots = config.watch.pipe(
        Stream.filter((event) => event.full || event.changes.length > 0),
        Stream.map((event) => event.snapshot),
      )
      const { snapshot, events } = yield* registry.subscribe
      const registrySnapshots = Stream.concat(
        Stream.succeed(snapshot),
        Stream.fromQueue(events).pipe(Stream.map((event) => event.snapshot)),
      )
      const inputs = Stream.zipLatestAll(
        configSnapshots,
        registrySnapshots,
        credentials,
        namespaceLabels,
        ingressSettings,
        tlsObjects,
        ambientPods,
      ).pipe(
        // What the Ingress conversion leaves out is logged when it is (re)done.
        Stream.tap(([c, r, , , mesh]) =>
          mesh === undefined
            ? Effect.void
            : Effect.forEach(
                ingressOf(c, r, mesh).notes,
                (note) => Effect.logWarning(note).pipe(withScope("ingress")),
                {
                  discard: true,
                },
              ),
        ),
      )
      const ingressOf = (c: ConfigSnapshot, r: RegistrySnapshot, mesh: IngressSettings) =>
        ingressView(
          c.list("Ingress") as ReadonlyArray<never>,
          c.list("IngressClass") as ReadonlyArray<never>,
          r.services,
          mesh,
        )
      const extrasOf = (
        c: ConfigSnapshot,
        r: RegistrySnapshot,
        credentialSet: ReadonlyArray<Credential>,
        labels: NamespaceLabelMap,
        mesh: IngressSettings | undefined,
        tls: TlsObjects | undefined,
        pods: ReadonlyArray<AmbientPod> | undefined,
      ): PushExtras => ({
        credentials: credentialSet,
        ...(pods !== undefined && Option.isSome(ambientSource)
          ? { ambient: ambientInputOf(ambientSource.value.settings, c, pods, namespaceLabelsOf(c, labels)) }
          : {}),
        ...(mesh !== undefined ? { ingress: ingressOf(c, r, mesh) } : {}),
        gatewayApi: gatewayApiView(
          {
            gatewayClasses: c.list("GatewayClass"),
            gateways: c.list("KubernetesGateway"),
            httpRoutes: c.list("HTTPRoute"),
            grpcRoutes: c.list("GRPCRoute"),
            tcpRoutes: c.list("TCPRoute"),
            tlsRoutes: c.list("TLSRoute"),
            referenceGrants: c.list("ReferenceGrant"),
            listenerSets: c.list("ListenerSet"),
            backendTlsPolicies: c.list("BackendTLSPolicy"),
            backendTrafficPolicies: c.list("XBackendTrafficPolicy"),
            inferencePools: c.list("InferencePool"),
          },
          r.services,
          namespaceLabelsOf(c, labels),
          tls,
        ),
      })
      // Optional too: with a JWKS resolver, the key sets the current RequestAuthentications need
      // are kept fetched, and each new resolved map is a new input.
      const jwksResolver = yield* Effect.serviceOption(JwksResolver)
      if (Option.isNone(jwksResolver))
        return inputs.pipe(
          Stream.map(([c, r, cs, ls, m, t, p]) => pushContextInput(c, r, extrasOf(c, r, cs, ls, m, t, p))),
        )
      const resolver = jwksResolver.value
      const needed = inputs.pipe(
        Stream.tap(([c, r]) =>
          resolver.update(
            serverFetchTargets(
              c.list("RequestAuthentication"),
              resolver.mode,
              // Only hybrid mode asks which hosts are mesh services.
              resolver.mode === "hybrid" ? meshServiceLookup(r.services) : () => false,
            ),
          ),
        ),
      )
      return Stream.zipLatest(needed, resolver.changes).pipe(
        Stream.map(([[c, r, cs, ls, m, t, p], resolved]) =>
          pushContextInput(c, r, { ...extrasOf(c, r, cs, ls, m, t, p), jwks: { mode: resolver.mode, resolved } }),
        ),
      )
    }),
  )
