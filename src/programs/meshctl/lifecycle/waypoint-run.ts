/**
 * What the `meshctl waypoint` subcommands do once their flags are read (loaded lazily). A
 * waypoint's namespace is `-n`, else `default`. Readiness is the Gateway's `Programmed=True`
 * condition, polled until `--waypoint-timeout`; a timeout names the gateway and the condition
 * last seen.
 */
import { Clock, Console, Data, Duration, Effect, Either, Option } from "effect"
import { stringify } from "yaml"
import { formatGoDuration } from "../../../services/config/duration.js"
import { Labels } from "../../../services/constants.js"
import {
  describeReadiness,
  isProgrammed,
  isWaypoint,
  parseTrafficType,
  waypointGateway,
  waypointTable,
} from "../../../services/gateway-api/waypoints/gateway.js"
import { GatewayResource, WaypointLabels } from "../../../services/gateway-api/waypoints/names.js"
import type { OrchestratorClientShape, OrchestratorError } from "../../../services/orchestrator/client.js"
import { asObject, asStringMap, type Obj } from "../../../services/orchestrator/json.js"
import type { OrchCustomObject } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"
import type { GlobalOptions } from "../global-options.js"
import { orchestratorClient } from "../orchestrator-access.js"
import type {
  WaypointApplyArgs,
  WaypointDeleteArgs,
  WaypointGenerateArgs,
  WaypointListArgs,
  WaypointStatusArgs,
} from "./waypoint-options.js"

/** A waypoint command that could not do what was asked; the message says what and why. */
export class WaypointFailed extends Data.TaggedError("WaypointFailed")<{ readonly message: string }> {}

const fail = (message: string) => new WaypointFailed({ message })

/** How often readiness is checked while waiting. */
const POLL_MILLIS = 250

const namespaceOf = (global: GlobalOptions) => (global.namespace === "" ? "default" : global.namespace)

const clientFor = (global: GlobalOptions) => Effect.mapError(orchestratorClient(global), (e) => fail(e.message))

const GATEWAYS = `${GatewayResource.group}/${GatewayResource.version} Gateways`

/** A request failure as a message naming what was tried and where; a 404 of the whole kind says so. */
const tried =
  (client: OrchestratorClientShape, what: string) =>
  <A, R>(effect: Effect.Effect<A, OrchestratorError, R>) =>
    Effect.mapError(effect, (e) => fail(`cannot ${what} on ${client.server}: ${e.message}`))

const getGateway = (client: OrchestratorClientShape, namespace: string, name: string) =>
  client.get<OrchCustomObject>(GatewayResource, namespace, name).pipe(
    Effect.map((o) => Option.some(o as unknown as Obj)),
    Effect.catchIf(
      (e) => e.notFound,
      () => Effect.succeedNone,
    ),
    Effect.map(Option.getOrUndefined),
    tried(client, `read Gateway ${namespace}/${name}`),
  )

const listGateways = (client: OrchestratorClientShape, namespace: string | undefined) =>
  client.list<OrchCustomObject>(GatewayResource, namespace === undefined ? {} : { namespace }).pipe(
    Effect.map((page) => page.items.map((item) => item as unknown as Obj)),
    Effect.mapError((e) =>
      fail(
        e.notFound
          ? `${client.server} does not serve ${GATEWAYS}: install the Gateway API CRDs first`
          : `cannot list ${GATEWAYS} on ${client.server}: ${e.message}`,
      ),
    ),
  )

const trafficTypeOf = (value: string) =>
  Either.match(parseTrafficType(value), { onLeft: (message) => fail(message), onRight: Effect.succeed })

/** Polls the gateway until it is Programmed, failing after `timeout` with what was last seen. */
const waitReady = (client: OrchestratorClientShape, namespace: string, name: string, timeout: Duration.Duration) =>
  Effect.gen(function* () {
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(timeout)
    for (;;) {
      const gateway = yield* getGateway(client, namespace, name)
      if (gateway !== undefined && isProgrammed(gateway)) return
      if ((yield* Clock.currentTimeMillis) >= deadline)
        return yield* fail(
          `timed out after ${formatGoDuration(timeout)} waiting for waypoint ${namespace}/${name} to be ready: ${describeReadiness(gateway)}`,
        )
      yield* Effect.sleep(POLL_MILLIS)
    }
  })

export const runWaypointGenerate = (args: WaypointGenerateArgs) =>
  Effect.gen(function* () {
    const trafficType = yield* trafficTypeOf(args.trafficType)
    const gateway = waypointGateway({
      name: args.name,
      namespace: args.global.namespace,
      trafficType,
      revision: args.revision,
    })
    yield* Console.log(stringify(gateway, { lineWidth: 0 }).trimEnd())
  })

