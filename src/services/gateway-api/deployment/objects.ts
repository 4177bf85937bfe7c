/**
 * The objects the deployment controller applies for one Gateway: a ServiceAccount, a Deployment
 * running the proxy in router mode (its container from the injector's `gateway` template, so
 * images, arguments and environment follow the injector's values), and a Service exposing the
 * listeners' ports and the status port — all owned by the Gateway, so that deleting it deletes
 * them.
 *
 * Labels and annotations: the Gateway's own are copied (`PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS`),
 * unless `spec.infrastructure` gives its own, which then replace them; keys under
 * `gateway.networking.k8s.io/` in `spec.infrastructure` are ignored, as are the annotations
 * that steer this controller. Every object carries `gateway.networking.k8s.io/gateway-name`,
 * which the Service and the generated mesh Gateway select the pods by.
 */

import type { GatewayAddress, Listener } from "../../config-model/schemas/gateway-api/types.js"
import { Annotations } from "../../constants.js"
import { PROXY_UID } from "../../injection/names.js"
import type { Obj } from "../../orchestrator/json.js"
import { GATEWAY_NAME_LABEL } from "../model.js"
import { WaypointLabels } from "../waypoints/names.js"
import {
  annotationOf,
  DeploymentAnnotations,
  DeploymentLabels,
  MANAGED_BY,
  type ManagedKind,
  type ObjectNames,
  STEERING_ANNOTATIONS,
} from "./names.js"

type StringMap = Readonly<Record<string, string>>

/** A Gateway as the orchestrator serves it: what the objects are built from. */
export interface GatewayObject {
  /** `gateway.networking.k8s.io/<version>`, for the owner reference. */
  readonly apiVersion: string
  readonly name: string
  readonly namespace: string
  readonly uid: string
  readonly labels: StringMap
  readonly annotations: StringMap
  readonly spec: {
    readonly gatewayClassName: string
    readonly listeners: ReadonlyArray<Listener>
    readonly addresses?: ReadonlyArray<GatewayAddress>
    readonly infrastructure?: { readonly labels?: StringMap; readonly annotations?: StringMap }
  }
}

export interface ManagedGateway {
  readonly gateway: GatewayObject
  readonly kind: ManagedKind
  readonly names: ObjectNames
  /** PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS; default true. */
  readonly copyLabelsAnnotations?: boolean
}

/** The proxy's status port: readiness (`/healthz/ready`) for load balancers. */
export const STATUS_PORT = 15021

const RESERVED_PREFIX = "gateway.networking.k8s.io/"

const without = (map: StringMap, keys: ReadonlyArray<string>): Record<string, string> =>
  Object.fromEntries(Object.entries(map).filter(([key]) => !keys.includes(key)))

const infrastructure = (map: StringMap | undefined): Record<string, string> | undefined =>
  map === undefined
    ? undefined
    : Object.fromEntries(Object.entries(map).filter(([key]) => !key.startsWith(RESERVED_PREFIX)))

/** The labels copied onto the objects (before this controller's own). */
export const infrastructureLabels = (m: ManagedGateway): Record<string, string> =>
  infrastructure(m.gateway.spec.infrastructure?.labels) ??
  (m.copyLabelsAnnotations === false ? {} : { ...m.gateway.labels })

/** The annotations copied onto the objects, without those that steer this controller. */
export const infrastructureAnnotations = (m: ManagedGateway): Record<string, string> =>
  without(
    infrastructure(m.gateway.spec.infrastructure?.annotations) ??
      (m.copyLabelsAnnotations === false ? {} : { ...m.gateway.annotations }),
    STEERING_ANNOTATIONS,
  )

export const ownerReferences = (gateway: GatewayObject): ReadonlyArray<Obj> => [
  { apiVersion: gateway.apiVersion, kind: "Gateway", name: gateway.name, uid: gateway.uid },
]

const metadata = (m: ManagedGateway, name: string, labels: StringMap, annotations: StringMap): Obj => ({
  name,
  namespace: m.gateway.namespace,
  labels,
  ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
  ownerReferences: ownerReferences(m.gateway),
})

/** The selector of the Service and the Deployment. */
export const podSelector = (m: ManagedGateway): StringMap => ({ [GATEWAY_NAME_LABEL]: m.gateway.name })

