/**
 * What a proxy can see: the services exported to its namespace (`exportTo`, mesh config
 * `defaultServiceExportTo`), narrowed by the Sidecar resource that applies to it (egress hosts).
 * Outbound listeners, routes and clusters are built from the scope, never from every service.
 * A scope depends on the proxy's namespace and labels only, so it is built once per push for
 * every proxy of the same workload (memoised by `ProxyView.scopeKey`).
 */
import type { ConfigResource } from "../../config-model/resource.js"
import type { SidecarSpec } from "../../config-model/schemas/sidecar.js"
import type { Service } from "../../registry/model.js"
import type { LocalSlot } from "../model/local-slot.js"
import type { PushContext } from "../model/push-context.js"
import type { ProxyView } from "./proxy-view.js"

/** One Sidecar egress listener, parsed: which port (0 = all) and which `namespace/host` pairs. */
export interface EgressScope {
  readonly port: number
  readonly hosts: ReadonlyArray<{ readonly namespace: string; readonly host: string }>
}

export interface ProxyScope {
  /** The Sidecar resource applying to the proxy, when one does. */
  readonly sidecar?: ConfigResource<SidecarSpec>
  /** The services the proxy sees, by hostname. */
  readonly services: ReadonlyArray<Service>
  readonly serviceByHost: ReadonlyMap<string, Service>
  /** The egress listeners of the Sidecar; one catch-all (every namespace, every host) without one. */
  readonly egress: ReadonlyArray<EgressScope>
  /** Identifies the scope's content: resources built from the scope depend on it. */
  readonly key: string
}

export const matchesLabels = (
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>>,
): boolean => {
  if (selector === undefined) return true
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false
  return true
}

/** Whether a service exported to `exportTo` (empty: the mesh default) is visible from `namespace`. */
export const exportedTo = (
  exportTo: ReadonlyArray<string>,
  owner: string,
  namespace: string,
  defaults: ReadonlyArray<string>,
): boolean => {
  const targets = exportTo.length > 0 ? exportTo : defaults.length > 0 ? defaults : ["*"]
  for (const target of targets) {
    if (target === "*") return true
    if (target === "." && owner === namespace) return true
    if (target === namespace) return true
  }
  return false
}

/** `*.example.com` matches `a.example.com`; `*` matches everything; else exact. */
export const hostMatches = (pattern: string, host: string): boolean =>
  pattern === "*" || pattern === host || (pattern.startsWith("*.") && host.endsWith(pattern.slice(1)))

/**
 * The Sidecar applying to a proxy: the oldest one in its namespace whose workload selector
 * matches its labels, else the namespace's Sidecar without a selector, else the root namespace's.
 */
export const sidecarFor = (push: PushContext, proxy: ProxyView): ConfigResource<SidecarSpec> | undefined => {
  const sidecars = push.proxyConfig.sidecars
  const inNamespace = sidecars.filter((s) => s.meta.namespace === proxy.namespace)
  const selected = inNamespace.find((s) => {
    const selector = s.spec.workloadSelector?.labels
    return selector !== undefined && Object.keys(selector).length > 0 && matchesLabels(selector, proxy.labels)
  })
  if (selected !== undefined) return selected
  const withoutSelector = (s: ConfigResource<SidecarSpec>) =>
    s.spec.workloadSelector?.labels === undefined || Object.keys(s.spec.workloadSelector.labels).length === 0
  return (
    inNamespace.find(withoutSelector) ??
    sidecars.find((s) => s.meta.namespace === push.options.rootNamespace && withoutSelector(s))
  )
}

const parseEgress = (sidecar: ConfigResource<SidecarSpec>, proxyNamespace: string): ReadonlyArray<EgressScope> =>
  (sidecar.spec.egress ?? []).map((listener) => ({
    port: listener.port?.number ?? 0,
    hosts: listener.hosts.map((entry) => {
      const slash = entry.indexOf("/")
      const namespace = slash < 0 ? "*" : entry.slice(0, slash)
      return {
        namespace: namespace === "." ? proxyNamespace : namespace,
        host: slash < 0 ? entry : entry.slice(slash + 1),
      }
    }),
  }))

const ALL: ReadonlyArray<EgressScope> = [{ port: 0, hosts: [{ namespace: "*", host: "*" }] }]

/** Whether an egress listener lets the proxy see `service`. */
export const egressAdmits = (egress: EgressScope, service: Service): boolean =>
  egress.hosts.some(
    (h) =>
      h.namespace !== "~" &&
      (h.namespace === "*" || h.namespace === service.namespace) &&
      hostMatches(h.host, service.hostname),
  )

const scopes: LocalSlot<Map<string, ProxyScope>, PushContext> = { make: () => new Map() }

/** The scope of `proxy` in `push` (memoised per push and scope key). */
export const proxyScope = (push: PushContext, proxy: ProxyView): ProxyScope => {
  const byKey = push.local(scopes)
  const cached = byKey.get(proxy.scopeKey)
  if (cached !== undefined) return cached
  const sidecar = proxy.kind === "sidecar" ? sidecarFor(push, proxy) : undefined
  const egress =
    sidecar !== undefined && (sidecar.spec.egress?.length ?? 0) > 0 ? parseEgress(sidecar, proxy.namespace) : ALL
  const defaults = push.options.proxy.defaultServiceExportTo
  const services = push.services.filter(
    (service) =>
      exportedTo(service.exportTo, service.namespace, proxy.namespace, defaults) &&
      egress.some((e) => egressAdmits(e, service)),
  )
  const scope: ProxyScope = {
    ...(sidecar !== undefined ? { sidecar } : {}),
    services,
    serviceByHost: new Map(services.map((s) => [s.hostname, s])),
    egress,
    key:
      sidecar === undefined && egress === ALL && services.length === push.services.length
        ? "all"
        : `${sidecar?.meta.namespace ?? ""}/${sidecar?.meta.name ?? ""}/${proxy.namespace}`,
  }
  byKey.set(proxy.scopeKey, scope)
  return scope
}
