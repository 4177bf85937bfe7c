/**
 * PushContext: an immutable snapshot of everything a push reads — services, endpoints,
 * VirtualServices and DestinationRules — indexed by host, with a fingerprint of each host's
 * inputs. Generated resources are cached under the fingerprints they depend on, so a resource
 * whose inputs did not change between pushes is neither regenerated nor re-encoded.
 */
import { createHash } from "node:crypto"
import type { AmbientInput } from "../../ambient/input.js"
import type { ConfigResource } from "../../config-model/resource.js"
import type { AuthorizationPolicySpec } from "../../config-model/schemas/authorization-policy.js"
import type { DestinationRuleSpec } from "../../config-model/schemas/destination-rule.js"
import type { EnvoyFilterSpec } from "../../config-model/schemas/envoy-filter.js"
import type { GatewaySpec } from "../../config-model/schemas/gateway.js"
import type { PeerAuthenticationSpec } from "../../config-model/schemas/peer-authentication.js"
import type { RequestAuthenticationSpec } from "../../config-model/schemas/request-authentication.js"
import type { SidecarSpec } from "../../config-model/schemas/sidecar.js"
import type { TelemetrySpec } from "../../config-model/schemas/telemetry.js"
import type { VirtualServiceSpec } from "../../config-model/schemas/virtual-service.js"
import type { WasmPluginSpec } from "../../config-model/schemas/wasm-plugin.js"
import type { Credential } from "../../credentials/credential.js"
import { defaultExtensionProviders, type ExtensionProvider } from "../../mesh-config/extension-providers.js"
import type { Endpoint, Service } from "../../registry/model.js"
import { type AuthorizationPolicyView, authorizationPolicyView } from "./authorization-policy-view.js"
import type { JwksInput } from "./jwks-input.js"
import { type Locals, makeLocals } from "./local-slot.js"
import { replacedRun } from "./replaced-run.js"
import { hostsRoutingTo, wildcardCovers } from "./routing-hosts.js"
import {
  type DestinationRuleView,
  destinationRuleView,
  type PeerAuthenticationView,
  peerAuthenticationView,
  type VirtualServiceView,
  virtualServiceView,
} from "./views.js"

/** What the lead's stores hand to the push pipeline. */
export interface PushContextInput {
  readonly services: ReadonlyArray<Service>
  readonly endpoints: ReadonlyArray<Endpoint>
  readonly virtualServices: ReadonlyArray<ConfigResource<VirtualServiceSpec>>
  readonly destinationRules: ReadonlyArray<ConfigResource<DestinationRuleSpec>>
  /** PeerAuthentications, for auto mTLS toward STRICT workloads. */
  readonly peerAuthentications: ReadonlyArray<ConfigResource<PeerAuthenticationSpec>>
  /** AuthorizationPolicies, for the RBAC filters of gRPC servers' inbound listeners. */
  readonly authorizationPolicies?: ReadonlyArray<ConfigResource<AuthorizationPolicySpec>>
  /**
   * What only proxy (sidecar and gateway) generators read; proxyless gRPC clients get none of it.
   * A change to any of these is a full push (`changedHosts`).
   */
  readonly proxyConfig?: ProxyConfigInput
  /**
   * RequestAuthentication key sets the control plane fetched (`PILOT_JWT_ENABLE_REMOTE_JWKS`),
   * inlined by the sidecar generator; absent: proxies fetch their own. A new `resolved` map is
   * made only when a key set changed, so it is compared by identity.
   */
  readonly jwks?: JwksInput
  /**
   * What the node proxy's workload API reads beyond the above (pods, namespaces, waypoints,
   * WorkloadEntries): present with `PILOT_ENABLE_AMBIENT` only. A new object on every change.
   */
  readonly ambient?: AmbientInput
}

