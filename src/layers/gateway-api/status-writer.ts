/**
 * The Gateway-API status writer (`PILOT_ENABLE_GATEWAY_API_STATUS`): the status the conversion
 * (services/gateway-api/convert.ts) gives every Gateway-API object this controller reconciles —
 * GatewayClass Accepted, Gateway conditions, listeners and addresses, our entries of route
 * `status.parents` — written back by a merge patch of the object's status subresource.
 *
 * A round runs after config or registry changes (namespace labels included: they decide which
 * routes a listener allows), debounced, and at least every `interval`, so that a status someone
 * else overwrote is put back. Only objects whose merged status differs are written
 * (services/gateway-api/status-merge.ts): a quiet mesh costs no writes, and a condition whose
 * status holds keeps its `lastTransitionTime`. Objects are read from the config store's own
 * informers (same resource, version and namespace: shared, not a second copy), so only the
 * version the store watches is written. A vanished object is skipped; a failed write is logged
 * and retried on the next round. Meant to run under `LeaderElection.whileLeader`.
 */
import { Clock, Duration, Effect, Queue, type Scope } from "effect"
import { apiKindOf, kindInfoOf } from "../../services/config-model/kinds.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import type { WatchedKind } from "../../services/config-store/watched-kinds.js"
import type { SecretObject } from "../../services/credentials/credential.js"
import { convertGatewayApi } from "../../services/gateway-api/convert.js"
import { deployedStates, type Observed } from "../../services/gateway-api/deployment/deployed.js"
import { managedClasses } from "../../services/gateway-api/deployment/names.js"
import {
  DEFAULT_GATEWAY_CLASS_NAME,
  type GatewayApiInput,
  GatewayApiKind,
  type ResourceStatus,
} from "../../services/gateway-api/model.js"
import { mergedStatus, statusMergePatch } from "../../services/gateway-api/status-merge.js"
import type { TlsObjects } from "../../services/gateway-api/tls-objects.js"
import { withScope } from "../../services/logging/logging.js"
import { OrchestratorClient } from "../../services/orchestrator/client.js"
import { type InformerShape, Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { type ResourceRef, Resources } from "../../services/orchestrator/resources.js"
import { ServiceRegistry } from "../../services/registry/registry.js"
import { patchStatus } from "../orchestrator/status-patch.js"
import { deployedObjects, followInto } from "./deployed-objects.js"

export interface GatewayApiStatusOptions {
  /** `PILOT_GATEWAY_API_CONTROLLER_NAME`. */
  readonly controllerName: string
  /** `PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME`; default `mesh`. */
  readonly defaultClassName?: string
  /** `AMBIENT_ENABLE_MULTI_NETWORK`: the built-in east-west class exists too. */
  readonly eastWestClass?: boolean
  /** `--domain`; default cluster.local. */
  readonly domainSuffix?: string
  /** The longest time between rounds. */
  readonly interval: Duration.DurationInput
  /** How long a round waits after a change for the ones that follow it; default 100 ms. */
  readonly debounce?: Duration.DurationInput
  /** The (group, kind, version) the orchestrator config store watches (its `watched`). */
  readonly watched: Effect.Effect<ReadonlyArray<WatchedKind>>
  /** `MESH_WATCH_NAMESPACE`, as given to the store; empty: every namespace. */
  readonly watchNamespace?: string
  /**
   * The gateway deployment controller runs (deployment-controller.ts): the Gateways it deploys
   * take their addresses and Programmed from their Deployment and Service.
   */
  readonly deployedGateways?: boolean
  /** `ENABLE_GATEWAY_API_INFERENCE_EXTENSION`: InferencePool backends resolve and pools get status; default false. */
  readonly inferenceExtension?: boolean
}

/** How long the first round waits for the Namespace informer before going without labels. */
const NAMESPACE_SYNC_WAIT = Duration.seconds(30)

/** A ConfigMap, the field read here. */
interface ConfigMapObject {
  readonly data?: Readonly<Record<string, string>>
}

const ROUTE_KINDS = [
  GatewayApiKind.HTTPRoute,
  GatewayApiKind.GRPCRoute,
  GatewayApiKind.TCPRoute,
  GatewayApiKind.TLSRoute,
] as const

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("status")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("status")),
  debug: (message: string) => Effect.logDebug(message).pipe(withScope("status")),
}

type WithStatus = OrchObject & { readonly status?: unknown }

/** RFC 3339 in whole seconds, as the orchestrator writes times. */
const rfc3339 = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

/** Runs until interrupted (leadership lost, shutdown); never fails. */
export const runGatewayApiStatus = (
  options: GatewayApiStatusOptions,
): Effect.Effect<void, never, ConfigStore | ServiceRegistry | OrchestratorClient | Informers> =>
  Effect.scoped(writer(options))

