/**
 * What a ConfigMap template is rendered over: the reference's SidecarTemplateData, field for
 * field (`.ObjectMeta`, `.Spec`, `.TypeMeta`, `.DeploymentMeta`, `.ProxyConfig`, `.MeshConfig`,
 * `.Values`, `.Revision`, `.ProxyImage`, `.ProxyInitImage`, `.ProxyUID`, `.ProxyGID`,
 * `.NativeSidecars`, `.InboundTrafficPolicyMode`, `.CompliancePolicy`), built from our own
 * copies (templates may change dicts with `set`). The pod, mesh config and proxy config are Go
 * structs in the reference: their objects are marked so that Go field names find the JSON
 * fields and a field they lack reads as "" — except their string maps (annotations, labels,
 * proxyMetadata, …), which read as maps.
 */

import { asObject, cloneJson, isObject, type Obj, stringAt } from "../orchestrator/json.js"
import type { InjectionInput } from "./contract.js"
import { PROXY_UID } from "./names.js"
import type { WorkloadOwner } from "./owner.js"
import type { PodSettings } from "./pod-settings.js"

/** Struct fields holding maps (their keys are data, not Go field names). */
const MAP_FIELDS = new Set([
  "annotations",
  "labels",
  "proxyMetadata",
  "nodeSelector",
  "limits",
  "requests",
  "matchLabels",
  "selector",
  "data",
  "proxyStatsMatcher",
  "runtimeValues",
])

/** Marks `value` and the objects under it as structs, maps under MAP_FIELDS excepted. */
const markStructs = (value: unknown, structs: WeakSet<object>): void => {
  if (Array.isArray(value)) {
    for (const v of value) markStructs(v, structs)
    return
  }
  if (!isObject(value)) return
  structs.add(value)
  for (const [key, v] of Object.entries(value)) if (!MAP_FIELDS.has(key)) markStructs(v, structs)
}

/** The API version of a workload kind (MESH_META_OWNER's path uses it, as the reference's template does). */
const apiVersionOf = (kind: string): string =>
  kind === "Pod"
    ? "v1"
    : kind === "CronJob" || kind === "Job"
      ? "batch/v1"
      : kind === "DeploymentConfig"
        ? "apps.openshift.io/v1"
        : "apps/v1"

export interface CustomTemplateData {
  readonly data: Obj
  readonly structs: WeakSet<object>
  /** The `.ProxyConfig` object, which `protoToJSON` writes as the pod's PROXY_CONFIG. */
  readonly proxyConfig: Obj
}

export const customTemplateData = (
  input: InjectionInput,
  settings: PodSettings,
  owner: WorkloadOwner,
): CustomTemplateData => {
  const pod = asObject(input.pod)
  const metadata = cloneJson(asObject(pod.metadata))
  // Nil maps in the reference's ObjectMeta still index (to ""): give them a map to read.
  metadata.annotations = asObject(metadata.annotations)
  metadata.labels = asObject(metadata.labels)
  if (stringAt(metadata.namespace) === undefined) metadata.namespace = input.namespace.name
  const spec = cloneJson(asObject(pod.spec))
  const proxyConfig = cloneJson(settings.proxyConfig) as unknown as Obj
  const meshConfig = cloneJson(asObject(input.meshConfig))
  const structs = new WeakSet<object>()
  for (const v of [metadata, spec, proxyConfig, meshConfig]) markStructs(v, structs)
  const inbound = asObject(meshConfig.inboundTrafficPolicy)
  const data: Obj = {
    TypeMeta: { APIVersion: apiVersionOf(owner.kind), Kind: owner.kind },
    DeploymentMeta: { Name: owner.name, Namespace: input.namespace.name },
    ObjectMeta: metadata,
    Spec: spec,
    ProxyConfig: proxyConfig,
    MeshConfig: meshConfig,
    Values: cloneJson(asObject(input.values)),
    Revision: input.revision,
    NativeSidecars: settings.nativeSidecar,
    ProxyImage: settings.proxyImage,
    ProxyInitImage: settings.proxyInitImage,
    ProxyUID: PROXY_UID,
    ProxyGID: PROXY_UID,
    InboundTrafficPolicyMode: inbound.mode === "LOCALHOST" ? "localhost" : "passthrough",
    CompliancePolicy: "",
  }
  return { data, structs, proxyConfig }
}
