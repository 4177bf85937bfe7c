/**
 * Builds ADS responses for one watch from a PushContext, through the shared resource cache:
 * state-of-the-world (every subscribed resource that exists) and delta (only what changed,
 * plus explicit removals).
 *
 * What it memoises (sets shared by connections, derivations, digests, delta entries) and the
 * generators' notices live in the cache it is given (`ResourceCache.local`), not in this module:
 * two servers in one process, each with its own cache, share none of it.
 */

import { type GeneratorNotice, makeNoticeLog, type NoticeLog } from "../grpcgen/generator-notices.js"
import { generate, hostClusterNames, missingResource, type Subscription, setDigest } from "../grpcgen/grpc-gen.js"
import { type ProxyWorkload, proxyWorkload } from "../grpcgen/grpc-inbound.js"
import { memoOf } from "../model/local-slot.js"
import { isInboundListenerName, type PushContext, type PushContextInput } from "../model/push-context.js"
import { type DeltaWatch, planDelta } from "../protocol/delta.js"
import type {
  AnyMessage,
  DeltaDiscoveryResponse,
  DeltaResource,
  DiscoveryResponse,
  Node,
} from "../protocol/messages.js"
import { structToPlain } from "../protocol/messages.js"
import type { SotwWatch } from "../protocol/sotw.js"
import { shortType, TypeUrl } from "../protocol/type-urls.js"
import { generateForProxy, missingProxyResources, proxyShareKey } from "../proxygen/generate.js"
import { type ProxyView, proxyView } from "../proxygen/proxy-view.js"
import { clusterHost } from "../push/watched-hosts.js"
import { generateWorkloadApi, isWorkloadApiType } from "../workloadgen/generator.js"
import type { CacheLocal, EncodedResource, ResourceCache } from "./resource-cache.js"

/** The resources of a subscription, through the cache; what generating them noticed goes to its log. */
export const resourcesFor = (
  push: PushContext,
  cache: ResourceCache,
  typeUrl: string,
  sub: Subscription,
  view?: ProxyView,
): ReadonlyArray<EncodedResource> => {
  // The node proxy's workload API depends on no proxy; sidecars and gateways get the proxy
  // generators' resources; proxyless gRPC clients the gRPC ones.
  const generated = isWorkloadApiType(typeUrl)
    ? generateWorkloadApi(push, cache, typeUrl, sub)
    : view === undefined
      ? generate(push, typeUrl, sub)
      : generateForProxy(push, typeUrl, { wildcard: sub.wildcard, names: sub.names, proxy: view })
  if (generated.warnings.length > 0) stateOf(cache).notices.report(generated.warnings)
  return cache.resolve(typeUrl, generated.resources)
}

/**
 * The generator notices reported through `cache` since the last call, each text once per cache
 * (so once per server), for the server to log.
 */
export const takeGeneratorNotices = (cache: ResourceCache): ReadonlyArray<GeneratorNotice> =>
  stateOf(cache).notices.take()

/**
 * Encodes the endpoints of `hosts`' clusters into the cache ahead of a push (an endpoint event
 * derives the next PushContext inside the debounce window): the push then takes them as they
 * are (see `changedClusters`) instead of building, looking up and encoding them before its first
 * response. Only clusters the cache already holds a version of, that is, clusters some
 * connection asked for. Returns them, for the response encoders to encode their entries too.
 */
export const encodeEndpointsAhead = (
  push: PushContext,
  cache: ResourceCache,
  hosts: Iterable<string>,
): ReadonlyArray<EncodedResource> => {
  const state = stateOf(cache)
  const encoded: Array<EncodedResource> = []
  for (const host of hosts) {
    const names = hostClusterNames(push, host).filter((name) => cache.holds(TypeUrl.Endpoint, name))
    const found = names.length > 0 ? changedClusters(state, push, cache, names) : undefined
    for (const name of names) {
      const resource = found?.get(name)
      if (resource !== undefined) encoded.push(resource)
    }
  }
  return encoded
}

