/**
 * The VirtualServices bound to one Gateway server's Gateway, as the router sees them (the routes
 * helper decides binding, visibility and delegates, memoised per push), and their hosts as FQDNs.
 */
import { type PushContext, resolveHost } from "../../model/push-context.js"
import { gatewayVirtualServices, type VirtualServiceResource } from "../routes/index.js"

export type { VirtualServiceResource }

/** The VirtualServices bound to `gateway` (`namespace/name`) as a proxy in `proxyNamespace` sees them. */
export const virtualServicesForGateway = (
  push: PushContext,
  gateway: string,
  proxyNamespace: string,
): ReadonlyArray<VirtualServiceResource> => gatewayVirtualServices(push, [gateway], proxyNamespace)

/** A VirtualService's hosts as FQDNs (short names are relative to its namespace). */
export const virtualServiceHosts = (push: PushContext, vs: VirtualServiceResource): ReadonlyArray<string> =>
  (vs.spec.hosts ?? []).map((h) => resolveHost(h, vs.meta.namespace, push.options.domainSuffix).toLowerCase())