/** The config kinds only the proxy generators read. */
export interface ProxyConfigInput {
  readonly gateways: ReadonlyArray<ConfigResource<GatewaySpec>>
  readonly sidecars: ReadonlyArray<ConfigResource<SidecarSpec>>
  readonly envoyFilters: ReadonlyArray<ConfigResource<EnvoyFilterSpec>>
  readonly requestAuthentications: ReadonlyArray<ConfigResource<RequestAuthenticationSpec>>
  readonly telemetries: ReadonlyArray<ConfigResource<TelemetrySpec>>
  readonly wasmPlugins: ReadonlyArray<ConfigResource<WasmPluginSpec>>
  /** Gateway and DestinationRule credentials (TLS Secrets), served over SDS by name; absent: none. */
  readonly credentials?: ReadonlyArray<Credential>
}

export const emptyProxyConfigInput: ProxyConfigInput = {
  gateways: [],
  sidecars: [],
  envoyFilters: [],
  requestAuthentications: [],
  telemetries: [],
  wasmPlugins: [],
}

export const emptyPushContextInput: PushContextInput = {
  services: [],
  endpoints: [],
  virtualServices: [],
  destinationRules: [],
  peerAuthentications: [],
  authorizationPolicies: [],
}

export interface PushContextOptions {
  /** DNS domain suffix (`--domain`), for short VirtualService hosts. */
  readonly domainSuffix: string
  /** `PILOT_DRAINING_LABEL`; empty disables. */
  readonly drainingLabel: string
  /** `PILOT_SEND_UNHEALTHY_ENDPOINTS`. */
  readonly sendUnhealthyEndpoints: boolean
  /** Mesh config `enableAutoMtls`: mutual TLS toward STRICT workloads without a DestinationRule TLS setting. */
  readonly enableAutoMtls: boolean
  /** Mesh config `trustDomain`, for the SPIFFE identities a client expects of a destination. */
  readonly trustDomain: string
  /** Mesh config `rootNamespace`: PeerAuthentications there without a selector are mesh-wide. */
  readonly rootNamespace: string
  /** What only the proxy (sidecar and gateway) generators read. */
  readonly proxy: ProxyGenOptions
}

/** The mesh config fields and environment variables of the proxy generators (spec 000 §4.3). */
export interface ProxyGenOptions {
  /** Mesh config `outboundTrafficPolicy.mode`: unknown destinations pass through or are dropped. */
  readonly outboundTrafficPolicy: "ALLOW_ANY" | "REGISTRY_ONLY"
  /** Mesh config `defaultServiceExportTo` (`*` when unset). */
  readonly defaultServiceExportTo: ReadonlyArray<string>
  /** Mesh config `defaultVirtualServiceExportTo`. */
  readonly defaultVirtualServiceExportTo: ReadonlyArray<string>
  /** Mesh config `defaultDestinationRuleExportTo`. */
  readonly defaultDestinationRuleExportTo: ReadonlyArray<string>
  /** Mesh config `accessLogFile`; empty: no access log unless a Telemetry asks for one. */
  readonly accessLogFile: string
  /** Mesh config `accessLogEncoding` (TEXT or JSON). */
  readonly accessLogEncoding: "TEXT" | "JSON"
  /** Mesh config `enableTracing`. */
  readonly enableTracing: boolean
  /** `PILOT_TRACE_SAMPLING`: percent, 0–100. */
  readonly traceSampling: number
  /** `PILOT_ENABLE_ALPN_FILTER`. */
  readonly enableAlpnFilter: boolean
  /** `PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION`. */
  readonly enableRouteCollapse: boolean
  /** `ENABLE_AUTO_SNI`. */
  readonly enableAutoSni: boolean
  /** `PILOT_FILTER_GATEWAY_CLUSTER_CONFIG`. */
  readonly filterGatewayClusterConfig: boolean
  /** `PILOT_SCOPE_GATEWAY_TO_NAMESPACE`. */
  readonly scopeGatewayToNamespace: boolean
  /** Mesh config `connectTimeout`, milliseconds (a number: options are compared as JSON) (default 10 s). */
  readonly connectTimeoutMs: number
  /** Mesh config `protocolDetectionTimeout`, milliseconds (0 disables the timeout). */
  readonly protocolDetectionTimeoutMs: number
  /** `PILOT_HTTP10`: outbound and gateway HTTP listeners accept HTTP/1.0 (a proxy's `HTTP10=1` metadata does for it alone). */
  readonly http10: boolean
  /** Mesh config `extensionProviders`, parsed once (ext_authz, access log and tracing providers). */
  readonly extensionProviders: ReadonlyArray<ExtensionProvider>
}

