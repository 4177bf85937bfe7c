/**
 * The orchestrator resources mesh reads and writes, and their REST paths.
 */

export interface ResourceRef {
  /** "" for the core group. */
  readonly group: string
  readonly version: string
  /** Lower-case plural, as in the URL. */
  readonly plural: string
  readonly kind: string
  readonly namespaced: boolean
}

const core = (plural: string, kind: string, namespaced = true): ResourceRef => ({
  group: "",
  version: "v1",
  plural,
  kind,
  namespaced,
})

export const Resources = {
  services: core("services", "Service"),
  endpoints: core("endpoints", "Endpoints"),
  pods: core("pods", "Pod"),
  nodes: core("nodes", "Node", false),
  namespaces: core("namespaces", "Namespace", false),
  configMaps: core("configmaps", "ConfigMap"),
  secrets: core("secrets", "Secret"),
  endpointSlices: {
    group: "discovery.k8s.io",
    version: "v1",
    plural: "endpointslices",
    kind: "EndpointSlice",
    namespaced: true,
  },
  leases: { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true },
  tokenReviews: {
    group: "authentication.k8s.io",
    version: "v1",
    plural: "tokenreviews",
    kind: "TokenReview",
    namespaced: false,
  },
  mutatingWebhookConfigurations: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    plural: "mutatingwebhookconfigurations",
    kind: "MutatingWebhookConfiguration",
    namespaced: false,
  },
  validatingWebhookConfigurations: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    plural: "validatingwebhookconfigurations",
    kind: "ValidatingWebhookConfiguration",
    namespaced: false,
  },
} as const satisfies Record<string, ResourceRef>

/** `v1` or `group/version`. */
export const apiVersionOf = (ref: Pick<ResourceRef, "group" | "version">): string =>
  ref.group === "" ? ref.version : `${ref.group}/${ref.version}`

/**
 * The REST path of a resource: the collection across namespaces (no namespace), of one
 * namespace, or one object (with a name).
 */
export const resourcePath = (ref: ResourceRef, namespace?: string, name?: string): string => {
  const base = ref.group === "" ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`
  const ns =
    ref.namespaced && namespace !== undefined && namespace !== "" ? `/namespaces/${encodeURIComponent(namespace)}` : ""
  const object = name !== undefined ? `/${encodeURIComponent(name)}` : ""
  return `${base}${ns}/${ref.plural}${object}`
}