/** The labels of the Deployment and its pods: copied ones, then the gateway name and the manager. */
export const workloadLabels = (m: ManagedGateway): Record<string, string> => ({
  ...without(infrastructureLabels(m), [DeploymentLabels.managed]),
  ...podSelector(m),
  [DeploymentLabels.managed]: MANAGED_BY[m.kind],
})

export const serviceAccount = (m: ManagedGateway): Obj => ({
  apiVersion: "v1",
  kind: "ServiceAccount",
  metadata: metadata(m, m.names.serviceAccount, podSelector(m), {}),
})

/** A port name the orchestrator accepts (DNS label) made from a listener name. */
export const portName = (listenerName: string): string =>
  listenerName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, 63)
    .replace(/^-+|-+$/g, "")

/** The status port, then one port per distinct listener port (the first listener on it names it). */
export const servicePorts = (listeners: ReadonlyArray<Listener>): ReadonlyArray<Obj> => {
  const ports: Array<Obj> = [{ name: "status-port", port: STATUS_PORT, protocol: "TCP", appProtocol: "tcp" }]
  const seen = new Set<number>()
  listeners.forEach((listener, index) => {
    if (seen.has(listener.port)) return
    seen.add(listener.port)
    const protocol = listener.protocol.toLowerCase()
    const name = portName(listener.name)
    ports.push({
      name: name === "" ? `${protocol}-${index}` : name,
      port: listener.port,
      protocol: "TCP",
      appProtocol: protocol,
    })
  })
  return ports
}

/** LoadBalancer for gateways, ClusterIP for waypoints, unless the Gateway asks for another. */
export const serviceType = (m: ManagedGateway): string =>
  annotationOf(m.gateway.annotations, DeploymentAnnotations.serviceType) ??
  (m.kind === "waypoint" ? "ClusterIP" : "LoadBalancer")

export const service = (m: ManagedGateway): Obj => {
  const type = serviceType(m)
  // One IP address in the spec is the address the load balancer is asked for.
  const requested = m.gateway.spec.addresses?.[0]?.value
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadata(
      m,
      m.names.deployment,
      { ...infrastructureLabels(m), ...podSelector(m) },
      infrastructureAnnotations(m),
    ),
    spec: {
      ipFamilyPolicy: "PreferDualStack",
      ports: servicePorts(m.gateway.spec.listeners),
      selector: podSelector(m),
      type,
      ...(type === "LoadBalancer" && requested !== undefined ? { loadBalancerIP: requested } : {}),
    },
  }
}

/** The proxy runs as the proxy user with nothing extra: a gateway receives its traffic directly. */
const containerSecurityContext: Obj = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
  privileged: false,
  readOnlyRootFilesystem: true,
  runAsGroup: PROXY_UID,
  runAsNonRoot: true,
  runAsUser: PROXY_UID,
}

const asObj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {})
const asMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(asObj(v)).filter((e): e is [string, string] => typeof e[1] === "string"))

/**
 * The Deployment around the injected proxy pod (`pod`: the injector's output for a pod of
 * `proxyPodStub`): pods opt out of injection and of node-proxy capture, may bind ports below
 * 1024 without privileges, and run as the Gateway's ServiceAccount.
 */
export const deployment = (m: ManagedGateway, pod: Obj, resources: Obj | undefined): Obj => {
  const podMeta = asObj(pod.metadata)
  const podSpec = asObj(pod.spec)
  const containers = (Array.isArray(podSpec.containers) ? podSpec.containers : []).map((c) => ({
    ...asObj(c),
    securityContext: containerSecurityContext,
    ...(resources !== undefined ? { resources } : {}),
  }))
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: metadata(m, m.names.deployment, workloadLabels(m), infrastructureAnnotations(m)),
    spec: {
      selector: { matchLabels: podSelector(m) },
      template: {
        metadata: {
          labels: {
            [Annotations.sidecarInject]: "false",
            [WaypointLabels.dataplaneMode]: "none",
            ...asMap(podMeta.labels),
            ...workloadLabels(m),
          },
          annotations: { ...infrastructureAnnotations(m), ...asMap(podMeta.annotations) },
        },
        spec: {
          ...podSpec,
          containers,
          serviceAccountName: m.names.serviceAccount,
          securityContext: { sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }] },
        },
      },
    },
  }
}