export const defaultProxyGenOptions: ProxyGenOptions = {
  outboundTrafficPolicy: "ALLOW_ANY",
  defaultServiceExportTo: ["*"],
  defaultVirtualServiceExportTo: ["*"],
  defaultDestinationRuleExportTo: ["*"],
  accessLogFile: "",
  accessLogEncoding: "TEXT",
  enableTracing: true,
  traceSampling: 1,
  enableAlpnFilter: true,
  enableRouteCollapse: true,
  enableAutoSni: true,
  filterGatewayClusterConfig: false,
  scopeGatewayToNamespace: false,
  connectTimeoutMs: 10_000,
  protocolDetectionTimeoutMs: 0,
  http10: false,
  extensionProviders: defaultExtensionProviders,
}

export const defaultPushContextOptions: PushContextOptions = {
  domainSuffix: "cluster.local",
  drainingLabel: "mesh.io/draining",
  sendUnhealthyEndpoints: false,
  enableAutoMtls: true,
  trustDomain: "cluster.local",
  rootNamespace: "mesh-system",
  proxy: defaultProxyGenOptions,
}

export interface PushContext {
  readonly version: string
  readonly input: PushContextInput
  readonly options: PushContextOptions
  readonly services: ReadonlyArray<Service>
  readonly serviceByHost: ReadonlyMap<string, Service>
  readonly endpointsByHost: ReadonlyMap<string, ReadonlyArray<Endpoint>>
  readonly virtualServiceByHost: ReadonlyMap<string, VirtualServiceView>
  readonly destinationRuleByHost: ReadonlyMap<string, DestinationRuleView>
  /** PeerAuthentications, oldest first. */
  readonly peerAuthentications: ReadonlyArray<PeerAuthenticationView>
  /** AuthorizationPolicies, oldest first. */
  readonly authorizationPolicies: ReadonlyArray<AuthorizationPolicyView>
  /** What only the proxy generators read, each kind oldest first. */
  readonly proxyConfig: ProxyConfigInput
  /** Fingerprint of one input facet of a host (memoised). */
  readonly fingerprint: (facet: "service" | "endpoints" | "vs" | "dr", host: string) => string
  /** What this context derived from its inputs, shared with the contexts built from it. */
  readonly memo: PushContextMemo
  /**
   * This context's own state in a slot (`local-slot.ts`): the generators' per-push memos (scopes,
   * plans, indexes) live here and go with the context; a context derived from this one starts
   * with none.
   */
  readonly local: Locals<PushContext>
}

/**
 * What a PushContext derives from its immutable inputs, remembered per input object: the view of
 * each resource and the fingerprint of each host's sources. The config store and the registry
 * hand unchanged resources and services over as the same objects, so a context built from a
 * `previous` one shares its memo and a rebuild after a one-file change derives only the
 * resources of that file. A cache, not state: every value is a pure function of its key, and
 * the entries go with their keys. Contexts built without a `previous` start a memo of their
 * own: two servers in one process share nothing.
 */
export interface PushContextMemo {
  readonly virtualServices: WeakMap<ConfigResource<VirtualServiceSpec>, VirtualServiceView>
  readonly destinationRules: WeakMap<ConfigResource<DestinationRuleSpec>, DestinationRuleView>
  readonly peerAuthentications: WeakMap<ConfigResource<PeerAuthenticationSpec>, PeerAuthenticationView>
  readonly authorizationPolicies: WeakMap<ConfigResource<AuthorizationPolicySpec>, AuthorizationPolicyView>
  /** By source object (a service, a host's endpoint list, a view): a derived context shares them. */
  readonly fingerprints: WeakMap<object, string>
  /**
   * The generators' memos over input objects (a Service, a config resource), in slots: shared
   * like the views, so each value must be a function of its key and of the context's options
   * only (a lineage of contexts keeps its options).
   */
  readonly local: Locals
}

