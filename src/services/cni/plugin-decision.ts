/**
 * Whether the plugin programs capture for a pod, in the reference plugin's order: first from
 * the CNI arguments alone (not an orchestrator pod, an excluded namespace: no lookup needed),
 * then from the pod (captured by its own init container, proxy disabled, no injected sidecar,
 * not a sidecar proxy, injection turned off, no sidecar status annotation, interception NONE).
 */
import { Either } from "effect"
import { aliasedReader, hasAliased } from "../injection/aliased-metadata.js"
import { InjectAnnotations, InjectLabels } from "../injection/names.js"
import { type CaptureSettings, captureSettingsOf } from "./plugin-capture.js"
import type { MeshCniPluginConfig } from "./plugin-config.js"
import { CAPTURE_INIT_CONTAINER_NAMES, type PodFacts, parseGoBool } from "./plugin-pod.js"
import { type CniError, type CniInvocation, K8sArgs } from "./plugin-protocol.js"

export interface Skip {
  readonly _tag: "Skip"
  readonly reason: string
}

export type Decision = Skip | { readonly _tag: "Capture"; readonly settings: CaptureSettings }

export interface PodRef {
  readonly namespace: string
  readonly name: string
}

const skip = (reason: string): Skip => ({ _tag: "Skip", reason })

/** The pod to look up, or why none is needed. */
export const podToLookUp = (
  invocation: Pick<CniInvocation, "args">,
  config: Pick<MeshCniPluginConfig, "kubernetes">,
): Either.Either<PodRef, Skip> => {
  const namespace = invocation.args[K8sArgs.podNamespace] ?? ""
  const name = invocation.args[K8sArgs.podName] ?? ""
  if (namespace === "" || name === "") return Either.left(skip("not an orchestrator pod (no K8S_POD_NAME/NAMESPACE)"))
  if ((config.kubernetes.exclude_namespaces ?? []).includes(namespace)) {
    return Either.left(skip(`namespace ${namespace} is excluded`))
  }
  return Either.right({ namespace, name })
}

/** The interception mode the pod asks for, "" when it names none. */
const interceptionModeOf = (pod: PodFacts) =>
  aliasedReader(pod.annotations, "annotation").get(InjectAnnotations.interceptionMode)?.value ?? ""

export const decide = (pod: PodFacts): Either.Either<Decision, CniError> => {
  const init = pod.initContainers.find((name) => CAPTURE_INIT_CONTAINER_NAMES.includes(name))
  if (init !== undefined) return Either.right(skip(`captured by its own ${init} init container`))
  const proxy = pod.proxy
  if (proxy === undefined) return Either.right(skip("no injected proxy container"))
  for (const name of ["DISABLE_PROXY", "DISABLE_ENVOY"]) {
    if (Object.hasOwn(proxy.env, name) && parseGoBool(proxy.env[name]!) === true) {
      return Either.right(skip(`${name}=true on ${proxy.name}`))
    }
  }
  if (proxy.proxyType !== "" && proxy.proxyType !== "sidecar") {
    return Either.right(skip(`proxy type ${proxy.proxyType}, not sidecar`))
  }
  // The label is the newer API: it wins over the annotation when both are set.
  const label = aliasedReader(pod.labels, "label").get(InjectLabels.inject)
  const injection = label ?? aliasedReader(pod.annotations, "annotation").get(InjectAnnotations.inject)
  if (injection !== undefined && parseGoBool(injection.value) === false) {
    return Either.right(skip(`injection disabled by ${injection.key}=${injection.value}`))
  }
  if (!hasAliased(pod.annotations, InjectAnnotations.status)) {
    return Either.right(skip(`no ${InjectAnnotations.status} annotation`))
  }
  // The injector marks pods whose traffic must not be captured with mode NONE.
  if (interceptionModeOf(pod) === "NONE") return Either.right(skip("interception mode NONE"))
  return Either.map(captureSettingsOf(pod), (settings): Decision => ({ _tag: "Capture", settings }))
}
