/**
 * The side-by-side benchmark's load (scripts/bench-versus.ts): the project's light ADS client
 * (SotW, resources counted and named, not decoded), run in child processes so that the parent
 * can time writes and the control plane under test gets the cores it can take.
 *
 * A sidecar subscribes as the proxy does: CDS and LDS wildcard, RDS for the route names its
 * listeners name, EDS for its EDS clusters (both lists learned from a decoding probe client of the
 * same server: `probeSidecar`). A proxyless gRPC client watches `GRPC_WATCH` services: LDS
 * `host:port`, RDS by the route name that server's listeners give (`probeGrpcRoute`), CDS and EDS
 * for the clusters its routes use. A change is tracked by the names it must reach: a client whose
 * subscription of that type holds one of them is affected, and has received the change at its
 * first response of that type carrying one of them after the write.
 */
import { Data, Effect, Scope } from "effect"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import type { ProtoObject } from "../src/services/xds/cache/resource-spec.js"
import { plainToStruct } from "../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import { now } from "./bench-support.js"
import { host, NS, PORT } from "./bench-versus-workload.js"

/** Services each gRPC client watches. */
export const GRPC_WATCH = 10
/** Responses past gRPC's 4 MiB default (a sidecar's CDS at 1,000 services), one connection per client as proxies have. */
const CHANNEL = { "grpc.max_receive_message_length": -1, "grpc.use_local_subchannel_pool": 1 }

/** A probe learned nothing usable from the server. */
class ProbeError extends Data.TaggedError("ProbeError")<{ readonly message: string }> {}

const DEBUG = process.env.BENCH_VERSUS_DEBUG === "1"

export type Names = Readonly<Record<string, ReadonlyArray<string>>>

export interface ClientPlan {
  readonly address: string
  readonly sidecarFrom: number
  readonly sidecars: number
  readonly grpcFrom: number
  readonly grpcClients: number
  readonly services: number
  /** Services 0..routed-1 have subsets (their routes use clusters v1 and v2). */
  readonly routed: number
  readonly sidecarNames: Names
  /** The gRPC route name for a host, `{host}` standing for it. */
  readonly grpcRouteTemplate: string
}

export type ToClients =
  | { readonly type: "plan"; readonly plan: ClientPlan }
  | { readonly type: "track"; readonly id: number; readonly typeUrl: string; readonly names: ReadonlyArray<string> }
  | { readonly type: "bytes" }

export type FromClients =
  | { readonly type: "ready"; readonly at: number; readonly bytes: number; readonly ready: number }
  | { readonly type: "armed"; readonly id: number }
  | { readonly type: "converged"; readonly id: number; readonly last: number; readonly clients: number }
  | { readonly type: "bytes"; readonly bytes: number }
  | { readonly type: "progress"; readonly ready: number }
  | { readonly type: "failed"; readonly message: string }

/** Client n's node; the probe (n = -1) gets an address of its own. */
export const sidecarNode = (client: number) => ({
  id: `sidecar~${client < 0 ? "10.250.0.1" : `10.200.${Math.floor(client / 250)}.${client % 250}`}~client-${client}.${NS}~${NS}.svc.cluster.local`,
  metadata: plainToStruct({
    NAMESPACE: NS,
    LABELS: { app: "client" },
    MESH_VERSION: "bench",
    ISTIO_VERSION: "1.28.0",
    CLUSTER_ID: "Kubernetes",
  }),
})

export const grpcNode = (client: number) => ({
  id: `sidecar~127.0.0.1~grpc-${client}.${NS}~${NS}.svc.cluster.local`,
  metadata: plainToStruct({ GENERATOR: "grpc", NAMESPACE: NS, CLUSTER_ID: "Kubernetes" }),
  locality: { region: "region-0", zone: "zone-0" },
})

export const grpcHosts = (client: number, services: number): ReadonlyArray<number> =>
  Array.from({ length: Math.min(GRPC_WATCH, services) }, (_, j) => (client * GRPC_WATCH + j) % services)

export const clusterOf = (i: number, subset = "") => `outbound|${PORT}|${subset}|${host(i)}`