/** What every connection watching the same names of a type gets from one PushContext. */
interface ResolvedSet {
  readonly resources: ReadonlyArray<EncodedResource>
  readonly messages: ReadonlyArray<AnyMessage>
  readonly bytes: number
  /** The push responses built from a shared set (undefined when the set is not shared). */
  readonly responses: SharedResponses | undefined
  /** Why each requested name without a resource has none (`missingResource`). */
  readonly notFound: ReadonlyArray<string>
}

/**
 * A nonce, or how to make one. A push passes a maker: the connections it sends the same
 * response (for SotW the same set; for delta the same resources sent and removed) then get one
 * response object, nonce included, which the response serializer encodes once for all of them.
 * A nonce only has to be unique within a stream, and each such object is built for one
 * PushContext, so no stream is sent one nonce for two different responses.
 */
export type NonceSource = string | (() => string)

const nonceOf = (nonce: NonceSource): string => (typeof nonce === "string" ? nonce : nonce())

/** The SotW push response of one shared set (delta push responses are shared per push). */
interface SharedResponses {
  sotw: DiscoveryResponse | undefined
}

/** Delta push responses by what they send and remove (see `deltaResponse`). */
type DeltaPushResponse = Omit<DeltaResponse, "sharedReads" | "notFound">

/**
 * What the responder keeps per cache (one per server): memo tables over that cache's entries and
 * the PushContexts pushed through it, and the server's generator notices. Weak where keyed by a
 * context, watch or entry, so a run of pushes keeps only what is still referenced.
 */
interface ResponderState {
  /**
   * Resolved sets per (PushContext, type, watched names): after a change the connections
   * watching the same names would otherwise each generate, resolve, digest and copy the same
   * set. Inbound listeners depend on the requesting workload and are never shared.
   */
  readonly resolvedSets: WeakMap<PushContext, Map<string, Map<string, ResolvedSet & { readonly shared: true }>>>
  /**
   * Endpoint-only pushes: the PushContext each one's context was derived from, and the hosts
   * whose endpoints changed in between. One level deep (recording a derivation forgets the
   * previous context's own), so a run of pushes does not keep every past context alive.
   */
  readonly derivations: WeakMap<PushContext, { readonly previous: PushContext; readonly hosts: ReadonlySet<string> }>
  /** The names of a watch joined, per names array: a push asks for each connection's set. */
  readonly joined: WeakMap<ReadonlyArray<string>, string>
  /** A delta watch's subscribed names in order, per (immutable) set: the same array every push. */
  readonly sortedSets: WeakMap<ReadonlySet<string>, ReadonlyArray<string>>
  /**
   * A set's digest, once per resources array (a set carried over unchanged keeps its array). Only
   * SotW compares digests, so delta pushes never compute one.
   */
  readonly digests: WeakMap<ReadonlyArray<EncodedResource>, string>
  /**
   * The changed clusters of a derived PushContext, looked up once per context: the sets of every
   * connection watching a changed host contain the same few clusters. Kept per input, which
   * decides a context's content: the context prepared inside the debounce window (whose clusters
   * `encodeEndpointsAhead` looks up) and the same context stamped with its push version share it.
   */
  readonly changedByContext: WeakMap<PushContextInput, Map<string, EncodedResource>>
  /** The delta `Resource` entry of each cache entry (see `deltaEntry`). */
  readonly deltaEntries: WeakMap<EncodedResource, DeltaResource>
  /** Delta push responses per PushContext, by what they send and remove. */
  readonly deltaPushResponses: WeakMap<PushContext, Map<string, DeltaPushResponse>>
  /**
   * What the two tables above hold per PushContext, in characters of their keys (the watched
   * names joined, the names sent and removed): see `MAX_SHARED_KEY_CHARS`.
   */
  readonly sharedChars: WeakMap<PushContext, { chars: number }>
  /** What the generators noticed in the config, each text once for this server. */
  readonly notices: NoticeLog
  /**
   * The changed hosts' endpoint resources of a set, per set and per push's host set: every proxy
   * watching the same set gets the same partial response content (`partialEndpoints`).
   */
  readonly partialSets: WeakMap<
    ReadonlyArray<EncodedResource>,
    WeakMap<ReadonlySet<string>, ReadonlyArray<AnyMessage> | null>
  >
}