const makeMemo = (): PushContextMemo => ({
  virtualServices: new WeakMap(),
  destinationRules: new WeakMap(),
  peerAuthentications: new WeakMap(),
  authorizationPolicies: new WeakMap(),
  fingerprints: new WeakMap(),
  local: makeLocals(),
})

export const digest = (text: string | Uint8Array): string =>
  createHash("sha1").update(text).digest("base64url").slice(0, 16)

/**
 * A VirtualService/DestinationRule host as an FQDN, by the reference's short-name rule: a name
 * without a dot is `<name>.<namespace>.svc.<domain>`; a name with a dot, a wildcard or an IP
 * literal (IPv6 has no dot) is taken as written. Nothing is guessed beyond that: `a.default`
 * stays `a.default`.
 */
export const resolveHost = (host: string, namespace: string, domainSuffix: string): string =>
  host === "" || host.includes(".") || host.includes("*") || host.includes(":")
    ? host
    : `${host}.${namespace}.svc.${domainSuffix}`

/**
 * The service a VirtualService destination names: the registry's service of exactly the host the
 * short-name rule gives (the reference's lookup). No prefix or suffix guessing: a destination `a`
 * never reaches `a.example.com`; an unknown host routes to a cluster nothing defines.
 */
export const destinationServiceOf = (push: PushContext, host: string, namespace: string): Service | undefined =>
  push.serviceByHost.get(resolveHost(host, namespace, push.options.domainSuffix))

/** Oldest first, then by namespace/name: the reference's order for conflicting resources. */
export const byAge = (a: ConfigResource, b: ConfigResource): number => {
  const ta = a.meta.creationTimestamp ?? ""
  const tb = b.meta.creationTimestamp ?? ""
  if (ta !== tb) return ta < tb ? -1 : 1
  const ka = `${a.meta.namespace}/${a.meta.name}`
  const kb = `${b.meta.namespace}/${b.meta.name}`
  return ka < kb ? -1 : ka > kb ? 1 : 0
}

const jsonOf = (value: unknown): string =>
  JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v)) ?? ""

/** The view of `resource`, derived once per resource object (see PushContextMemo). */
const viewOf = <S, V>(
  views: WeakMap<ConfigResource<S>, V>,
  resource: ConfigResource<S>,
  derive: (meta: ConfigResource["meta"], spec: S) => V,
): V => {
  let view = views.get(resource)
  if (view === undefined) {
    view = derive(resource.meta, resource.spec)
    views.set(resource, view)
  }
  return view
}

const fingerprintOf =
  (
    fingerprints: WeakMap<object, string>,
    serviceByHost: ReadonlyMap<string, Service>,
    endpointsByHost: ReadonlyMap<string, ReadonlyArray<Endpoint>>,
    virtualServiceByHost: ReadonlyMap<string, VirtualServiceView>,
    destinationRuleByHost: ReadonlyMap<string, DestinationRuleView>,
  ) =>
  (facet: "service" | "endpoints" | "vs" | "dr", host: string): string => {
    const source: object | undefined =
      facet === "service"
        ? serviceByHost.get(host)
        : facet === "endpoints"
          ? endpointsByHost.get(host)
          : facet === "vs"
            ? virtualServiceByHost.get(host)
            : destinationRuleByHost.get(host)
    if (source === undefined) return "-"
    let value = fingerprints.get(source)
    if (value === undefined) {
      value = digest(jsonOf(source))
      fingerprints.set(source, value)
    }
    return value
  }

/**
 * The PushContext of `input`. With `previous` (the context it replaces), the views and
 * fingerprints of inputs handed over unchanged are taken from it, not derived again; `previous`
 * is left as it was.
 */