const grpcNames = (plan: ClientPlan, client: number): Names => {
  const hosts = grpcHosts(client, plan.services)
  const clusters = hosts.flatMap((i) => (i < plan.routed ? [clusterOf(i, "v1"), clusterOf(i, "v2")] : [clusterOf(i)]))
  return {
    [TypeUrl.Listener]: hosts.map((i) => `${host(i)}:${PORT}`),
    [TypeUrl.Route]: hosts.map((i) => plan.grpcRouteTemplate.replace("{host}", host(i))),
    [TypeUrl.Cluster]: clusters,
    [TypeUrl.Endpoint]: clusters,
  }
}

/** Every value under `key` anywhere in a decoded resource. */
const valuesOf = (value: unknown, key: string, into: Array<unknown> = []): Array<unknown> => {
  if (Array.isArray(value)) for (const v of value) valuesOf(v, key, into)
  else if (typeof value === "object" && value !== null)
    for (const [k, v] of Object.entries(value)) {
      if (k === key) into.push(v)
      valuesOf(v, key, into)
    }
  return into
}

const resourcesOf = (
  snapshot: { types: ReadonlyMap<string, { resources: ReadonlyMap<string, { resource?: ProtoObject }> }> },
  typeUrl: string,
) =>
  [...(snapshot.types.get(typeUrl)?.resources.values() ?? [])].flatMap((r) =>
    r.resource === undefined ? [] : [r.resource],
  )

/**
 * What a sidecar of this server subscribes to, learned as the proxy learns it: a decoding client
 * takes CDS and LDS; RDS names are the listeners' route_config_name values, EDS names the EDS
 * clusters' service names (their own names when unset).
 */
export const probeSidecar = (address: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* makeAdsClient({ address, mode: "sotw", node: sidecarNode(-1), channelOptions: CHANNEL })
      yield* client.subscribe(TypeUrl.Cluster)
      yield* client.subscribe(TypeUrl.Listener)
      const snapshot = yield* client.waitFor(
        (s) =>
          (s.types.get(TypeUrl.Cluster)?.responses ?? 0) > 0 && (s.types.get(TypeUrl.Listener)?.responses ?? 0) > 0,
        "60 seconds",
      )
      const clusters = resourcesOf(snapshot, TypeUrl.Cluster)
      const eds = clusters.flatMap((c) => {
        const type = c.type as unknown
        if (type !== "EDS" && type !== 3) return []
        const serviceName = (c.eds_cluster_config as { service_name?: string } | undefined)?.service_name
        return [serviceName !== undefined && serviceName !== "" ? serviceName : String(c.name)]
      })
      const routes = [
        ...new Set(
          valuesOf(resourcesOf(snapshot, TypeUrl.Listener), "route_config_name").filter(
            (v): v is string => typeof v === "string" && v !== "",
          ),
        ),
      ]
      return {
        names: {
          [TypeUrl.Cluster]: [],
          [TypeUrl.Listener]: [],
          [TypeUrl.Route]: routes.sort(),
          [TypeUrl.Endpoint]: eds.sort(),
        } satisfies Names,
        clusters: clusters.length,
        listeners: resourcesOf(snapshot, TypeUrl.Listener).length,
      }
    }),
  )

/** The route name this server's gRPC listener for service 0 points at, with `{host}` for the host. */
export const probeGrpcRoute = (address: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* makeAdsClient({ address, mode: "sotw", node: grpcNode(-1), channelOptions: CHANNEL })
      yield* client.subscribe(TypeUrl.Listener, [`${host(0)}:${PORT}`])
      const snapshot = yield* client.waitFor(
        (s) => (s.types.get(TypeUrl.Listener)?.resources.size ?? 0) > 0,
        "60 seconds",
      )
      const route = valuesOf(resourcesOf(snapshot, TypeUrl.Listener), "route_config_name").find(
        (v): v is string => typeof v === "string" && v.includes(host(0)),
      )
      if (route === undefined)
        return yield* new ProbeError({ message: "the gRPC listener names no route for service 0" })
      return route.replace(host(0), "{host}")
    }),
  )

interface Tracked {
  readonly typeUrl: string
  readonly names: ReadonlySet<string>
  readonly pending: Set<number>
  last: number
  readonly clients: number
}

