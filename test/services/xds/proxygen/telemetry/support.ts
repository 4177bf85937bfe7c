/**
 * What the telemetry, ECDS and NDS tests share: proxies, push contexts with proxy-only config,
 * and the conformance check of a resource (proto shape, validate.rules, and a round trip through
 * the server's codec).
 */
import type { KnownKind } from "../../../../../src/services/config-model/specs.js"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type ProxyConfigInput,
  type ProxyGenOptions,
  type PushContext,
  type PushContextInput,
} from "../../../../../src/services/xds/model/push-context.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { input, resource } from "../../../../fixtures/xds/mesh.js"
import { checkResource } from "../../../../support/proxygen/check.js"

export const sidecar = (
  namespace: string,
  labels: Record<string, string> = {},
  metadata: Record<string, unknown> = {},
  ip = "10.1.0.5",
): ProxyView =>
  proxyView(`sidecar~${ip}~app-1.${namespace}~${namespace}.svc.cluster.local`, {
    NAMESPACE: namespace,
    LABELS: labels,
    ...metadata,
  }) as ProxyView

export const router = (namespace: string, labels: Record<string, string> = {}): ProxyView =>
  proxyView(`router~10.1.0.9~gw-1.${namespace}~${namespace}.svc.cluster.local`, {
    NAMESPACE: namespace,
    LABELS: labels,
  }) as ProxyView

export const policy = <K extends KnownKind>(
  kind: K,
  name: string,
  spec: unknown,
  namespace = "default",
  extra: { readonly resourceVersion?: string; readonly creationTimestamp?: string } = {},
) => {
  const r = resource(kind, name, spec, namespace)
  return { ...r, meta: { ...r.meta, ...extra } }
}

export const pushOf = (
  parts: Partial<Omit<PushContextInput, "proxyConfig">> & { readonly proxyConfig?: Partial<ProxyConfigInput> },
  proxyOptions: Partial<ProxyGenOptions> = {},
): PushContext => {
  const { proxyConfig, ...rest } = parts
  return makePushContext(
    { ...input(rest), proxyConfig: { ...emptyProxyConfigInput, ...proxyConfig } },
    { ...defaultPushContextOptions, proxy: { ...defaultPushContextOptions.proxy, ...proxyOptions } },
  )
}

/** Every conformance problem of a resource (empty when the proxy would take it). */
export const problems = (typeUrl: string, resource: object): ReadonlyArray<string> => checkResource(typeUrl, resource)

export const HCM_TYPE =
  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"

/** A minimal HTTP connection manager carrying what the tests put into one. */
export const hcm = (extra: ProtoObject): ProtoObject => ({
  stat_prefix: "test",
  route_config: { name: "test" },
  http_filters: [
    {
      name: "envoy.filters.http.router",
      typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" },
    },
  ],
  ...extra,
})