/** The responder's slot in each cache (a constant key: the state itself is the cache's). */
const responderState: CacheLocal<ResponderState> = {
  make: () => ({
    resolvedSets: new WeakMap(),
    derivations: new WeakMap(),
    joined: new WeakMap(),
    sortedSets: new WeakMap(),
    digests: new WeakMap(),
    changedByContext: new WeakMap(),
    deltaEntries: new WeakMap(),
    deltaPushResponses: new WeakMap(),
    sharedChars: new WeakMap(),
    notices: makeNoticeLog(),
    partialSets: new WeakMap(),
  }),
}
const stateOf = (cache: ResourceCache): ResponderState => cache.local(responderState)

/**
 * Records, in `cache`'s responder state, that `next` is `previous` with the endpoints of `hosts`
 * changed (and nothing else): the sets resolved through `cache` for `previous` are carried over.
 */
export const recordDerivation = (
  cache: ResourceCache,
  next: PushContext,
  previous: PushContext,
  hosts: ReadonlySet<string>,
): void => {
  const { derivations } = stateOf(cache)
  derivations.delete(previous)
  derivations.set(next, { previous, hosts })
}

/**
 * How many characters of keys the shared tables of one PushContext may hold (`sharedChars`).
 * They live as long as the context (until the config changes), whoever asked: the sets of
 * streams that ended stay in them. So they are bounded; beyond the bound a set or response is
 * built for its connection alone, as with sharing off. Thousands of distinct sets of a
 * thousand cluster names each fit; proxies alike (one Sidecar scope) share one set.
 */
export const MAX_SHARED_KEY_CHARS = 32 * 1024 * 1024

/** Whether a key of `chars` characters fits in `push`'s shared tables; counted when it does. */
const admitShared = (state: ResponderState, push: PushContext, chars: number): boolean => {
  const held = memoOf(state.sharedChars, push, () => ({ chars: 0 }))
  if (held.chars + chars > MAX_SHARED_KEY_CHARS) return false
  held.chars += chars
  return true
}

/**
 * Most reasons given per watch for names without a resource (`/debug/syncz` warnings, the
 * debug log); one more line counts the rest. A watch's names are the caller's choice.
 */
export const MAX_NOT_FOUND = 100

/** Why each of `names` without a resource in `resources` has none: the first `MAX_NOT_FOUND`. */
const notFoundOf = (
  push: PushContext,
  typeUrl: string,
  names: ReadonlyArray<string>,
  resources: ReadonlyArray<EncodedResource>,
  proxy: boolean,
): ReadonlyArray<string> => {
  // Generators give at most one resource per name: as many as names means none is missing.
  if (resources.length >= names.length) return []
  const present = new Set(resources.map((r) => r.name))
  const missing: Array<string> = []
  let more = 0
  for (const name of names) {
    if (present.has(name)) continue
    if (missing.length < MAX_NOT_FOUND) missing.push(name)
    else more++
  }
  const reasons = proxy
    ? missingProxyResources(typeUrl, missing, [])
    : missing.map((name) => missingResource(push, typeUrl, name))
  return more === 0 ? reasons : [...reasons, `${more} more requested ${shortType(typeUrl)} resources not found`]
}

const joinedNames = (state: ResponderState, names: ReadonlyArray<string>): string =>
  memoOf(state.joined, names, () => names.join("\n"))

const sortedNames = (state: ResponderState, names: ReadonlySet<string>): ReadonlyArray<string> =>
  memoOf(state.sortedSets, names, () => [...names].sort())

