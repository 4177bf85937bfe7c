/** The sidecar injector's public surface, for the `/inject` webhook and `meshctl orch-inject`. */
export { defaultInjectionConfig, parseInjectionConfig } from "./config.js"
export type { InjectionConfig, InjectionInput, InjectionOutcome, InjectionValues, Json } from "./contract.js"
export { injectPod } from "./inject.js"
export { escapePointerToken, type JsonPatchOperation, jsonPatch } from "./json-patch.js"
export {
  BUILTIN_TEMPLATES,
  IGNORED_NAMESPACES,
  InjectAnnotations,
  InjectLabels,
  upstreamSpelling,
} from "./names.js"
export { ownerUri, type WorkloadOwner, workloadOwnerOf } from "./owner.js"
export { type InjectionStatus, parseStatus } from "./status.js"
export { defaultInjectionValues, parseInjectionValues } from "./values.js"