const writer = (
  options: GatewayApiStatusOptions,
): Effect.Effect<void, never, ConfigStore | ServiceRegistry | OrchestratorClient | Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* ConfigStore
    const registry = yield* ServiceRegistry
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const namespace = options.watchNamespace ?? ""
    const interval = Duration.decode(options.interval)
    const debounce = Duration.decode(options.debounce ?? Duration.millis(100))
    const gatewayOptions = {
      controllerName: options.controllerName,
      domainSuffix: options.domainSuffix ?? "cluster.local",
      defaultClassName: options.defaultClassName ?? DEFAULT_GATEWAY_CLASS_NAME,
      eastWestClass: options.eastWestClass ?? false,
      inferenceExtension: options.inferenceExtension ?? false,
    }

    // Subscribed before the first round reads anything, so no change is missed.
    const dirty = yield* Queue.sliding<void>(1)
    const follow = <A>(queue: Queue.Dequeue<A>) =>
      Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(queue), Queue.offer(dirty, undefined))))
    yield* follow((yield* store.subscribe).events)
    yield* follow((yield* registry.subscribe).events)
    const namespaces = yield* informers.informer<OrchObject>(Resources.namespaces)
    yield* follow((yield* namespaces.subscribe).batches)
    // The Secrets and ConfigMaps listeners reference (certificates, CA bundles): read cluster-wide
    // only (a reference may cross namespaces); under a namespace watch they are not checked.
    const tlsInformers =
      namespace === ""
        ? {
            secrets: yield* informers.informer<OrchObject & SecretObject>(Resources.secrets),
            configMaps: yield* informers.informer<OrchObject & ConfigMapObject>(Resources.configMaps),
          }
        : undefined
    if (tlsInformers !== undefined) {
      yield* follow((yield* tlsInformers.secrets.subscribe).batches)
      yield* follow((yield* tlsInformers.configMaps.subscribe).batches)
    }
    const deployed = options.deployedGateways === true ? yield* deployedObjects(informers, namespace) : undefined
    if (deployed !== undefined) yield* followInto(dirty, [deployed.deployments, deployed.services])

    yield* store.awaitSynced
    yield* registry.awaitSynced
    const namespacesSynced = yield* Effect.raceFirst(
      Effect.as(namespaces.synced, true),
      Effect.as(Effect.sleep(NAMESPACE_SYNC_WAIT), false),
    )
    if (!namespacesSynced)
      yield* log.warn("namespaces cannot be listed: routes allowed by namespace labels are not reconciled")
    const tlsSynced =
      tlsInformers !== undefined &&
      (yield* Effect.raceFirst(
        Effect.as(Effect.zip(tlsInformers.secrets.synced, tlsInformers.configMaps.synced), true),
        Effect.as(Effect.sleep(NAMESPACE_SYNC_WAIT), false),
      ))
    if (tlsInformers !== undefined && !tlsSynced)
      yield* log.warn("Secrets or ConfigMaps cannot be listed: listener certificates are not checked")
    const key = (o: OrchObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`
    const tlsObjects = (): TlsObjects | undefined =>
      tlsInformers === undefined || !tlsSynced
        ? undefined
        : {
            secrets: new Map(tlsInformers.secrets.list().map((o) => [key(o), o] as const)),
            configMaps: new Map(tlsInformers.configMaps.list().map((o) => [key(o), { ...(o.data ?? {}) }] as const)),
          }
    yield* log.info(`writing Gateway-API status for ${options.controllerName}`)

    const namespaceLabels = (): ReadonlyMap<string, Readonly<Record<string, string>>> =>
      new Map(namespaces.list().map((ns) => [ns.metadata.name ?? "", { ...(ns.metadata.labels ?? {}) }] as const))

    const input = Effect.gen(function* () {
      const snapshot = yield* store.snapshot
      const services = (yield* registry.snapshot).services
      const result: GatewayApiInput = {
        gatewayClasses: snapshot.list("GatewayClass"),
        gateways: snapshot.list("KubernetesGateway"),
        httpRoutes: snapshot.list("HTTPRoute"),
        grpcRoutes: snapshot.list("GRPCRoute"),
        tcpRoutes: snapshot.list("TCPRoute"),
        tlsRoutes: snapshot.list("TLSRoute"),
        referenceGrants: snapshot.list("ReferenceGrant"),
        listenerSets: snapshot.list("ListenerSet"),
        backendTlsPolicies: snapshot.list("BackendTLSPolicy"),
        backendTrafficPolicies: snapshot.list("XBackendTrafficPolicy"),
        inferencePools: snapshot.list("InferencePool"),
        services,
        namespaceLabels: namespaceLabels(),
      }
      const objects = tlsObjects()
      return objects === undefined ? result : { ...result, tlsObjects: objects }
    })

    /** The store's informer of an internal kind, when the store watches it and it has synced. */
    const informerOf = (kind: string, watched: ReadonlyArray<WatchedKind>) =>
      Effect.gen(function* () {
        const info = kindInfoOf(kind)
        if (info === undefined) return undefined
        const apiKind = apiKindOf(info)
        const w = watched.find((k) => k.group === info.group && k.kind === apiKind)
        if (w === undefined) return undefined
        const ref: ResourceRef = {
          group: w.group,
          version: w.version,
          plural: info.plural,
          kind: apiKind,
          namespaced: info.namespaced,
        }
        // The options the config store gives this informer, so that it is the same one.
        const informer = yield* informers.informer<WithStatus>(
          ref,
          namespace === "" || !info.namespaced ? {} : { namespace },
        )
        return (yield* informer.hasSynced) ? { ref, informer } : undefined
      })

    const deployedGatewaysOf = (current: GatewayApiInput, observed: Observed) =>
      deployedStates(
        current.gateways.map((g) => ({
          namespace: g.meta.namespace,
          name: g.meta.name,
          annotations: g.meta.annotations,
          className: g.spec.gatewayClassName,
          addresses: g.spec.addresses,
        })),
        managedClasses(
          current.gatewayClasses.map((c) => ({ name: c.meta.name, controllerName: c.spec.controllerName })),
          gatewayOptions,
        ),
        observed,
      )

    const write = (ref: ResourceRef, object: WithStatus, patch: unknown) => {
      const { namespace: ns, name } = object.metadata
      const what = `${ref.kind} ${ns === undefined || ns === "" ? "" : `${ns}/`}${name}`
      return patchStatus(client, ref, ns, name, patch).pipe(
        Effect.as(1),
        Effect.catchAll((e) =>
          e.notFound
            ? Effect.succeed(0)
            : Effect.as(log.warn(`writing the status of ${what} failed (retried next round): ${e.message}`), 0),
        ),
      )
    }

    /** Writes one object's status if it differs; 1 when written. */
    const reconcile = (
      target: { readonly ref: ResourceRef; readonly informer: InformerShape<WithStatus> },
      kind: string,
      object: WithStatus,
      desired: unknown,
    ) => {
      const next = mergedStatus(kind, desired, object.status, options.controllerName)
      return next === undefined ? Effect.succeed(0) : write(target.ref, object, statusMergePatch(object.status, next))
    }

    const round = Effect.gen(function* () {
      const now = rfc3339(yield* Clock.currentTimeMillis)
      const current = yield* input
      const output = convertGatewayApi(current, {
        ...gatewayOptions,
        now,
        ...(deployed !== undefined ? { deployedGateways: deployedGatewaysOf(current, deployed.observed) } : {}),
      })
      const watched = yield* options.watched
      const byKind = new Map<string, Array<ResourceStatus>>()
      for (const status of output.statuses) byKind.set(status.kind, [...(byKind.get(status.kind) ?? []), status])
      let written = 0
      for (const [kind, statuses] of byKind) {
        const target = yield* informerOf(kind, watched)
        if (target === undefined) continue
        for (const status of statuses) {
          const object = target.informer.get(status.namespace, status.name)
          if (object === undefined) continue
          written += yield* reconcile(target, kind, object, status.status)
        }
      }
      // Routes we answer for no more (parent gone, moved to another class): drop our entries.
      for (const kind of ROUTE_KINDS) {
        const target = yield* informerOf(kind, watched)
        if (target === undefined) continue
        const answered = new Set((byKind.get(kind) ?? []).map((s) => `${s.namespace}/${s.name}`))
        for (const object of target.informer.list()) {
          if (answered.has(`${object.metadata.namespace ?? ""}/${object.metadata.name}`)) continue
          written += yield* reconcile(target, kind, object, { parents: [] })
        }
      }
      if (written > 0) yield* log.debug(`Gateway-API status written to ${written} object(s)`)
    }).pipe(
      // A bug in one round must not stop the writer: the next round starts afresh.
      Effect.catchAllDefect((defect) => log.warn(`a Gateway-API status round failed: ${String(defect)}`)),
    )

    for (;;) {
      yield* round
      yield* Effect.raceFirst(Queue.take(dirty), Effect.sleep(interval))
      // Changes come in bursts (one apply per informer batch): let the burst finish.
      yield* Effect.sleep(debounce)
      yield* Queue.takeAll(dirty)
    }
  })
