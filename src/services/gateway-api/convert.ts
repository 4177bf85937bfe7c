/**
 * Gateway-API resources → the mesh's own Gateways and VirtualServices, and the status of every
 * Gateway-API object this controller reconciles. Pure: the same input (and `now`) gives the same
 * output, sorted, so the push pipeline can diff it.
 *
 * Gateways of a class this controller owns (see classes.ts) become mesh Gateways (gateways.ts);
 * each route's parentRefs are bound to their listeners or Services (binding.ts); the rules of
 * every bound route become VirtualService routes (http-routes.ts, grpc-routes.ts,
 * l4-routes.ts), assembled per Gateway and hostname (virtual-services.ts). The backend policies
 * (BackendTLSPolicy, XBackendTrafficPolicy) become DestinationRules (backend-policies.ts).
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { ParentReference } from "../config-model/schemas/gateway-api/types.js"
import { resolveGatewayAddresses } from "./addresses.js"
import { convertBackendPolicies } from "./backend-policies.js"
import { type BackendContext, indexServices } from "./backends.js"
import { type BindingContext, bindParent, type ParentBinding, type RouteIdentity } from "./binding.js"
import { reconcileGatewayClasses } from "./classes.js"
import type { Problem } from "./conditions.js"
import { type GatewayState, reconcileGateway } from "./gateways.js"
import { convertGrpcRoute } from "./grpc-routes.js"
import { type ConvertedHttpRoutes, convertHttpRoute } from "./http-routes.js"
import {
  indexInferencePools,
  inferencePoolStatuses,
  pickersByShadowHost,
  withEndpointPickers,
} from "./inference-pools.js"
import { allowedByIsolation, isolatingHostnames } from "./isolation.js"
import { convertL4Rules, type L4Rules } from "./l4-routes.js"
import { reconcileListenerSets } from "./listener-sets.js"
import {
  byAge,
  compareStrings,
  GATEWAY_API_GROUP,
  type GatewayApiInput,
  GatewayApiKind,
  type GatewayApiOptions,
  type GatewayApiOutput,
  keyOf,
  type ResourceStatus,
  type RouteKind,
} from "./model.js"
import { indexReferenceGrants, normaliseGroup } from "./references.js"
import { remoteGatewayStatus } from "./remote-gateways.js"
import { gatewayStatus, type RouteParentStatus, routeParentStatus } from "./status.js"
import { VirtualServiceAssembly } from "./virtual-services.js"

export type { GatewayApiInput, GatewayApiOptions, GatewayApiOutput, ResourceStatus } from "./model.js"
export { defaultGatewayApiOptions } from "./model.js"

interface RouteSpecBase {
  readonly parentRefs?: ReadonlyArray<ParentReference>
  readonly hostnames?: ReadonlyArray<string>
}

type Converted =
  | { readonly type: "http"; readonly rules: ConvertedHttpRoutes }
  | { readonly type: "l4"; readonly rules: L4Rules }

/** parentRefs without repeats (the same parent written twice counts once). */
const distinctParents = (refs: ReadonlyArray<ParentReference>, namespace: string): ReadonlyArray<ParentReference> => {
  const seen = new Set<string>()
  return refs.filter((ref) => {
    const key = JSON.stringify([
      normaliseGroup(ref.group ?? GATEWAY_API_GROUP),
      ref.kind ?? "Gateway",
      ref.namespace ?? namespace,
      ref.name,
      ref.sectionName ?? "",
      ref.port ?? 0,
    ])
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

const bindingProblem = (binding: ParentBinding): Problem | undefined =>
  binding.type === "gateway" || binding.type === "unattached" ? binding.problem : undefined

export const convertGatewayApi = (input: GatewayApiInput, options: GatewayApiOptions): GatewayApiOutput => {
  const classes = reconcileGatewayClasses(input.gatewayClasses, options)
  const grants = indexReferenceGrants(input.referenceGrants)
  const services = indexServices(input.services)
  const inferencePools = indexInferencePools(input.inferencePools ?? [], options.inferenceExtension ?? false)
  const gateways = new Map<string, GatewayState>()
  const statuses: Array<ResourceStatus> = [...classes.statuses]
  for (const gateway of [...input.gateways].sort(byAge)) {
    if (classes.remoteNames.has(gateway.spec.gatewayClassName)) statuses.push(remoteGatewayStatus(gateway, options.now))
    else if (classes.names.has(gateway.spec.gatewayClassName))
      gateways.set(
        keyOf(gateway),
        reconcileGateway(gateway, {
          ...(classes.eastWestNames.has(gateway.spec.gatewayClassName) ? { eastWest: true } : {}),
          grants,
          namespaceLabels: input.namespaceLabels,
          ...(input.tlsObjects !== undefined ? { tlsObjects: input.tlsObjects } : {}),
        }),
      )
  }
  const listenerSets = reconcileListenerSets(input.listenerSets ?? [], input.gateways, gateways, classes, {
    grants,
    namespaceLabels: input.namespaceLabels,
    ...(input.tlsObjects !== undefined ? { tlsObjects: input.tlsObjects } : {}),
  })
  const bindingContext: BindingContext = {
    gateways,
    existingGateways: new Set(input.gateways.map(keyOf)),
    services,
    namespaceLabels: input.namespaceLabels,
    domainSuffix: options.domainSuffix,
    listenerSets: listenerSets.bound,
    existingListenerSets: listenerSets.existing,
  }
  const assembly = new VirtualServiceAssembly()

  const reconcileRoute = (
    kind: RouteKind,
    route: ConfigResource<RouteSpecBase>,
    convert: (backends: BackendContext) => Converted,
  ): void => {
    const identity: RouteIdentity = {
      kind,
      namespace: route.meta.namespace,
      name: route.meta.name,
      hostnames: route.spec.hostnames ?? [],
    }
    const bindings = distinctParents(route.spec.parentRefs ?? [], route.meta.namespace)
      .map((ref) => ({ ref, binding: bindParent(identity, ref, bindingContext) }))
      .filter(({ binding }) => binding.type !== "foreign")
    if (bindings.length === 0) return
    const context = (mesh: boolean): BackendContext => ({
      services,
      grants,
      domainSuffix: options.domainSuffix,
      routeKind: kind,
      routeNamespace: route.meta.namespace,
      // As the reference: routes on a Service (mesh) need no ReferenceGrant to reach backends.
      enforceGrants: !mesh,
      inferencePools,
    })
    const hasGateway = bindings.some(({ binding }) => binding.type !== "service")
    // Converted for the Gateway parents, and (only when different) for the Service parents.
    const converted = convert(context(!hasGateway))
    let forMesh: Converted | undefined
    const meshConverted = (): Converted => {
      forMesh ??= hasGateway ? convert(context(true)) : converted
      return forMesh
    }
    // The status reports the problems of the conversion the parent was given.
    const rulesFor = (binding: ParentBinding): Converted => (binding.type === "service" ? meshConverted() : converted)
    const id = `${kind}/${keyOf(route)}`
    for (const { binding } of bindings) {
      if (binding.type === "gateway") {
        for (const { listener, hostnames } of binding.attachments) {
          listener.attachedRoutes.add(id)
          const port = listener.listener.port
          if (converted.type === "http") {
            const own = listener.listener.hostname ?? ""
            const others = isolatingHostnames(binding.gateway, listener)
            for (const host of hostnames)
              if (allowedByIsolation(host, own, others))
                assembly.addGatewayHttp(binding.gateway, host, port, kind, route, converted.rules.entries)
          } else if (kind === "TLSRoute" || kind === "TCPRoute") {
            assembly.addL4(kind, binding.gateway, route, hostnames, port, converted.rules.routes)
          }
        }
      } else if (binding.type === "service") {
        const mesh = meshConverted()
        for (const service of binding.services) {
          if (mesh.type === "http") assembly.addMeshHttp(service, binding.port, kind, route, mesh.rules.entries)
          else if (kind === "TLSRoute" || kind === "TCPRoute")
            assembly.addMeshL4(kind, service, binding.port, route, route.spec.hostnames ?? [], mesh.rules.routes)
        }
      }
    }
    const ctx = { generation: route.meta.generation, now: options.now }
    const parents: ReadonlyArray<RouteParentStatus> = bindings.map(({ ref, binding }) => {
      const rules = rulesFor(binding)
      return routeParentStatus(
        ctx,
        ref,
        options.controllerName,
        bindingProblem(binding),
        rules.type === "http" ? rules.rules.unsupported : [],
        rules.rules.refProblems,
      )
    })
    statuses.push({
      kind,
      namespace: route.meta.namespace,
      name: route.meta.name,
      ...(route.meta.generation !== undefined ? { generation: route.meta.generation } : {}),
      status: { parents },
    })
  }

  for (const route of [...input.httpRoutes].sort(byAge))
    reconcileRoute("HTTPRoute", route, (b) => ({ type: "http", rules: convertHttpRoute(route, b) }))
  for (const route of [...input.grpcRoutes].sort(byAge))
    reconcileRoute("GRPCRoute", route, (b) => ({ type: "http", rules: convertGrpcRoute(route, b) }))
  for (const route of [...input.tlsRoutes].sort(byAge))
    reconcileRoute("TLSRoute", route, (b) => ({ type: "l4", rules: convertL4Rules(route.spec.rules, b) }))
  for (const route of [...input.tcpRoutes].sort(byAge))
    reconcileRoute("TCPRoute", route, (b) => ({ type: "l4", rules: convertL4Rules(route.spec.rules, b) }))

  // A Gateway the deployment controller deploys takes its addresses from what it deployed; any
  // other from the Services its addresses name (addresses.ts).
  // Its ListenerSets' served entries are served by its address too, and counted.
  const gatewayStatusOf = (gateway: GatewayState) => {
    const deployed = options.deployedGateways?.get(gateway.key)
    const sets = listenerSets.attachedTo(gateway.key)
    const withSets = { ...gateway, listeners: [...gateway.listeners, ...sets.listeners] }
    const status =
      deployed !== undefined
        ? gatewayStatus(gateway, options.now, deployed)
        : gatewayStatus(
            gateway,
            options.now,
            undefined,
            resolveGatewayAddresses(withSets, services, options.domainSuffix),
          )
    return sets.count > 0 ? { ...(status as object), attachedListenerSets: sets.count } : status
  }
  // Gateway status last: it counts the routes attached to each listener.
  for (const gateway of gateways.values()) {
    const meta = gateway.resource.meta
    statuses.push({
      kind: GatewayApiKind.KubernetesGateway,
      namespace: meta.namespace,
      name: meta.name,
      ...(meta.generation !== undefined ? { generation: meta.generation } : {}),
      status: gatewayStatusOf(gateway),
    })
  }

  statuses.push(...listenerSets.statuses(options.now, services, options.domainSuffix, options.deployedGateways))

  const meshGateways = [
    ...[...gateways.values()].flatMap((g) => (g.meshGateway !== undefined ? [g.meshGateway] : [])),
    ...listenerSets.meshGateways,
  ].sort((a, b) => compareStrings(keyOf(a), keyOf(b)))
  const backendPolicies = convertBackendPolicies(input, options, services)
  statuses.push(...backendPolicies.statuses)
  if (inferencePools.enabled)
    statuses.push(
      ...inferencePoolStatuses(input.inferencePools ?? [], input.httpRoutes, statuses, input.services, options),
    )
  const pickers = pickersByShadowHost(inferencePools, options.domainSuffix)
  return {
    gateways: meshGateways,
    virtualServices: assembly.build().map((vs) => withEndpointPickers(vs, pickers)),
    destinationRules: backendPolicies.destinationRules,
    statuses: statuses.sort(
      (a, b) =>
        compareStrings(a.kind, b.kind) || compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name),
    ),
  }
}