export const makePushContext = (
  input: PushContextInput,
  options: PushContextOptions = defaultPushContextOptions,
  version = "1",
  previous?: PushContext,
): PushContext => {
  const memo = previous?.memo ?? makeMemo()
  const serviceByHost = new Map<string, Service>()
  for (const service of input.services)
    if (!serviceByHost.has(service.hostname)) serviceByHost.set(service.hostname, service)
  const services = [...serviceByHost.values()].sort((a, b) => (a.hostname < b.hostname ? -1 : 1))

  const endpointsByHost = new Map<string, Array<Endpoint>>()
  for (const endpoint of input.endpoints) {
    const list = endpointsByHost.get(endpoint.hostname)
    if (list === undefined) endpointsByHost.set(endpoint.hostname, [endpoint])
    else list.push(endpoint)
  }

  // The oldest VirtualService / DestinationRule for a host wins (reference conflict rule).
  const virtualServiceByHost = new Map<string, VirtualServiceView>()
  for (const resource of [...input.virtualServices].sort(byAge)) {
    // Proxyless clients are mesh workloads: a VirtualService bound only to gateways (a
    // Gateway-API route's, or the user's) is not theirs.
    if (!appliesToMesh(resource)) continue
    const view = viewOf(memo.virtualServices, resource, virtualServiceView)
    for (const host of view.hosts) {
      const fqdn = resolveHost(host, view.namespace, options.domainSuffix)
      if (!virtualServiceByHost.has(fqdn)) virtualServiceByHost.set(fqdn, view)
    }
  }
  const destinationRuleByHost = new Map<string, DestinationRuleView>()
  for (const resource of [...input.destinationRules].sort(byAge)) {
    const view = viewOf(memo.destinationRules, resource, destinationRuleView)
    if (view.host === "") continue
    const fqdn = resolveHost(view.host, view.namespace, options.domainSuffix)
    if (!destinationRuleByHost.has(fqdn)) destinationRuleByHost.set(fqdn, view)
  }

  const peerAuthentications = [...(input.peerAuthentications ?? [])]
    .sort(byAge)
    .map((resource) => viewOf(memo.peerAuthentications, resource, peerAuthenticationView))

  const authorizationPolicies = [...(input.authorizationPolicies ?? [])]
    .sort(byAge)
    .map((resource) => viewOf(memo.authorizationPolicies, resource, authorizationPolicyView))

  const proxyConfig = sortedProxyConfig(input.proxyConfig)

  const fingerprint = fingerprintOf(
    memo.fingerprints,
    serviceByHost,
    endpointsByHost,
    virtualServiceByHost,
    destinationRuleByHost,
  )

  const context: PushContext = {
    version,
    input,
    options,
    services,
    serviceByHost,
    endpointsByHost,
    virtualServiceByHost,
    destinationRuleByHost,
    peerAuthentications,
    authorizationPolicies,
    proxyConfig,
    fingerprint,
    memo,
    local: makeLocals(() => context),
  }
  return context
}

/** Whether a VirtualService binds the mesh's own workloads: no `gateways`, or `mesh` among them. */
const appliesToMesh = (resource: ConfigResource<VirtualServiceSpec>): boolean => {
  const gateways = resource.spec.gateways ?? []
  return gateways.length === 0 || gateways.includes("mesh")
}

const sortedProxyConfig = (input: ProxyConfigInput | undefined): ProxyConfigInput =>
  input === undefined
    ? emptyProxyConfigInput
    : {
        gateways: [...input.gateways].sort(byAge),
        sidecars: [...input.sidecars].sort(byAge),
        envoyFilters: [...input.envoyFilters].sort(byAge),
        requestAuthentications: [...input.requestAuthentications].sort(byAge),
        telemetries: [...input.telemetries].sort(byAge),
        wasmPlugins: [...input.wasmPlugins].sort(byAge),
        ...(input.credentials !== undefined ? { credentials: input.credentials } : {}),
      }

/** Whether two inputs' proxy-only config may differ (compared by content when not the same objects). */
const proxyConfigDiffers = (before: PushContext, after: PushContext): boolean => {
  const a = before.input.proxyConfig
  const b = after.input.proxyConfig
  if (a === b) return false
  if (a === undefined || b === undefined) return true
  const kinds = [...Object.keys(emptyProxyConfigInput), "credentials"] as ReadonlyArray<keyof ProxyConfigInput>
  return kinds.some((kind) => a[kind] !== b[kind] && jsonOf(a[kind]) !== jsonOf(b[kind]))
}

