/**
 * The gateway deployment controller (`PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER`): every
 * Gateway of a class this control plane deploys (services/gateway-api/deployment/names.ts) gets
 * a ServiceAccount, a proxy Deployment and a Service, applied server-side (field manager
 * `mesh-discovery`) and owned by the Gateway, so the orchestrator's garbage collector removes
 * them with it. Gateways whose addresses name a proxy the user runs, or that a newer controller
 * manages, are left alone.
 *
 * A round runs after any change of Gateways, GatewayClasses, Deployments or Services
 * (debounced) and at least every `interval`; an object is applied again when what it should be
 * changed or it is missing, so a quiet mesh costs no writes while a deleted object comes back.
 * Waypoints (whose status the route conversion does not write) get Accepted, Programmed and
 * addresses here when `writeStatus`; other Gateways get theirs from the status writer, which
 * reads the same readiness. Meant to run under `LeaderElection.whileLeader`.
 */
import { Clock, Duration, Effect, Either, Queue, type Scope } from "effect"
import type { KubernetesGatewaySpec } from "../../services/config-model/schemas/gateway-api/types.js"
import type { WatchedKind } from "../../services/config-store/watched-kinds.js"
import { type DeployedGateway, deploymentOf } from "../../services/gateway-api/deployment/deployed.js"
import { type GatewayClassRef, type ManagedKind, managedClasses } from "../../services/gateway-api/deployment/names.js"
import {
  deployment,
  type GatewayObject,
  type ManagedGateway,
  service,
  serviceAccount,
} from "../../services/gateway-api/deployment/objects.js"
import { type InjectionSources, proxyPod } from "../../services/gateway-api/deployment/pod-template.js"
import { deployedState } from "../../services/gateway-api/deployment/readiness.js"
import { deployedGatewayStatus } from "../../services/gateway-api/deployment/waypoint-status.js"
import { GatewayApiKind } from "../../services/gateway-api/model.js"
import { mergedStatus, statusMergePatch } from "../../services/gateway-api/status-merge.js"
import { withScope } from "../../services/logging/logging.js"
import { OrchestratorClient, type OrchestratorClientShape } from "../../services/orchestrator/client.js"
import { type InformerShape, Informers } from "../../services/orchestrator/informer.js"
import type { Obj } from "../../services/orchestrator/json.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { type ResourceRef, Resources, resourcePath } from "../../services/orchestrator/resources.js"
import { patchStatus } from "../orchestrator/status-patch.js"
import {
  DeploymentResource,
  deployedObjects,
  followInto,
  gatewayApiInformer,
  ServiceAccountResource,
} from "./deployed-objects.js"

export const FIELD_MANAGER = "mesh-discovery"

export interface GatewayDeploymentOptions {
  /** `PILOT_GATEWAY_API_CONTROLLER_NAME`. */
  readonly controllerName: string
  /** `PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME`; default `mesh`. */
  readonly defaultClassName?: string
  /** `AMBIENT_ENABLE_MULTI_NETWORK`: the built-in east-west class exists too. */
  readonly eastWestClass?: boolean
  /** The (group, kind, version) the orchestrator config store watches. */
  readonly watched: Effect.Effect<ReadonlyArray<WatchedKind>>
  /** `MESH_WATCH_NAMESPACE`; empty: every namespace. */
  readonly watchNamespace?: string
  /** The injector's current settings and mesh config: the proxy container comes from them. */
  readonly injection: () => InjectionSources
  /** `PILOT_ENABLE_GATEWAY_API_STATUS`: write the status of waypoints. */
  readonly writeStatus: boolean
  /** `PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS`; default true. */
  readonly copyLabelsAnnotations?: boolean
  /** The longest time between rounds. */
  readonly interval: Duration.DurationInput
  /** How long a round waits after a change for the ones that follow it; default 100 ms. */
  readonly debounce?: Duration.DurationInput
}