const resolvedSet = (
  state: ResponderState,
  push: PushContext,
  cache: ResourceCache,
  typeUrl: string,
  wildcard: boolean,
  names: ReadonlyArray<string>,
  proxy: ProxyInfo | undefined,
  share: boolean,
): ResolvedSet & { readonly shared: boolean } => {
  const view = proxy?.view
  const build = (responses: SharedResponses | undefined): ResolvedSet => {
    const resources = resourcesFor(push, cache, typeUrl, { wildcard, names, ...workloadOf(proxy) }, view)
    let bytes = 0
    for (const r of resources) bytes += r.resource.value.length
    const notFound = wildcard ? [] : notFoundOf(push, typeUrl, names, resources, view !== undefined)
    return { resources, messages: resources.map((r) => r.resource), bytes, responses, notFound }
  }
  if (!share || (view === undefined && typeUrl === TypeUrl.Listener && names.some(isInboundListenerName)))
    return { ...build(undefined), shared: false }
  const byWatch = memoOf(state.resolvedSets, push, () => new Map())
  // Keyed by the names' joined text as memoised per names array: a push looks its set up once
  // per connection, and a key built afresh each time would be copied and hashed each time.
  // Proxies share a set only with proxies their generators treat alike (`proxyShareKey`).
  const kind = `${wildcard ? `${typeUrl}*` : typeUrl}${view === undefined ? "" : `\u0000${proxyShareKey(push, view, typeUrl)}`}`
  let sets = byWatch.get(kind)
  if (sets === undefined) {
    sets = new Map()
    byWatch.set(kind, sets)
  }
  const key = joinedNames(state, names)
  const set = sets.get(key)
  if (set !== undefined) return set
  const responses: SharedResponses = { sotw: undefined }
  // Carrying endpoint sets over reads the gRPC generator's clusters: proxies' sets are rebuilt
  // (once per share key, not per connection).
  const before =
    typeUrl === TypeUrl.Endpoint && !wildcard && view === undefined ? previousSet(state, push, kind, key) : undefined
  const built =
    (before !== undefined ? carriedOver(state, push, cache, before, responses) : undefined) ?? build(responses)
  // A set naming what does not exist is no proxy's common configuration (and its names are
  // whatever the caller chose): it is not kept for others, nor is a set over the bound.
  if (built.notFound.length > 0 || !admitShared(state, push, key.length))
    return { ...built, responses: undefined, shared: false }
  sets.set(key, { ...built, shared: true })
  return { ...built, shared: false }
}

/** The same set resolved for the context `push` was derived from, if it was. */
const previousSet = (state: ResponderState, push: PushContext, kind: string, key: string) => {
  const derivation = state.derivations.get(push)
  if (derivation === undefined) return undefined
  const set = state.resolvedSets.get(derivation.previous)?.get(kind)?.get(key)
  return set === undefined ? undefined : { set, hosts: derivation.hosts }
}

/**
 * An endpoint set of a derived PushContext, from the same set of the context it was derived
 * from: only the clusters of the changed hosts are generated and looked up again. A cluster's
 * endpoints depend on its host's service, DestinationRule and endpoints, and a derived context
 * changes only the endpoints of its hosts (so no cluster appears or disappears either). Undefined
 * when that does not hold after all: the set is then resolved whole.
 */
const carriedOver = (
  state: ResponderState,
  push: PushContext,
  cache: ResourceCache,
  { set, hosts }: { readonly set: ResolvedSet; readonly hosts: ReadonlySet<string> },
  responses: SharedResponses,
): ResolvedSet | undefined => {
  const changed: Array<string> = []
  for (const r of set.resources) {
    const host = clusterHost(r.name)
    if (host === undefined || hosts.has(host)) changed.push(r.name)
  }
  // Nothing watched changed: the same resources, and so the same encoded section.
  if (changed.length === 0) return { ...set, responses }
  const byName = changedClusters(state, push, cache, changed)
  if (byName === undefined) return undefined
  const resources = set.resources.map((r) => byName.get(r.name) ?? r)
  let bytes = 0
  for (const r of resources) bytes += r.resource.value.length
  // The same clusters exist (see above): the same names are missing.
  return { resources, messages: resources.map((r) => r.resource), bytes, responses, notFound: set.notFound }
}

const digestOf = (state: ResponderState, resources: ReadonlyArray<EncodedResource>): string =>
  memoOf(state.digests, resources, () => setDigest(resources))

/**
 * The changed clusters of a derived PushContext, once per context input (`changedByContext`).
 * Undefined when one of `names` does not exist in `push`.
 */
const changedClusters = (
  state: ResponderState,
  push: PushContext,
  cache: ResourceCache,
  names: ReadonlyArray<string>,
): ReadonlyMap<string, EncodedResource> | undefined => {
  const known = memoOf(state.changedByContext, push.input, () => new Map<string, EncodedResource>())
  const missing = names.filter((name) => !known.has(name))
  if (missing.length === 0) return known
  const fresh = resourcesFor(push, cache, TypeUrl.Endpoint, { wildcard: false, names: missing })
  if (fresh.length !== missing.length) return undefined
  for (const r of fresh) known.set(r.name, r)
  return known
}

