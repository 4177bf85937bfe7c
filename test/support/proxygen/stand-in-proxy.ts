/**
 * A stand-in for the data-plane proxy on an ADS stream (there is no Envoy binary here): it
 * connects to an xDS address (the agent's xDS proxy socket or a discovery port), sends a node
 * like the proxy's, and subscribes as the proxy does: clusters (wildcard), then the endpoints of
 * its EDS clusters, listeners (wildcard), then the route configurations and extension configs
 * its listeners name, and the secrets its listeners and clusters ask of the control plane (SDS
 * over ADS). Every response is decoded with the proxy's own protos and checked (proto
 * shape and validate.rules by default); a response with any problem is NACKed whole, with the
 * problems as `error_detail`, and the previous state kept, as the proxy does.
 */
import * as grpc from "@grpc/grpc-js"
import { loadXdsProtos } from "../../../src/layers/xds/protos.js"
import type { ProtoObject } from "../../../src/services/xds/cache/resource-spec.js"
import { formatProblem } from "../../../src/services/xds/conformance/reflect.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { decodeResource, staticProblems } from "./check.js"

const T = "type.googleapis.com/"
export const StandInType = {
  cluster: `${T}envoy.config.cluster.v3.Cluster`,
  endpoint: `${T}envoy.config.endpoint.v3.ClusterLoadAssignment`,
  listener: `${T}envoy.config.listener.v3.Listener`,
  route: `${T}envoy.config.route.v3.RouteConfiguration`,
  extensionConfig: `${T}envoy.config.core.v3.TypedExtensionConfig`,
  secret: `${T}envoy.extensions.transport_sockets.tls.v3.Secret`,
} as const

const WILDCARD = new Set<string>([StandInType.cluster, StandInType.listener])

export interface StandInOptions {
  /** `unix:///path/to/XDS` or `host:port`. */
  readonly address: string
  readonly node: {
    readonly id: string
    readonly cluster?: string
    /** Plain JSON; sent as google.protobuf.Struct, as the proxy's bootstrap does. */
    readonly metadata?: Readonly<Record<string, unknown>>
  }
  /** The check of one decoded resource; default: proto shape and validate.rules. */
  readonly check?: (typeUrl: string, resource: ProtoObject) => ReadonlyArray<string>
  /** More wildcard types to subscribe to at start (e.g. the NDS name table). */
  readonly extraWildcardTypes?: ReadonlyArray<string>
}

export interface Nack {
  readonly typeUrl: string
  readonly nonce: string
  readonly version: string
  readonly message: string
}

interface TypeState {
  asked: boolean
  names: ReadonlyArray<string>
  version: string
  nonce: string
  resources: Map<string, ProtoObject>
}

export interface StandInProxy {
  /** The accepted resources of a type. */
  readonly resources: (typeUrl: string) => ReadonlyArray<ProtoObject>
  /** Names of the accepted resources of a type. */
  readonly names: (typeUrl: string) => ReadonlyArray<string>
  /** The version last ACKed for a type ("" before any). */
  readonly version: (typeUrl: string) => string
  readonly nacks: ReadonlyArray<Nack>
  /** Responses ACKed, all types. */
  readonly acks: number
  /** Set when the stream ended or failed. */
  readonly error: Error | undefined
  /** Resolves once `predicate` holds (checked now and after every response), rejects after `timeoutMs`. */
  readonly waitFor: (predicate: (proxy: StandInProxy) => boolean, timeoutMs?: number) => Promise<void>
  readonly close: () => void
}

const nameOf = (r: ProtoObject): string => String(r.name ?? r.cluster_name ?? "")

const obj = (v: unknown): ProtoObject | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as ProtoObject) : undefined
const arr = (v: unknown): ReadonlyArray<ProtoObject> =>
  Array.isArray(v) ? v.filter((x): x is ProtoObject => obj(x) !== undefined) : []

/** Service names of the EDS clusters (what the proxy then asks endpoints for). */
const edsNames = (clusters: Iterable<ProtoObject>): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const c of clusters) {
    if (c.type !== "EDS") continue
    const service = obj(c.eds_cluster_config)?.service_name
    out.add(typeof service === "string" && service !== "" ? service : nameOf(c))
  }
  return [...out].sort()
}