type RawGateway = OrchObject & { readonly spec?: KubernetesGatewaySpec; readonly status?: unknown }
type RawClass = OrchObject & { readonly spec?: { readonly controllerName?: string } }

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("gateway")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("gateway")),
  debug: (message: string) => Effect.logDebug(message).pipe(withScope("gateway")),
}

/** RFC 3339 in whole seconds, as the orchestrator writes times. */
const rfc3339 = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

const gatewayObject = (raw: RawGateway, spec: KubernetesGatewaySpec): GatewayObject => ({
  apiVersion: raw.apiVersion ?? "gateway.networking.k8s.io/v1",
  name: raw.metadata.name,
  namespace: raw.metadata.namespace ?? "default",
  uid: raw.metadata.uid ?? "",
  labels: raw.metadata.labels ?? {},
  annotations: raw.metadata.annotations ?? {},
  spec,
})

const classRefs = (classes: ReadonlyArray<RawClass>): ReadonlyArray<GatewayClassRef> =>
  classes.map((c) => ({ name: c.metadata.name, controllerName: c.spec?.controllerName ?? "" }))

/** Server-side apply of one object as `fieldManager` (this controller's by default; forced: the fields are ours). */
export const applyObject = (
  client: OrchestratorClientShape,
  ref: ResourceRef,
  object: Obj,
  fieldManager: string = FIELD_MANAGER,
) => {
  const meta = object.metadata as { readonly name: string; readonly namespace: string }
  return client.request({
    method: "PATCH",
    path: resourcePath(ref, meta.namespace, meta.name),
    query: { fieldManager, force: true },
    contentType: "application/apply-patch+yaml",
    body: object,
  })
}

/** Runs until interrupted (leadership lost, shutdown); never fails. */
export const runGatewayDeployments = (
  options: GatewayDeploymentOptions,
): Effect.Effect<void, never, OrchestratorClient | Informers> => Effect.scoped(controller(options))

