/**
 * OTEL_RESOURCE_ATTRIBUTES for the proxy, as the reference's injector writes it: only when a
 * mesh config OpenTelemetry provider asks for `serviceAttributeEnrichment:
 * OTEL_SEMANTIC_CONVENTIONS`. service.namespace (the `resource.opentelemetry.io/` annotation,
 * else the namespace), service.version (annotation, else the `app.kubernetes.io/version` label,
 * else a single container's image tag/digest) and service.instance.id (annotation, else
 * `<namespace>.$(POD_NAME).<first container>`, the orchestrator filling in the pod name).
 * Used by the built-in templates and by the ConfigMap templates' `otelResourceAttributes`.
 */
import { asArray, isObject, type Obj, stringAt } from "../orchestrator/json.js"

/** An image's tag and digest (`name:tag@digest`, a registry port not taken for a tag). */
const imageTagDigest = (image: string): { tag: string; digest: string } => {
  const at = image.indexOf("@")
  const digest = at >= 0 ? image.slice(at + 1) : ""
  const name = at >= 0 ? image.slice(0, at) : image
  const colon = name.lastIndexOf(":")
  return { tag: colon > name.lastIndexOf("/") ? name.slice(colon + 1) : "", digest }
}

/** "" when no provider asks for the semantic conventions. */
export const otelResourceAttributes = (
  meshConfig: unknown,
  annotations: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
  namespace: string,
  containers: ReadonlyArray<Obj>,
): string => {
  const providers = isObject(meshConfig) ? asArray(meshConfig.extensionProviders) : []
  const wanted = providers.some(
    (p) =>
      isObject(p) &&
      isObject(p.opentelemetry) &&
      p.opentelemetry.serviceAttributeEnrichment === "OTEL_SEMANTIC_CONVENTIONS",
  )
  if (!wanted) return ""
  const attrs: Array<string> = []
  const ann = (k: string) => annotations[`resource.opentelemetry.io/${k}`] ?? ""
  if (ann("service.namespace") !== "") attrs.push(`service.namespace=${ann("service.namespace")}`)
  else if (namespace !== "") attrs.push(`service.namespace=${namespace}`)
  if (ann("service.version") !== "") attrs.push(`service.version=${ann("service.version")}`)
  else if ((labels["app.kubernetes.io/version"] ?? "") !== "")
    attrs.push(`service.version=${labels["app.kubernetes.io/version"]}`)
  else if (containers.length === 1) {
    const { tag, digest } = imageTagDigest(stringAt(containers[0]?.image) ?? "")
    const version = tag !== "" && digest !== "" ? `${tag}@${digest}` : digest !== "" ? digest : tag
    if (version !== "") attrs.push(`service.version=${version}`)
  }
  if (ann("service.instance.id") !== "") attrs.push(`service.instance.id=${ann("service.instance.id")}`)
  else if (containers.length > 0)
    attrs.push(`service.instance.id=${namespace}.$(POD_NAME).${stringAt(containers[0]?.name) ?? ""}`)
  return attrs.join(",")
}