/** The endpoints of `hosts` in `endpoints`, grouped by host in their order. */
const groupByHost = (
  endpoints: ReadonlyArray<Endpoint>,
  hosts: ReadonlySet<string>,
): ReadonlyMap<string, ReadonlyArray<Endpoint>> => {
  const fresh = new Map<string, Array<Endpoint>>()
  for (const endpoint of endpoints) {
    if (!hosts.has(endpoint.hostname)) continue
    const list = fresh.get(endpoint.hostname)
    if (list === undefined) fresh.set(endpoint.hostname, [endpoint])
    else list.push(endpoint)
  }
  return fresh
}

/**
 * `groupByHost(after, hosts)` without reading every endpoint, when `after` is `before` with a
 * run of endpoints replaced (what the registry hands over when a service's endpoints change: the
 * same objects at the same places around the change). Each host's list in `before` (`lists`) is
 * its endpoints of the common start, of the replaced run, then of the common end; the new list
 * swaps the run's part. Undefined (scan instead) when that cannot be told from the lists alone:
 * a host gains endpoints where it had none in the run but had some elsewhere, or its run part is
 * not found once, in one piece, in its list.
 */
export const replacedInPlace = (
  lists: ReadonlyMap<string, ReadonlyArray<Endpoint>>,
  before: ReadonlyArray<Endpoint>,
  after: ReadonlyArray<Endpoint>,
  hosts: ReadonlySet<string>,
): ReadonlyMap<string, ReadonlyArray<Endpoint>> | undefined => {
  const run = replacedRun(before, after)
  const removed = groupByHost(run.removed, hosts)
  const added = groupByHost(run.added, hosts)
  const fresh = new Map<string, ReadonlyArray<Endpoint>>()
  for (const host of hosts) {
    const old = lists.get(host) ?? []
    const out = removed.get(host) ?? []
    const into = added.get(host) ?? []
    if (out.length === 0) {
      if (old.length > 0 && into.length > 0) return undefined
      if (old.length > 0) fresh.set(host, old)
      else if (into.length > 0) fresh.set(host, into)
      continue
    }
    const at = old.indexOf(out[0]!)
    if (at < 0 || old.indexOf(out[0]!, at + 1) >= 0) return undefined
    for (let i = 0; i < out.length; i++) if (old[at + i] !== out[i]) return undefined
    const list = [...old.slice(0, at), ...into, ...old.slice(at + out.length)]
    if (list.length > 0) fresh.set(host, list)
  }
  return fresh
}

/**
 * The PushContext of `input` when it differs from `previous.input` only in the endpoints of
 * `hosts` (hostnames; the caller vouches for that, e.g. from the endpoint-only push requests
 * merged since `previous` was built): every other view and index is shared with `previous`,
 * and only the endpoint groups of `hosts` are rebuilt. Equal to `makePushContext(input, ...)`
 * but for the order of `endpointsByHost` entries of hosts that appeared. `previous` is left as
 * it was: connections still pushing from it keep a consistent snapshot.
 */
export const derivePushContext = (
  previous: PushContext,
  input: PushContextInput,
  hosts: ReadonlySet<string>,
  version: string,
): PushContext => {
  const fresh =
    replacedInPlace(previous.endpointsByHost, previous.input.endpoints, input.endpoints, hosts) ??
    groupByHost(input.endpoints, hosts)
  const endpointsByHost = new Map(previous.endpointsByHost)
  for (const host of hosts) {
    const list = fresh.get(host)
    if (list === undefined) endpointsByHost.delete(host)
    else endpointsByHost.set(host, list)
  }
  const fingerprint = fingerprintOf(
    previous.memo.fingerprints,
    previous.serviceByHost,
    endpointsByHost,
    previous.virtualServiceByHost,
    previous.destinationRuleByHost,
  )
  // The changed hosts' endpoint fingerprints are the first thing a push reads (the cache keys
  // of their clusters): taken now, when an endpoint event derives the next context ahead of the
  // push, they are off the push's path.
  for (const host of hosts) fingerprint("endpoints", host)
  const context: PushContext = {
    ...previous,
    version,
    input,
    endpointsByHost,
    fingerprint,
    local: makeLocals(() => context),
  }
  return context
}