/** Route configuration names (RDS) and extension config names (ECDS) the listeners refer to. */
const listenerRefs = (listeners: Iterable<ProtoObject>): { routes: Array<string>; extensions: Array<string> } => {
  const routes = new Set<string>()
  const extensions = new Set<string>()
  for (const l of listeners) {
    const chains = [...arr(l.filter_chains), ...(obj(l.default_filter_chain) ? [obj(l.default_filter_chain)!] : [])]
    for (const chain of chains)
      for (const f of arr(chain.filters)) {
        if (obj(f.config_discovery) !== undefined) extensions.add(String(f.name))
        const hcm = obj(f.typed_config)
        const rds = obj(hcm?.rds)
        if (rds !== undefined) routes.add(String(rds.route_config_name))
        for (const hf of arr(hcm?.http_filters))
          if (obj(hf.config_discovery) !== undefined) extensions.add(String(hf.name))
      }
    for (const lf of arr(l.listener_filters))
      if (obj(lf.config_discovery) !== undefined) extensions.add(String(lf.name))
  }
  return { routes: [...routes].sort(), extensions: [...extensions].sort() }
}

/** Names of the SDS secrets served over ADS (`sds_config.ads`) anywhere in `resources`. */
const adsSecretNames = (resources: Iterable<ProtoObject>): ReadonlyArray<string> => {
  const out = new Set<string>()
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x)
    const o = obj(v)
    if (o === undefined) return
    const sds = obj(o.sds_config)
    if (typeof o.name === "string" && sds !== undefined && obj(sds.ads) !== undefined) out.add(o.name)
    for (const x of Object.values(o)) walk(x)
  }
  for (const r of resources) walk(r)
  return [...out].sort()
}

const sameNames = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((x, i) => x === b[i])

interface WireResponse {
  readonly version_info: string
  readonly resources?: ReadonlyArray<{ readonly type_url: string; readonly value: Uint8Array }>
  readonly type_url: string
  readonly nonce: string
}

