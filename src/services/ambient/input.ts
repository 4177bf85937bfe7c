/**
 * What the ambient index reads beyond the PushContext's services and config: the cluster's pods
 * (the facts of each the workload API carries), namespace labels, and the settings of the index.
 * Present in the push input only with `PILOT_ENABLE_AMBIENT`; a change of any of it is a push.
 */
import { Context, type Stream } from "effect"
import type { ConfigResource } from "../config-model/resource.js"
import type { GatewayClassSpec, KubernetesGatewaySpec } from "../config-model/schemas/gateway-api/types.js"
import type { WorkloadEntrySpec } from "../config-model/schemas/workload-entry.js"
import type { OrchPod } from "../orchestrator/objects.js"
import { podAddresses, podIsReady, podLocality, podPortsByName } from "../registry/orchestrator/workload.js"

/** The facts of one pod the workload API and waypoint binding read. */
export interface AmbientPod {
  readonly uid: string
  readonly name: string
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  /** `default` when the pod names none (the API server's default). */
  readonly serviceAccount: string
  readonly node: string
  readonly addresses: ReadonlyArray<string>
  readonly hostNetwork: boolean
  /** Running, Ready and not being deleted. */
  readonly ready: boolean
  /** `region/zone/subzone` from the pod's label (the node's labels are not read here). */
  readonly locality: string
  /** Container ports by name, for services' named target ports. */
  readonly namedPorts: Readonly<Record<string, number>>
  /** The first owner's kind and name (ReplicaSet, Job, ...), for the workload name. */
  readonly owner?: { readonly kind: string; readonly name: string }
}

export interface AmbientSettings {
  /** `CLUSTER_ID`: the first part of every workload uid. */
  readonly clusterId: string
  /** `PILOT_AUTO_ALLOW_WAYPOINT_POLICY`: each workload behind a waypoint allows the waypoint's identities. */
  readonly autoAllowWaypointPolicy: boolean
  /** Whose `topology.mesh.io/network` label names the cluster's network. */
  readonly systemNamespace: string
}

export interface AmbientInput {
  readonly settings: AmbientSettings
  /** Sorted by namespace and name; an unchanged pod is the same object from one input to the next. */
  readonly pods: ReadonlyArray<AmbientPod>
  readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>
  /** Gateway-API Gateways and classes: the waypoints among them. */
  readonly gateways: ReadonlyArray<ConfigResource<KubernetesGatewaySpec>>
  readonly gatewayClasses: ReadonlyArray<ConfigResource<GatewayClassSpec>>
  readonly workloadEntries: ReadonlyArray<ConfigResource<WorkloadEntrySpec>>
}

/** Where the pods come from (the Pod informer, layers/ambient/pod-source.ts). */
export class AmbientPods extends Context.Tag("mesh/AmbientPods")<
  AmbientPods,
  {
    readonly settings: AmbientSettings
    /** The whole list again whenever a pod's facts changed. */
    readonly changes: Stream.Stream<ReadonlyArray<AmbientPod>>
  }
>() {}

/** The facts of a pod; undefined for a pod without a name or namespace. */
export const ambientPod = (pod: OrchPod): AmbientPod | undefined => {
  const name = pod.metadata.name ?? ""
  const namespace = pod.metadata.namespace ?? ""
  if (name === "" || namespace === "") return undefined
  const owner = (pod.metadata as { ownerReferences?: ReadonlyArray<{ kind?: string; name?: string }> })
    .ownerReferences?.[0]
  const sa = pod.spec?.serviceAccountName
  return {
    uid: pod.metadata.uid ?? "",
    name,
    namespace,
    labels: pod.metadata.labels ?? {},
    annotations: pod.metadata.annotations ?? {},
    serviceAccount: typeof sa === "string" && sa !== "" ? sa : "default",
    node: pod.spec?.nodeName ?? "",
    addresses: podAddresses(pod),
    hostNetwork: pod.spec?.hostNetwork === true,
    ready: podIsReady(pod),
    locality: podLocality(pod, undefined),
    namedPorts: Object.fromEntries(podPortsByName(pod)),
    ...(owner?.kind !== undefined && owner.name !== undefined ? { owner: { kind: owner.kind, name: owner.name } } : {}),
  }
}