/**
 * Finds the service a `host:port` listener name (or a VirtualService destination) refers to:
 * the exact host, `name.namespace` (+`.svc`) completed with the domain suffix, or a unique short name.
 */
export const lookupService = (push: PushContext, host: string): Service | undefined => {
  const exact = push.serviceByHost.get(host)
  if (exact !== undefined) return exact
  const suffix = push.options.domainSuffix
  const completed = push.serviceByHost.get(`${host}.svc.${suffix}`) ?? push.serviceByHost.get(`${host}.${suffix}`)
  if (completed !== undefined) return completed
  if (!host.includes(".")) {
    const matches = push.services.filter((s) => s.hostname.startsWith(`${host}.`))
    if (matches.length === 1) return matches[0]
  }
  return undefined
}

/** Splits a `host:port` name; undefined when it is not of that form. */
export const splitHostPort = (name: string): { readonly host: string; readonly port: number } | undefined => {
  const colon = name.lastIndexOf(":")
  if (colon <= 0) return undefined
  const port = Number(name.slice(colon + 1))
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return undefined
  return { host: name.slice(0, colon), port }
}

/**
 * The pseudo-host of every inbound (server) listener: their bytes read PeerAuthentications and
 * AuthorizationPolicies, which belong to no service host.
 */
export const INBOUND_HOST = "inbound|"

/** Listener names gRPC servers request (`server_listener_resource_name_template` + `ip:port`). */
export const INBOUND_LISTENER_PREFIXES = ["xds.mesh.io/grpc/lds/inbound/", "xds.istio.io/grpc/lds/inbound/"] as const

export const isInboundListenerName = (name: string): boolean =>
  INBOUND_LISTENER_PREFIXES.some((prefix) => name.startsWith(prefix))

/**
 * Hosts whose generated resources may differ between two PushContexts: hosts with a changed
 * service, endpoints, VirtualService or DestinationRule (a wildcard rule's: every service it
 * covers), plus hosts whose VirtualService (or a delegate of it) routes to a host whose service
 * or DestinationRule changed. Different options mean everything may differ (undefined).
 */
export const changedHosts = (before: PushContext, after: PushContext): ReadonlySet<string> | undefined => {
  if (JSON.stringify(before.options) !== JSON.stringify(after.options)) return undefined
  // A PeerAuthentication may change the TLS of any cluster.
  if (
    before.input.peerAuthentications !== after.input.peerAuthentications &&
    JSON.stringify(before.peerAuthentications) !== JSON.stringify(after.peerAuthentications)
  )
    return undefined
  // Gateways, Sidecars, EnvoyFilters, ... may change any proxy resource.
  if (proxyConfigDiffers(before, after)) return undefined
  if (before.input.jwks?.resolved !== after.input.jwks?.resolved || before.input.jwks?.mode !== after.input.jwks?.mode)
    return undefined
  // The workload API is one wildcard set: any change may touch any of it.
  if (before.input.ambient !== after.input.ambient) return undefined
  const hosts = new Set<string>([
    ...before.serviceByHost.keys(),
    ...after.serviceByHost.keys(),
    ...before.endpointsByHost.keys(),
    ...after.endpointsByHost.keys(),
    ...before.virtualServiceByHost.keys(),
    ...after.virtualServiceByHost.keys(),
    ...before.destinationRuleByHost.keys(),
    ...after.destinationRuleByHost.keys(),
  ])
  const changed = new Set<string>()
  // AuthorizationPolicies are read only by inbound listeners.
  if (
    before.input.authorizationPolicies !== after.input.authorizationPolicies &&
    JSON.stringify(before.authorizationPolicies) !== JSON.stringify(after.authorizationPolicies)
  )
    changed.add(INBOUND_HOST)
  const servicesChanged = new Set<string>()
  const rulesChanged = new Set<string>()
  // Inputs handed over unchanged (same array) cannot differ: skip fingerprinting them.
  const same = {
    service: before.input.services === after.input.services,
    endpoints: before.input.endpoints === after.input.endpoints,
    vs: before.input.virtualServices === after.input.virtualServices,
    dr: before.input.destinationRules === after.input.destinationRules,
  }
  const differs = (facet: "service" | "endpoints" | "vs" | "dr", host: string) =>
    !same[facet] && before.fingerprint(facet, host) !== after.fingerprint(facet, host)
  for (const host of hosts) {
    if (differs("service", host)) {
      changed.add(host)
      servicesChanged.add(host)
    }
    if (differs("dr", host)) {
      changed.add(host)
      rulesChanged.add(host)
    }
    if (!changed.has(host) && (differs("endpoints", host) || differs("vs", host))) changed.add(host)
  }
  // The views above hold what proxyless clients read; proxies read every field of the raw
  // resources, and every resource of a host (not only the one a view is built from).
  if (!same.vs) for (const host of changedResourceHosts(before, after, "virtualServices")) changed.add(host)
  if (!same.dr)
    for (const host of changedResourceHosts(before, after, "destinationRules")) {
      changed.add(host)
      rulesChanged.add(host)
    }
  // A rule for a wildcard host is the rule of every service it covers (their clusters, and the
  // hash keys of the routes to them).
  const wildcards = [...rulesChanged].filter((host) => host.includes("*"))
  if (wildcards.length > 0)
    for (const push of [before, after])
      for (const service of push.services)
        if (wildcards.some((w) => wildcardCovers(w, service.hostname))) {
          changed.add(service.hostname)
          rulesChanged.add(service.hostname)
        }
  // Routes read their destinations' services (cluster ports) and rules (hash keys).
  const targets = new Set([...servicesChanged, ...rulesChanged])
  if (targets.size > 0)
    for (const push of [before, after]) {
      const resolve = (host: string, namespace: string) => resolveHost(host, namespace, push.options.domainSuffix)
      const routesTo = (dest: string) => targets.has(lookupService(push, dest)?.hostname ?? dest)
      for (const host of hostsRoutingTo(push.input.virtualServices, resolve, routesTo)) changed.add(host)
    }
  return changed
}