export const startStandInProxy = (options: StandInOptions): StandInProxy => {
  const protos = loadXdsProtos()
  const Ctor = grpc.makeClientConstructor(protos.ads, "AggregatedDiscoveryService")
  const client = new Ctor(options.address, grpc.credentials.createInsecure())
  const call = (
    client as unknown as Record<string, () => grpc.ClientDuplexStream<object, WireResponse>>
  ).StreamAggregatedResources!.call(client)
  const check = options.check ?? ((typeUrl: string, r: ProtoObject) => staticProblems(typeUrl, r).map(formatProblem))
  const types = new Map<string, TypeState>()
  const nacks: Array<Nack> = []
  const waiters = new Set<() => void>()
  let acks = 0
  let error: Error | undefined
  let nodeSent = false
  let closed = false
  let listenersAsked = false

  const state = (typeUrl: string): TypeState => {
    let s = types.get(typeUrl)
    if (s === undefined) {
      s = { asked: false, names: [], version: "", nonce: "", resources: new Map() }
      types.set(typeUrl, s)
    }
    return s
  }

  const send = (request: Record<string, unknown>) => {
    if (closed) return
    const node = {
      id: options.node.id,
      ...(options.node.cluster !== undefined ? { cluster: options.node.cluster } : {}),
      ...(options.node.metadata !== undefined ? { metadata: plainToStruct(options.node.metadata) } : {}),
      user_agent_name: "envoy",
    }
    call.write(nodeSent ? request : { ...request, node })
    nodeSent = true
  }

  const subscribe = (typeUrl: string, names: ReadonlyArray<string>) => {
    const s = state(typeUrl)
    if (s.asked && sameNames(s.names, names)) return
    // An empty list means "everything" for any type in SotW: named types start once they have names.
    if (
      !s.asked &&
      names.length === 0 &&
      !WILDCARD.has(typeUrl) &&
      !(options.extraWildcardTypes ?? []).includes(typeUrl)
    )
      return
    s.asked = true
    s.names = names
    send({ type_url: typeUrl, resource_names: [...names], version_info: s.version, response_nonce: s.nonce })
  }

  const notify = () => {
    for (const w of [...waiters]) w()
  }

  const followUps = (typeUrl: string) => {
    if (typeUrl === StandInType.cluster) {
      subscribe(StandInType.endpoint, edsNames(state(typeUrl).resources.values()))
      if (!listenersAsked) {
        listenersAsked = true
        subscribe(StandInType.listener, [])
      }
    }
    if (typeUrl === StandInType.listener) {
      const refs = listenerRefs(state(typeUrl).resources.values())
      subscribe(StandInType.route, refs.routes)
      subscribe(StandInType.extensionConfig, refs.extensions)
    }
    if (typeUrl === StandInType.listener || typeUrl === StandInType.cluster)
      subscribe(
        StandInType.secret,
        adsSecretNames([
          ...state(StandInType.listener).resources.values(),
          ...state(StandInType.cluster).resources.values(),
        ]),
      )
  }

  const onResponse = (response: WireResponse) => {
    const typeUrl = response.type_url
    const s = state(typeUrl)
    const problems: Array<string> = []
    const decoded: Array<ProtoObject> = []
    for (const any of response.resources ?? []) {
      if (any.type_url !== typeUrl) {
        problems.push(`resource of type ${any.type_url} in a ${typeUrl} response`)
        continue
      }
      try {
        const resource = decodeResource(typeUrl, any.value)
        decoded.push(resource)
        for (const p of check(typeUrl, resource)) problems.push(`${nameOf(resource)}: ${p}`)
      } catch (cause) {
        problems.push(`undecodable resource: ${String(cause)}`)
      }
    }
    s.nonce = response.nonce
    if (problems.length > 0) {
      const message = problems.join("\n")
      nacks.push({ typeUrl, nonce: response.nonce, version: response.version_info, message })
      send({
        type_url: typeUrl,
        resource_names: [...s.names],
        version_info: s.version,
        response_nonce: response.nonce,
        error_detail: { code: grpc.status.INVALID_ARGUMENT, message },
      })
    } else {
      // Wildcard types carry the whole state; the others only what they name.
      if (WILDCARD.has(typeUrl) || (options.extraWildcardTypes ?? []).includes(typeUrl)) s.resources = new Map()
      for (const r of decoded) s.resources.set(nameOf(r), r)
      if (!WILDCARD.has(typeUrl) && s.names.length > 0)
        for (const name of [...s.resources.keys()]) if (!s.names.includes(name)) s.resources.delete(name)
      s.version = response.version_info
      acks++
      send({ type_url: typeUrl, resource_names: [...s.names], version_info: s.version, response_nonce: s.nonce })
      followUps(typeUrl)
    }
    notify()
  }

  call.on("data", onResponse)
  call.on("error", (e: Error) => {
    if (!closed) error = e
    notify()
  })
  call.on("end", () => {
    if (!closed && error === undefined) error = new Error("the ADS stream ended")
    notify()
  })

  subscribe(StandInType.cluster, [])
  for (const t of options.extraWildcardTypes ?? []) subscribe(t, [])

  const proxy: StandInProxy = {
    resources: (typeUrl) => [...(types.get(typeUrl)?.resources.values() ?? [])],
    names: (typeUrl) => [...(types.get(typeUrl)?.resources.keys() ?? [])].sort(),
    version: (typeUrl) => types.get(typeUrl)?.version ?? "",
    get nacks() {
      return [...nacks]
    },
    get acks() {
      return acks
    },
    get error() {
      return error
    },
    waitFor: (predicate, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const done = () => {
          waiters.delete(tryIt)
          clearTimeout(timer)
        }
        const tryIt = () => {
          try {
            if (predicate(proxy)) {
              done()
              resolve()
            }
          } catch (cause) {
            done()
            reject(cause)
          }
        }
        const timer = setTimeout(() => {
          waiters.delete(tryIt)
          const held = [...types.entries()]
            .filter(([, s]) => s.asked)
            .map(([t, s]) => `${t.slice(t.lastIndexOf(".") + 1)}: ${s.resources.size}`)
          const why = error !== undefined ? `; stream error: ${error.message}` : ""
          reject(
            new Error(
              `stand-in proxy: condition not met in ${timeoutMs} ms (holding ${held.join(", ")}; ${nacks.length} NACK(s)${why})`,
            ),
          )
        }, timeoutMs)
        waiters.add(tryIt)
        tryIt()
      }),
    close: () => {
      if (closed) return
      closed = true
      call.removeAllListeners("data")
      call.on("error", () => undefined)
      call.cancel()
      client.close()
      notify()
    },
  }
  return proxy
}
