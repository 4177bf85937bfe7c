/**
 * Builders for the Gateway-API conversion tests: resources with metadata, registry services,
 * the input with empty defaults, look-ups into the output (status of an object, conditions,
 * VirtualServices of a Gateway), and the mesh parser's verdict on every generated resource.
 */
import { validateDocument } from "../../../src/services/config-model/parse.js"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import type {
  GatewayClassSpec,
  GRPCRouteSpec,
  HTTPRouteSpec,
  KubernetesGatewaySpec,
  Listener,
  ReferenceGrantSpec,
  TCPRouteSpec,
  TLSRouteSpec,
} from "../../../src/services/config-model/schemas/gateway-api/types.js"
import type { VirtualServiceSpec } from "../../../src/services/config-model/schemas/virtual-service.js"
import {
  convertGatewayApi,
  defaultGatewayApiOptions,
  type GatewayApiInput,
  type GatewayApiOptions,
  type GatewayApiOutput,
} from "../../../src/services/gateway-api/convert.js"
import type { Protocol, Service } from "../../../src/services/registry/model.js"

export const NOW = "2024-05-01T12:00:00Z"
export const CONTROLLER = "mesh.io/gateway-controller"
export const OPTIONS: GatewayApiOptions = defaultGatewayApiOptions(NOW)

export interface MetaOptions {
  readonly namespace?: string
  readonly created?: string
  readonly generation?: number
}

const resource = <Spec>(
  kind: string,
  group: string,
  name: string,
  spec: Spec,
  o: MetaOptions = {},
): ConfigResource<Spec> => ({
  group,
  version: "v1",
  kind,
  meta: {
    name,
    namespace: o.namespace ?? "default",
    labels: {},
    annotations: {},
    generation: o.generation ?? 1,
    creationTimestamp: o.created ?? "2024-01-01T00:00:00Z",
  },
  spec,
})

const GW_GROUP = "gateway.networking.k8s.io"

export const gatewayClass = (name: string, controllerName = CONTROLLER, o: MetaOptions = {}) =>
  resource<GatewayClassSpec>("GatewayClass", GW_GROUP, name, { controllerName }, { ...o, namespace: "" })
export const gateway = (name: string, spec: Partial<KubernetesGatewaySpec>, o: MetaOptions = {}) =>
  resource<KubernetesGatewaySpec>(
    "KubernetesGateway",
    GW_GROUP,
    name,
    { gatewayClassName: "mesh", listeners: [], ...spec },
    o,
  )
export const httpRoute = (name: string, spec: HTTPRouteSpec, o: MetaOptions = {}) =>
  resource<HTTPRouteSpec>("HTTPRoute", GW_GROUP, name, spec, o)
export const grpcRoute = (name: string, spec: GRPCRouteSpec, o: MetaOptions = {}) =>
  resource<GRPCRouteSpec>("GRPCRoute", GW_GROUP, name, spec, o)
export const tcpRoute = (name: string, spec: TCPRouteSpec, o: MetaOptions = {}) =>
  resource<TCPRouteSpec>("TCPRoute", GW_GROUP, name, spec, o)
export const tlsRoute = (name: string, spec: TLSRouteSpec, o: MetaOptions = {}) =>
  resource<TLSRouteSpec>("TLSRoute", GW_GROUP, name, spec, o)
export const referenceGrant = (name: string, spec: ReferenceGrantSpec, o: MetaOptions = {}) =>
  resource<ReferenceGrantSpec>("ReferenceGrant", GW_GROUP, name, spec, o)

/** An HTTP listener on port 80 taking routes from every namespace. */
export const httpListener = (name = "http", extra: Partial<Listener> = {}): Listener => ({
  name,
  port: 80,
  protocol: "HTTP",
  allowedRoutes: { namespaces: { from: "All" } },
  ...extra,
})

/** A Gateway `gw` in `infra` (routes from all namespaces unless its listeners say otherwise). */
export const simpleGateway = (listeners: ReadonlyArray<Listener> = [httpListener()], o: MetaOptions = {}) =>
  gateway("gw", { listeners }, { namespace: "infra", ...o })

export const parentGw = { name: "gw", namespace: "infra" } as const

export const service = (
  name: string,
  namespace = "default",
  ports: ReadonlyArray<readonly [string, number, Protocol]> = [["http", 8080, "HTTP"]],
  extra: Partial<Service> = {},
): Service => ({
  hostname: `${name}.${namespace}.svc.cluster.local`,
  namespace,
  ports: ports.map(([n, port, protocol]) => ({ name: n, port, protocol })),
  addresses: [],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "Orchestrator",
  clusterId: "Orchestrator",
  ...extra,
})

export const emptyInput: GatewayApiInput = {
  gatewayClasses: [],
  gateways: [],
  httpRoutes: [],
  grpcRoutes: [],
  tcpRoutes: [],
  tlsRoutes: [],
  referenceGrants: [],
  services: [service("backend"), service("other", "apps")],
  namespaceLabels: new Map(),
}