/**
 * The hosts of the VirtualServices or DestinationRules added, removed or changed between two
 * contexts, each resource compared by its spec's digest (remembered per resource object).
 */
const changedResourceHosts = (
  before: PushContext,
  after: PushContext,
  kind: "virtualServices" | "destinationRules",
): ReadonlySet<string> => {
  const specDigest = (resource: ConfigResource): string => {
    let value = after.memo.fingerprints.get(resource)
    if (value === undefined) {
      value = digest(jsonOf(resource.spec))
      after.memo.fingerprints.set(resource, value)
    }
    return value
  }
  const index = (push: PushContext) =>
    new Map<string, ConfigResource>(
      (push.input[kind] as ReadonlyArray<ConfigResource>).map((r) => [`${r.meta.namespace}/${r.meta.name}`, r]),
    )
  const hostsOf = (push: PushContext, resource: ConfigResource): ReadonlyArray<string> => {
    const spec = resource.spec as { readonly hosts?: ReadonlyArray<string>; readonly host?: string }
    const hosts = kind === "virtualServices" ? (spec.hosts ?? []) : spec.host !== undefined ? [spec.host] : []
    return hosts.map((h) => resolveHost(h, resource.meta.namespace, push.options.domainSuffix))
  }
  const a = index(before)
  const b = index(after)
  const hosts = new Set<string>()
  for (const [key, resource] of a) {
    const other = b.get(key)
    if (other === resource) continue
    if (other === undefined || specDigest(other) !== specDigest(resource)) {
      for (const h of hostsOf(before, resource)) hosts.add(h)
      if (other !== undefined) for (const h of hostsOf(after, other)) hosts.add(h)
    }
  }
  for (const [key, resource] of b) if (!a.has(key)) for (const h of hostsOf(after, resource)) hosts.add(h)
  return hosts
}

/** The service host a watched resource name refers to (cluster or `host:port` names). */
export const hostOfResourceName = (push: PushContext, name: string): string | undefined => {
  if (name.startsWith("outbound|")) return name.split("|")[3]
  if (isInboundListenerName(name)) return INBOUND_HOST
  const hp = splitHostPort(name)
  if (hp === undefined) return undefined
  return lookupService(push, hp.host)?.hostname ?? hp.host
}