export const runWaypointApply = (args: WaypointApplyArgs) =>
  Effect.gen(function* () {
    const trafficType = yield* trafficTypeOf(args.trafficType)
    const namespace = namespaceOf(args.global)
    const client = yield* clientFor(args.global)
    const gateway = waypointGateway({ name: args.name, namespace, trafficType, revision: args.revision })
    const existing = yield* getGateway(client, namespace, args.name)
    if (existing !== undefined && !args.overwrite)
      return yield* fail(`waypoint ${namespace}/${args.name} already exists; use --overwrite to replace it`)
    const write =
      existing === undefined
        ? client.create(GatewayResource, gateway as unknown as OrchCustomObject)
        : client.replace(GatewayResource, {
            ...gateway,
            metadata: {
              ...(gateway.metadata as object),
              resourceVersion: (existing.metadata as { resourceVersion?: string }).resourceVersion,
            },
          } as unknown as OrchCustomObject)
    yield* write.pipe(
      Effect.mapError((e) =>
        fail(
          e.notFound
            ? `cannot apply waypoint ${namespace}/${args.name}: ${client.server} does not serve ${GATEWAYS} (install the Gateway API CRDs first) or namespace ${namespace} does not exist: ${e.message}`
            : `cannot apply waypoint ${namespace}/${args.name} on ${client.server}: ${e.message}`,
        ),
      ),
    )
    yield* Console.log(`waypoint ${namespace}/${args.name} applied`)
    if (args.wait) {
      yield* waitReady(client, namespace, args.name, args.waypointTimeout)
      yield* Console.log(`waypoint ${namespace}/${args.name} is ready`)
    }
    if (args.enrollNamespace) {
      const ns = yield* client
        .get<OrchCustomObject>(Resources.namespaces, undefined, namespace)
        .pipe(tried(client, `read namespace ${namespace}`))
      if (ns.metadata.labels?.[WaypointLabels.dataplaneMode] !== "ambient")
        yield* Console.log(
          `Warning: namespace ${namespace} is not enrolled in ambient; consider labelling it ${WaypointLabels.dataplaneMode}=ambient`,
        )
      yield* client
        .mergePatch(Resources.namespaces, undefined, namespace, {
          metadata: { labels: { [WaypointLabels.useWaypoint]: args.name } },
        })
        .pipe(tried(client, `label namespace ${namespace}`))
      yield* Console.log(`namespace ${namespace} labeled with "${WaypointLabels.useWaypoint}: ${args.name}"`)
    }
  }).pipe(Effect.scoped)

export const runWaypointStatus = (args: WaypointStatusArgs) =>
  Effect.gen(function* () {
    const namespace = namespaceOf(args.global)
    const client = yield* clientFor(args.global)
    const gateway = yield* getGateway(client, namespace, args.name)
    if (gateway === undefined || !isWaypoint(gateway))
      return yield* fail(`waypoint ${namespace}/${args.name} not found on ${client.server}`)
    yield* waitReady(client, namespace, args.name, args.waypointTimeout)
    yield* Console.log(`waypoint ${namespace}/${args.name} is ready`)
  }).pipe(Effect.scoped)

export const runWaypointList = (args: WaypointListArgs) =>
  Effect.gen(function* () {
    const client = yield* clientFor(args.global)
    const gateways = yield* listGateways(client, args.allNamespaces ? undefined : namespaceOf(args.global))
    yield* Effect.sync(() => process.stdout.write(waypointTable(gateways, args.allNamespaces)))
  }).pipe(Effect.scoped)

export const runWaypointDelete = (args: WaypointDeleteArgs) =>
  Effect.gen(function* () {
    if (args.all && args.names.length > 0) return yield* fail("cannot give waypoint names together with --all")
    const namespace = namespaceOf(args.global)
    const client = yield* clientFor(args.global)
    const names = args.all
      ? (yield* listGateways(client, namespace))
          .filter(isWaypoint)
          .filter(
            (g) => args.revision === "" || asStringMap(asObject(g.metadata).labels)[Labels.revision] === args.revision,
          )
          .map((g) => String(asObject(g.metadata).name))
      : args.names.length > 0
        ? args.names
        : [args.name]
    let failed = 0
    for (const name of names) {
      const gateway = yield* getGateway(client, namespace, name)
      if (gateway === undefined) {
        yield* Console.log(`waypoint ${namespace}/${name} not found`)
        continue
      }
      if (!isWaypoint(gateway)) {
        failed++
        yield* Console.error(`gateway ${namespace}/${name} is not a waypoint: not deleted`)
        continue
      }
      yield* client.remove(GatewayResource, namespace, name).pipe(tried(client, `delete waypoint ${namespace}/${name}`))
      yield* Console.log(`waypoint ${namespace}/${name} deleted`)
    }
    if (failed > 0) return yield* fail(`${failed} of ${names.length} waypoint(s) not deleted`)
  }).pipe(Effect.scoped)