export interface SotwResponse {
  readonly response: DiscoveryResponse
  readonly digest: string
  readonly bytes: number
  /** Resources taken from a set resolved for another connection (cache reads saved). */
  readonly sharedReads: number
  /** Why each requested name without a resource has none, for `/debug/syncz` and the log. */
  readonly notFound: ReadonlyArray<string>
}

/**
 * Only the nonce is the connection's own: with `share`, resources, digest and size come from
 * the set resolved for the first connection watching the same names in this PushContext.
 */
export const sotwResponse = (
  push: PushContext,
  cache: ResourceCache,
  watch: SotwWatch,
  nonce: NonceSource,
  proxy?: ProxyInfo,
  share = true,
  changedHosts?: ReadonlySet<string>,
): SotwResponse => {
  const state = stateOf(cache)
  const set = resolvedSet(state, push, cache, watch.typeUrl, watch.wildcard, watch.names, proxy, share)
  const partial = partialEndpoints(state, watch, set.resources, proxy, changedHosts)
  if (partial !== undefined)
    return {
      response: { version_info: push.version, type_url: watch.typeUrl, nonce: nonceOf(nonce), resources: partial },
      // The digest of the whole set: what the proxy holds once it applied the partial response.
      digest: digestOf(state, set.resources),
      bytes: partial.reduce((n, r) => n + r.value.length, 0),
      sharedReads: set.shared ? partial.length : 0,
      notFound: set.notFound,
    }
  const build = (nonce: string): DiscoveryResponse => ({
    version_info: push.version,
    type_url: watch.typeUrl,
    nonce,
    resources: set.messages,
  })
  let response: DiscoveryResponse
  if (typeof nonce === "string" || set.responses === undefined) response = build(nonceOf(nonce))
  else {
    response = set.responses.sotw ?? build(nonce())
    set.responses.sotw = response
  }
  return {
    response,
    digest: digestOf(state, set.resources),
    bytes: set.bytes,
    sharedReads: set.shared ? set.resources.length : 0,
    notFound: set.notFound,
  }
}

/**
 * An endpoint push to a data-plane proxy that already holds its endpoint set sends only the
 * clusters of the changed hosts: EDS is a named type, whose SotW responses may leave resources
 * out (the proxy keeps them), so a change of one service costs each proxy that service's
 * endpoints, not the thousands of clusters it watches. Undefined: send the whole set.
 */
const partialEndpoints = (
  state: ResponderState,
  watch: SotwWatch,
  resources: ReadonlyArray<EncodedResource>,
  proxy: ProxyInfo | undefined,
  changedHosts: ReadonlySet<string> | undefined,
): ReadonlyArray<AnyMessage> | undefined => {
  if (changedHosts === undefined || proxy?.view === undefined || watch.typeUrl !== TypeUrl.Endpoint) return undefined
  // Only on top of a set the proxy took: after a NACK or before the first ACK it gets it whole.
  if (watch.digestSent === undefined || watch.versionAcked !== watch.versionSent || watch.lastError !== undefined)
    return undefined
  const byHosts = memoOf(state.partialSets, resources, () => new WeakMap())
  let changed = byHosts.get(changedHosts)
  if (changed === undefined) {
    changed = changedResources(resources, changedHosts)
    byHosts.set(changedHosts, changed)
  }
  return changed ?? undefined
}

/** The resources of `hosts`' clusters; null when there are none or a name is not a cluster's. */
const changedResources = (
  resources: ReadonlyArray<EncodedResource>,
  hosts: ReadonlySet<string>,
): ReadonlyArray<AnyMessage> | null => {
  const changed: Array<AnyMessage> = []
  for (const r of resources) {
    const host = clusterHost(r.name)
    if (host === undefined) return null
    if (hosts.has(host)) changed.push(r.resource)
  }
  return changed.length > 0 ? changed : null
}

/**
 * The delta `Resource` entry of a cache entry, one object per entry: every connection sent the
 * resource gets the same object, so its encoding is shared (response-encoding.ts).
 */
