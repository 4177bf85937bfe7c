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
import { caBundleProblem, caOfSecret, certificateSecretProblem, type TlsObjects } from "./tls-objects.js"

export type ServerTls = NonNullable<GatewaySpec["servers"][number]["tls"]>

/** The kind a ReferenceGrant names as the referrer: a Gateway, or a ListenerSet standing in for one. */
const ownerKind = (owner: ConfigResource<KubernetesGatewaySpec>): string =>
  owner.kind === "ListenerSet" ? "ListenerSet" : "Gateway"

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
    { group: GATEWAY_API_GROUP, kind: ownerKind(gateway), namespace: gateway.meta.namespace },
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
    // A ListenerSet's listeners are served by its parent's pods, maybe in another namespace: its
    // credentials always name their namespace.
    credential:
      namespace === gateway.meta.namespace && ownerKind(gateway) === "Gateway"
        ? ref.name
        : `kubernetes-gateway://${namespace}/${ref.name}`,
  }
}

const refText = (kind: string, namespace: string, name: string) => `${kind} ${namespace}/${name}`

/**
 * What is wrong with the object a permitted certificate reference names, when the referenced
 * objects are known (`objects`); undefined when it is usable or unknown.
 */
const certificateObjectProblem = (
  ref: SecretObjectReference,
  gateway: ConfigResource<KubernetesGatewaySpec>,
  objects: TlsObjects | undefined,
): Problem | undefined => {
  if (objects === undefined) return undefined
  const namespace = ref.namespace ?? gateway.meta.namespace
  const key = `${namespace}/${ref.name}`
  const secret = objects.secrets.get(key)
  const what = `invalid certificate reference ${refText("Secret", namespace, ref.name)}`
  if (secret === undefined) return { reason: Reason.InvalidCertificateRef, message: `${what}, secret ${key} not found` }
  const problem = certificateSecretProblem(secret)
  return problem === undefined ? undefined : { reason: Reason.InvalidCertificateRef, message: `${what}, ${problem}` }
}

/** The same for a CA certificate reference (a ConfigMap's `ca.crt` or a Secret's CA bundle). */
const caObjectProblem = (
  ref: SecretObjectReference,
  gateway: ConfigResource<KubernetesGatewaySpec>,
  objects: TlsObjects | undefined,
): Problem | undefined => {
  if (objects === undefined) return undefined
  const kind = ref.kind ?? "Secret"
  const namespace = ref.namespace ?? gateway.meta.namespace
  const key = `${namespace}/${ref.name}`
  const what = `invalid CA certificate reference ${refText(kind, namespace, ref.name)}`
  let bundle: string | undefined
  if (kind === "ConfigMap") {
    const data = objects.configMaps.get(key)
    if (data === undefined)
      return { reason: Reason.InvalidCACertificateRef, message: `${what}, configmap ${key} not found` }
    bundle = data["ca.crt"]
  } else {
    const secret = objects.secrets.get(key)
    if (secret === undefined)
      return { reason: Reason.InvalidCACertificateRef, message: `${what}, secret ${key} not found` }
    bundle = caOfSecret(secret)
  }
  const problem = caBundleProblem(bundle)
  return problem === undefined ? undefined : { reason: Reason.InvalidCACertificateRef, message: `${what}, ${problem}` }
}

/**
 * The TLS settings of a terminating listener, or none with the problems (ResolvedRefs). A
 * problem with the client CA references is also pushed to `caProblems` (the listener is then
 * not Accepted: NoValidCACertificate). With `objects`, the referenced Secrets and ConfigMaps are
 * checked too (missing or malformed).
 */
export const terminatingTls = (
  listener: Listener,
  gateway: ConfigResource<KubernetesGatewaySpec>,
  grants: ReferenceGrants,
  problems: Array<Problem>,
  caProblems: Array<Problem> = [],
  objects?: TlsObjects,
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
    if ("problem" in resolved) {
      problems.push(resolved.problem)
      continue
    }
    const problem = certificateObjectProblem(ref, gateway, objects)
    if (problem !== undefined) problems.push(problem)
    else credentials.push(resolved.credential)
  }
  // The client CA bundle itself is served as the credential's `-cacert` companion (the mesh's
  // SDS naming); its references are still checked so a refused one is reported.
  const caRefs = listener.tls?.frontendValidation?.caCertificateRefs ?? []
  for (const ref of caRefs) {
    const resolved = credentialOf(ref, gateway, grants, ["ConfigMap", "Secret"])
    const problem =
      "problem" in resolved
        ? resolved.problem.reason === Reason.InvalidCertificateRef
          ? { reason: Reason.InvalidCACertificateKind, message: resolved.problem.message }
          : resolved.problem
        : caObjectProblem(ref, gateway, objects)
    if (problem !== undefined) {
      problems.push(problem)
      caProblems.push(problem)
    }
  }
  if (problems.length > 0) return undefined
  return {
    mode: caRefs.length > 0 ? "MUTUAL" : "SIMPLE",
    ...(credentials.length === 1 ? { credentialName: credentials[0]! } : { credentialNames: credentials }),
  }
}