/** The child process: connects its share of clients, then tracks changes until killed. */
export const runClients = async (): Promise<void> => {
  const send = (m: FromClients) => process.send?.(m)
  const plan = await new Promise<ClientPlan>((resolve) =>
    process.once("message", (m: ToClients) => {
      if (m.type === "plan") resolve(m.plan)
    }),
  )
  const total = plan.sidecars + plan.grpcClients
  const subscriptions: Array<Names> = []
  const tracked = new Map<number, Tracked>()
  let bytes = 0
  let ready = 0
  const scope = await Effect.runPromise(Scope.make())

  const onResponse = (client: number, typeUrl: string, names: ReadonlyArray<string>) => {
    for (const [id, change] of tracked) {
      if (change.typeUrl !== typeUrl || !change.pending.has(client)) continue
      if (!names.some((n) => change.names.has(n))) continue
      change.pending.delete(client)
      change.last = now()
      if (change.pending.size === 0) {
        tracked.delete(id)
        send({ type: "converged", id, last: change.last, clients: change.clients })
      }
    }
  }

  const start = (index: number) => {
    const sidecar = index < plan.sidecars
    const names = sidecar ? plan.sidecarNames : grpcNames(plan, plan.grpcFrom + index - plan.sidecars)
    subscriptions[index] = names
    // Ready once every type has answered and every named resource has arrived at least once.
    const seen = new Map<string, Set<string>>()
    const wanted = Object.entries(names)
    let isReady = false
    return makeAdsClient({
      address: plan.address,
      mode: "sotw",
      decode: false,
      names: true,
      channelOptions: CHANNEL,
      node: sidecar ? sidecarNode(plan.sidecarFrom + index) : grpcNode(plan.grpcFrom + index - plan.sidecars),
      onResponse: (event) => {
        bytes += event.bytes
        if (!isReady) {
          const got = seen.get(event.typeUrl) ?? new Set<string>()
          for (const n of event.names) got.add(n)
          seen.set(event.typeUrl, got)
          if (wanted.every(([t, want]) => (seen.get(t)?.size ?? 0) >= Math.max(1, want.length))) {
            isReady = true
            seen.clear()
            if (++ready === total) send({ type: "ready", at: now(), bytes, ready })
          }
        }
        if (DEBUG && tracked.size > 0)
          process.stderr.write(`client ${index}: ${event.typeUrl.slice(-20)} ${event.names.slice(0, 4).join(" ")}\n`)
        if (tracked.size > 0) onResponse(index, event.typeUrl, event.names)
      },
    }).pipe(
      Effect.tap((c) =>
        Effect.forEach([TypeUrl.Cluster, TypeUrl.Listener, TypeUrl.Route, TypeUrl.Endpoint], (t) =>
          (names[t]?.length ?? 0) > 0 || t === TypeUrl.Cluster || t === TypeUrl.Listener
            ? c.subscribe(t, names[t] ?? [])
            : Effect.void,
        ),
      ),
      Scope.extend(scope),
    )
  }

  process.on("message", (m: ToClients) => {
    if (m.type === "bytes") send({ type: "bytes", bytes })
    if (m.type !== "track") return
    const names = new Set(m.names)
    const pending = new Set<number>()
    for (let c = 0; c < total; c++) if ((subscriptions[c]?.[m.typeUrl] ?? []).some((n) => names.has(n))) pending.add(c)
    if (DEBUG) process.stderr.write(`track ${m.id}: ${pending.size} of ${total} clients for ${[...names].join(" ")}\n`)
    send({ type: "armed", id: m.id })
    if (pending.size === 0) send({ type: "converged", id: m.id, last: 0, clients: 0 })
    else tracked.set(m.id, { typeUrl: m.typeUrl, names, pending, last: 0, clients: pending.size })
  })

  // Progress on stderr while connecting: a run that never reaches full config shows how far it got.
  const progress = setInterval(() => {
    if (ready >= total) clearInterval(progress)
    else {
      process.stderr.write(`bench-versus clients ${process.pid}: ${ready} of ${total} hold full config\n`)
      send({ type: "progress", ready })
    }
  }, 30_000)
  await Effect.runPromise(
    Effect.forEach(
      Array.from({ length: total }, (_, i) => i),
      start,
      { concurrency: 50 },
    ),
  ).catch((error) => send({ type: "failed", message: String(error) }))
  if (total === 0) send({ type: "ready", at: now(), bytes: 0, ready: 0 })
}