export const deltaEntry = (cache: ResourceCache, r: EncodedResource): DeltaResource => entryOf(stateOf(cache), r)
const entryOf = (state: ResponderState, r: EncodedResource): DeltaResource =>
  memoOf(state.deltaEntries, r, () => ({ name: r.name, version: r.version, resource: r.resource }))

export interface DeltaResponse {
  /** Undefined when nothing changed for this watch. */
  readonly response: DeltaDiscoveryResponse | undefined
  readonly sent: ReadonlyArray<{ readonly name: string; readonly version: string }>
  readonly removed: ReadonlyArray<string>
  readonly bytes: number
  /** Resources taken from a set resolved for another connection (cache reads saved). */
  readonly sharedReads: number
  /** Why each subscribed name without a resource has none, for `/debug/syncz` and the log. */
  readonly notFound: ReadonlyArray<string>
}

export const deltaResponse = (
  push: PushContext,
  cache: ResourceCache,
  watch: DeltaWatch,
  nonce: NonceSource,
  force: boolean,
  proxy?: ProxyInfo,
  share = true,
): DeltaResponse => {
  const state = stateOf(cache)
  const names = sortedNames(state, watch.subscribed)
  const set = resolvedSet(state, push, cache, watch.typeUrl, watch.wildcard, names, proxy, share)
  const resources = set.resources
  const plan = planDelta(watch, resources)
  if (plan.send.length === 0 && plan.removed.length === 0 && !force) {
    return { response: undefined, sent: [], removed: [], bytes: 0, sharedReads: 0, notFound: set.notFound }
  }
  const sharedReads = set.shared ? resources.length : 0
  const toSend = new Set(plan.send)
  const sent = resources.filter((r) => toSend.has(r.name))
  const build = (nonce: string): DeltaPushResponse => {
    let bytes = 0
    for (const r of sent) bytes += r.resource.value.length
    return {
      response: {
        system_version_info: push.version,
        type_url: watch.typeUrl,
        nonce,
        resources: sent.map((r) => entryOf(state, r)),
        removed_resources: plan.removed,
      },
      sent: sent.map((r) => ({ name: r.name, version: r.version })),
      removed: plan.removed,
      bytes,
    }
  }
  const notFound = set.notFound
  if (typeof nonce === "string" || set.responses === undefined)
    return { ...build(nonceOf(nonce)), sharedReads, notFound }
  // What is sent and removed decides the response: connections watching different sets that
  // need the same update (an endpoint change reaching every watcher of one cluster) share it.
  const key = `${watch.typeUrl}\u0000${sent.map((r) => `${r.name} ${r.version}`).join("\n")}\u0000${plan.removed.join("\n")}`
  const responses = memoOf(state.deltaPushResponses, push, () => new Map<string, DeltaPushResponse>())
  let built = responses.get(key)
  if (built === undefined) {
    built = build(nonce())
    if (admitShared(state, push, key.length)) responses.set(key, built)
  }
  return { ...built, sharedReads, notFound }
}

export interface ProxyInfo {
  readonly id: string
  /** `grpc` for proxyless gRPC clients. */
  readonly generator: string
  readonly metadata: Readonly<Record<string, unknown>>
  /** Namespace and labels of the workload, for inbound (server) listeners. */
  readonly workload?: ProxyWorkload
  /** Sidecars and gateways (node types `sidecar` and `router` without `GENERATOR: grpc`). */
  readonly view?: ProxyView
}

const workloadOf = (proxy: ProxyInfo | undefined): { workload?: ProxyWorkload } =>
  proxy === undefined ? {} : { workload: proxy.workload ?? proxyWorkload(proxy.id, proxy.metadata) }

export const proxyInfo = (node: Node | null | undefined): ProxyInfo => {
  const metadata = structToPlain(node?.metadata)
  const generator = typeof metadata.GENERATOR === "string" ? metadata.GENERATOR : ""
  const id = node?.id ?? ""
  // Proxyless gRPC clients say so; every other sidecar or router node is a data-plane proxy.
  const view = generator === "grpc" ? undefined : proxyView(id, metadata, node?.locality)
  return { id, generator, metadata, workload: proxyWorkload(id, metadata), ...(view !== undefined ? { view } : {}) }
}
