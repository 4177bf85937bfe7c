/**
 * The TLS settings of a listener that terminates TLS, from its certificate references: a Secret
 * (core group) in the Gateway's namespace is credential `<name>`; in another namespace it needs
 * a ReferenceGrant from Gateways of the Gateway's namespace and is credential
 * `kubernetes-gateway://<namespace>/<name>`. Several certificates become `credentialNames`.
 * `frontendValidation` (client certificates) makes the server MUTUAL.
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { GatewaySpec } from "../config-model/schemas/gateway.js"
import type {
  KubernetesGatewaySpec,
  Listener,
  SecretObjectReference,
} from "../config-model/schemas/gateway-api/types.js"
import { type Problem, Reason } from "./conditions.js"
import { GATEWAY_API_GROUP } from "./model.js"
import { normaliseGroup, type ReferenceGrants, referenceAllowed } from "./references.js"

export type ServerTls = NonNullable<GatewaySpec["servers"][number]["tls"]>

/** The credential a certificate reference names, or the problem with it. */
const credentialOf = (
  ref: SecretObjectReference,
  gateway: ConfigResource<KubernetesGatewaySpec>,
  grants: ReferenceGrants,
  kinds: ReadonlyArray<string>,
): { readonly credential: string } | { readonly problem: Problem } => {
  const group = normaliseGroup(ref.group)
  const kind = ref.kind ?? "Secret"
  const namespace = ref.namespace ?? gateway.meta.namespace
  if (group !== "" || !kinds.includes(kind)) {
    return {
      problem: {
        reason: Reason.InvalidCertificateRef,
        message: `unsupported certificate reference kind ${group === "" ? "core" : group}/${kind}`,
      },
    }
  }
  const allowed = referenceAllowed(
    grants,
    { group: GATEWAY_API_GROUP, kind: "Gateway", namespace: gateway.meta.namespace },
    { group: "", kind, namespace, name: ref.name },
  )
  if (!allowed) {
    return {
      problem: {
        reason: Reason.RefNotPermitted,
        message: `certificate reference ${kind} ${namespace}/${ref.name} not permitted by any ReferenceGrant`,
      },
    }
  }
  return {
    credential: namespace === gateway.meta.namespace ? ref.name : `kubernetes-gateway://${namespace}/${ref.name}`,
  }
}

/** The TLS settings of a terminating listener, or none with the problems (ResolvedRefs). */
export const terminatingTls = (
  listener: Listener,
  gateway: ConfigResource<KubernetesGatewaySpec>,
  grants: ReferenceGrants,
  problems: Array<Problem>,
): ServerTls | undefined => {
  const refs = listener.tls?.certificateRefs ?? []
  if (refs.length === 0) {
    problems.push({
      reason: Reason.InvalidCertificateRef,
      message: "no certificateRefs: a terminating listener needs one",
    })
    return undefined
  }
  const credentials: Array<string> = []
  for (const ref of refs) {
    const resolved = credentialOf(ref, gateway, grants, ["Secret"])
    if ("problem" in resolved) problems.push(resolved.problem)
    else credentials.push(resolved.credential)
  }
  // The client CA bundle itself is served as the credential's `-cacert` companion (the mesh's
  // SDS naming); its references are still checked so a refused one is reported.
  const caRefs = listener.tls?.frontendValidation?.caCertificateRefs ?? []
  for (const ref of caRefs) {
    const resolved = credentialOf(ref, gateway, grants, ["ConfigMap", "Secret"])
    if ("problem" in resolved) problems.push(resolved.problem)
  }
  if (problems.length > 0) return undefined
  return {
    mode: caRefs.length > 0 ? "MUTUAL" : "SIMPLE",
    ...(credentials.length === 1 ? { credentialName: credentials[0]! } : { credentialNames: credentials }),
  }
}