export const convert = (parts: Partial<GatewayApiInput>, options: Partial<GatewayApiOptions> = {}): GatewayApiOutput =>
  convertGatewayApi({ ...emptyInput, ...parts }, { ...OPTIONS, ...options })

// ---- looking into the output ----

export interface StatusCondition {
  readonly type: string
  readonly status: string
  readonly reason: string
  readonly message: string
  readonly observedGeneration?: number
  readonly lastTransitionTime: string
}

export interface ListenerStatus {
  readonly name: string
  readonly attachedRoutes: number
  readonly supportedKinds: ReadonlyArray<{ readonly group: string; readonly kind: string }>
  readonly conditions: ReadonlyArray<StatusCondition>
}

export interface GatewayStatus {
  readonly addresses?: ReadonlyArray<{ readonly type: string; readonly value: string }>
  readonly conditions: ReadonlyArray<StatusCondition>
  readonly listeners: ReadonlyArray<ListenerStatus>
}

export interface RouteStatus {
  readonly parents: ReadonlyArray<{
    readonly parentRef: Record<string, unknown>
    readonly controllerName: string
    readonly conditions: ReadonlyArray<StatusCondition>
  }>
}

export const statusOf = <S>(
  output: GatewayApiOutput,
  kind: string,
  name: string,
  namespace = "default",
): S | undefined =>
  output.statuses.find((s) => s.kind === kind && s.name === name && s.namespace === namespace)?.status as S | undefined

export const gatewayStatusOf = (output: GatewayApiOutput, name = "gw", namespace = "infra"): GatewayStatus => {
  const status = statusOf<GatewayStatus>(output, "KubernetesGateway", name, namespace)
  if (status === undefined) throw new Error(`no status for Gateway ${namespace}/${name}`)
  return status
}

export const routeStatusOf = (
  output: GatewayApiOutput,
  kind: string,
  name: string,
  namespace = "default",
): RouteStatus => {
  const status = statusOf<RouteStatus>(output, kind, name, namespace)
  if (status === undefined) throw new Error(`no status for ${kind} ${namespace}/${name}`)
  return status
}

export const conditionOf = (
  conditions: ReadonlyArray<StatusCondition>,
  type: string,
): { readonly status: string; readonly reason: string } => {
  const found = conditions.find((c) => c.type === type)
  if (found === undefined) throw new Error(`no condition ${type}`)
  return { status: found.status, reason: found.reason }
}

/** Accepted and ResolvedRefs of a route's first parent as `Type=Status/Reason`. */
export const parentConditions = (status: RouteStatus, index = 0): ReadonlyArray<string> =>
  (status.parents[index]?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`)

export const listenerOf = (status: GatewayStatus, name: string): ListenerStatus => {
  const found = status.listeners.find((l) => l.name === name)
  if (found === undefined) throw new Error(`no listener ${name}`)
  return found
}

/** The VirtualServices bound to a generated Gateway (or to `mesh`). */
export const virtualServicesFor = (
  output: GatewayApiOutput,
  gatewayRef: string,
): ReadonlyArray<ConfigResource<VirtualServiceSpec>> =>
  output.virtualServices.filter((vs) => (vs.spec.gateways ?? []).includes(gatewayRef))

export const GW_REF = "infra/gw-mesh-autogenerated-k8s-gateway"

/** The one VirtualService for `host` on the test Gateway. */
export const vsForHost = (
  output: GatewayApiOutput,
  host: string,
  gatewayRef = GW_REF,
): ConfigResource<VirtualServiceSpec> => {
  const found = virtualServicesFor(output, gatewayRef).filter((vs) => (vs.spec.hosts ?? []).includes(host))
  if (found.length !== 1) throw new Error(`expected one VirtualService for ${host}, found ${found.length}`)
  return found[0]!
}

/** Every generated resource through the mesh's own document validation: the problems found. */
export const schemaProblems = (output: GatewayApiOutput): ReadonlyArray<string> =>
  [...output.gateways, ...output.virtualServices, ...output.destinationRules].flatMap((r, i) => {
    const document = {
      apiVersion: `${r.group}/${r.version}`,
      kind: r.kind,
      metadata: {
        name: r.meta.name,
        namespace: r.meta.namespace,
        annotations: r.meta.annotations,
        ...(r.meta.creationTimestamp !== undefined ? { creationTimestamp: r.meta.creationTimestamp } : {}),
      },
      spec: r.spec,
    }
    const result = validateDocument("generated.yaml", i, document)
    return [
      ...(result.resource === undefined && result.issues.length === 0 ? [`${r.kind} ${r.meta.name}: rejected`] : []),
      ...result.issues.map((issue) => `${r.kind} ${r.meta.namespace}/${r.meta.name} ${issue.path}: ${issue.message}`),
    ]
  })