const controller = (
  options: GatewayDeploymentOptions,
): Effect.Effect<void, never, OrchestratorClient | Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const namespace = options.watchNamespace ?? ""
    const interval = Duration.decode(options.interval)
    const debounce = Duration.decode(options.debounce ?? Duration.millis(100))
    const dirty = yield* Queue.sliding<void>(1)

    // The Gateway kind appears in `watched` once the config store has found its CRD.
    let gateways: InformerShape<RawGateway> | undefined
    let classes: InformerShape<RawClass> | undefined
    while (gateways === undefined) {
      const watched = yield* options.watched
      gateways = yield* gatewayApiInformer<RawGateway>(informers, watched, "Gateway", namespace)
      classes = yield* gatewayApiInformer<RawClass>(informers, watched, "GatewayClass", "")
      if (gateways === undefined) yield* Effect.sleep(interval)
    }
    const objects = yield* deployedObjects(informers, namespace)
    const serviceAccounts = yield* informers.informer<OrchObject>(
      ServiceAccountResource,
      namespace === "" ? {} : { namespace },
    )
    const followed = [gateways, objects.deployments, objects.services, serviceAccounts, ...(classes ? [classes] : [])]
    yield* followInto(dirty, followed)
    yield* Effect.forEach(followed, (i) => i.synced, { discard: true })
    yield* log.info(`deploying Gateways of the mesh's classes (${options.controllerName})`)

    /** What was last applied, by `kind/namespace/name`: unchanged objects are not applied again. */
    const applied = new Map<string, string>()

    type Exists = (namespace: string, name: string) => boolean
    const exists =
      (informer: { readonly get: (namespace: string, name: string) => unknown }): Exists =>
      (ns, name) =>
        informer.get(ns, name) !== undefined

    const ensure = (ref: ResourceRef, live: Exists, object: Obj) =>
      Effect.gen(function* () {
        const meta = object.metadata as { readonly name: string; readonly namespace: string }
        const key = `${ref.kind}/${meta.namespace}/${meta.name}`
        const text = JSON.stringify(object)
        if (applied.get(key) === text && live(meta.namespace, meta.name)) return 0
        return yield* applyObject(client, ref, object).pipe(
          Effect.tap(() => Effect.sync(() => applied.set(key, text))),
          Effect.as(1),
          Effect.catchAll((e) =>
            Effect.as(
              log.warn(`applying ${ref.kind} ${meta.namespace}/${meta.name} failed (retried): ${e.message}`),
              0,
            ),
          ),
        )
      })

    const deploy = (m: ManagedGateway) =>
      Effect.gen(function* () {
        const pod = proxyPod(m, options.injection())
        if (Either.isLeft(pod)) {
          yield* log.warn(`Gateway ${m.gateway.namespace}/${m.gateway.name}: no proxy pod: ${pod.left}`)
          return 0
        }
        const { pod: proxy, resources } = pod.right
        return (
          (yield* ensure(ServiceAccountResource, exists(serviceAccounts), serviceAccount(m))) +
          (yield* ensure(DeploymentResource, exists(objects.deployments), deployment(m, proxy, resources))) +
          (yield* ensure(Resources.services, exists(objects.services), service(m)))
        )
      })

    const writeWaypointStatus = (
      raw: RawGateway,
      spec: KubernetesGatewaySpec,
      deployed: DeployedGateway,
      now: string,
    ) =>
      Effect.gen(function* () {
        const ns = raw.metadata.namespace ?? "default"
        const name = deployed.names.deployment
        const state = deployedState(name, objects.observed.deployment(ns, name), objects.observed.service(ns, name))
        const desired = deployedGatewayStatus(
          { generation: raw.metadata.generation, listeners: spec.listeners },
          state,
          now,
        )
        const next = mergedStatus(GatewayApiKind.KubernetesGateway, desired, raw.status, options.controllerName)
        if (next === undefined || gateways === undefined) return
        yield* patchStatus(client, gateways.ref, ns, raw.metadata.name, statusMergePatch(raw.status, next)).pipe(
          Effect.catchAll((e) =>
            e.notFound
              ? Effect.void
              : log.warn(`writing the status of Gateway ${ns}/${raw.metadata.name} failed (retried): ${e.message}`),
          ),
        )
      })

    const round = Effect.gen(function* () {
      if (gateways === undefined) return
      const kinds: ReadonlyMap<string, ManagedKind> = managedClasses(classRefs(classes?.list() ?? []), options)
      const now = rfc3339(yield* Clock.currentTimeMillis)
      const present = new Set<string>()
      let written = 0
      for (const raw of gateways.list()) {
        const spec = raw.spec
        if (spec === undefined || raw.metadata.deletionTimestamp !== undefined) continue
        const gateway = gatewayObject(raw, spec)
        const deployed = deploymentOf(
          { ...gateway, className: spec.gatewayClassName, addresses: spec.addresses },
          kinds,
        )
        if (deployed === undefined) continue
        const m: ManagedGateway = {
          gateway,
          kind: deployed.kind,
          names: deployed.names,
          ...(options.copyLabelsAnnotations !== undefined
            ? { copyLabelsAnnotations: options.copyLabelsAnnotations }
            : {}),
        }
        written += yield* deploy(m)
        for (const n of [deployed.names.deployment, deployed.names.serviceAccount])
          present.add(`${gateway.namespace}/${n}`)
        if (options.writeStatus && deployed.kind === "waypoint") yield* writeWaypointStatus(raw, spec, deployed, now)
      }
      // Forget what was applied for Gateways gone (their objects go with them), so memory stays bounded.
      for (const key of applied.keys()) {
        const [, ns, name] = key.split("/")
        if (!present.has(`${ns}/${name}`)) applied.delete(key)
      }
      if (written > 0) yield* log.debug(`gateway deployment: ${written} object(s) applied`)
    }).pipe(
      // A bug in one round must not stop the controller: the next round starts afresh.
      Effect.catchAllDefect((defect) => log.warn(`a gateway deployment round failed: ${String(defect)}`)),
    )

    for (;;) {
      yield* round
      yield* Effect.raceFirst(Queue.take(dirty), Effect.sleep(interval))
      yield* Effect.sleep(debounce)
      yield* Queue.takeAll(dirty)
    }
  })
