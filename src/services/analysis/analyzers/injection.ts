/**
 * Injection analyzers: namespaces that opt neither in nor out (MSH0102, or MSH0148 when the
 * injector injects unlabelled namespaces; ambient namespaces are left alone) or carry more than
 * one kind of injection label (MSH0123); pods of injected namespaces without the proxy (MSH0103,
 * a native-sidecar proxy counts) or running another proxy image than their injector ConfigMap
 * configures (MSH0158).
 */

import { parse as parseYaml } from "yaml"
import { Annotations, Labels, MESH_DOMAIN, SYSTEM_NAMESPACE } from "../../constants.js"
import { DEFAULT_INJECTOR_NAME } from "../../revision-tags/names.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, rec, type Snapshot, selects, str, stringMap } from "../snapshot.js"
import { SYSTEM_NAMESPACES } from "../system-namespaces.js"

export const INJECTION_LABEL = "mesh-injection"
/** The proxy container names injection gives (ours and the upstream one). */
export const PROXY_CONTAINERS: ReadonlySet<string> = new Set(["mesh-proxy", "istio-proxy"])
/** The `app` label of the control-plane (meshd) pods. */
const CONTROL_PLANE_APP = "meshd"
const SKIPPED = new Set([...SYSTEM_NAMESPACES, SYSTEM_NAMESPACE])

/** The revision injecting a namespace: its `mesh.io/rev`, `default` for the legacy label; undefined if none. */
const namespaceRevision = (ns: Entry): string | undefined => {
  const revision = ns.labels[Labels.revision] ?? ""
  if (revision !== "") return revision
  return ns.labels[INJECTION_LABEL] === "enabled" ? "default" : undefined
}

/** Revisions known to run: the analyzed one and those of the control-plane pods analyzed. */
const installedRevisions = (snapshot: Snapshot): ReadonlySet<string> =>
  new Set([
    snapshot.revision,
    ...snapshot
      .ofKind("Pod", "")
      .filter((pod) => pod.labels.app === CONTROL_PLANE_APP)
      .map((pod) => pod.labels[Labels.revision] || "default"),
  ])

/**
 * The namespaces whose pods the pod checks look at: those injected by the analyzed revision, and
 * those pointing at a revision not known to run (nothing will inject their pods, so a missing
 * proxy is worth reporting, as the reference does). A namespace of another running revision is
 * that control plane's: analyze it with `--revision <its revision>`.
 */
const injectedNamespaces = (snapshot: Snapshot): ReadonlySet<string> => {
  const installed = installedRevisions(snapshot)
  const out = new Set<string>()
  for (const ns of snapshot.ofKind("Namespace", "")) {
    const revision = namespaceRevision(ns)
    if (revision !== undefined && (revision === snapshot.revision || !installed.has(revision))) out.add(ns.name)
  }
  return out
}

/** The label choosing a namespace's (or pod's) data plane: `ambient` takes it out of sidecar injection. */
export const DATAPLANE_MODE_LABEL = `${MESH_DOMAIN}/dataplane-mode`
export const AMBIENT_MODE = "ambient"
/** The injector's values key whose `sidecarInjectorWebhook.enableNamespacesByDefault` injects unlabelled namespaces. */
const INJECTOR_VALUES_KEY = "values"

/** The injector ConfigMap of a revision: `mesh-sidecar-injector`, or `mesh-sidecar-injector-<revision>`. */
const injectorName = (revision: string): string =>
  revision === "" || revision === "default" ? DEFAULT_INJECTOR_NAME : `${DEFAULT_INJECTOR_NAME}-${revision}`

/** Whether the injector ConfigMap of a revision injects namespaces that carry no label (its values JSON). */
const injectsByDefault = (snapshot: Snapshot, revision: string): boolean => {
  const name = injectorName(revision)
  const configMap = snapshot.ofKind("ConfigMap", "").find((c) => c.name === name)
  if (configMap === undefined) return false
  try {
    const values = JSON.parse(str(rec(configMap.body.data)[INJECTOR_VALUES_KEY])) as unknown
    return rec(rec(values).sidecarInjectorWebhook).enableNamespacesByDefault === true
  } catch {
    return false
  }
}

/**
 * Namespaces with neither injection label: not injected (MSH0102), or injected all the same
 * when the injector injects unlabelled namespaces (MSH0148). Ambient namespaces are not
 * sidecar-injected by design.
 */
const notInjected = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const ns of snapshot.ofKind("Namespace", "")) {
    if (SKIPPED.has(ns.name) || ns.labels[DATAPLANE_MODE_LABEL] === AMBIENT_MODE) continue
    if (ns.labels[INJECTION_LABEL] !== undefined || ns.labels[Labels.revision] !== undefined) continue
    out.push(
      injectsByDefault(snapshot, "")
        ? message(
            MessageTypes.NamespaceInjectionEnabledByDefault,
            ns,
            "is enabled for mesh injection, as the mesh is installed with enableNamespacesByDefault as true.",
          )
        : message(
            MessageTypes.NamespaceNotInjected,
            ns,
            `The namespace is not enabled for mesh injection. Run 'kubectl label namespace ${ns.name} ${INJECTION_LABEL}=enabled' to enable it, or 'kubectl label namespace ${ns.name} ${INJECTION_LABEL}=disabled' to explicitly mark it as not needing injection.`,
            ["metadata", "name"],
          ),
    )
  }
  return out
}

/**
 * The labels choosing how a namespace joins the mesh: the legacy injection label, and (unless
 * that label disables injection) the revision and data-plane-mode labels. More than one is
 * ambiguous (MSH0123).
 */
const multipleLabels = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const ns of snapshot.ofKind("Namespace", "")) {
    if (ns.name === SYSTEM_NAMESPACE) continue
    const legacy = ns.labels[INJECTION_LABEL]
    const found = legacy === undefined ? [] : [`${INJECTION_LABEL}=${legacy}`]
    for (const key of [Labels.revision, DATAPLANE_MODE_LABEL]) {
      const value = ns.labels[key]
      if (value !== undefined && (legacy === undefined || legacy === "enabled")) found.push(`${key}=${value}`)
    }
    if (found.length > 1)
      out.push(
        message(
          MessageTypes.NamespaceMultipleInjectionLabels,
          ns,
          `The namespace has more than one type of injection labels [${found.join(" ")}], which may lead to undefined behavior. Make sure only one injection label exists.`,
        ),
      )
  }
  return out
}

/** A pod's proxy container, a regular one or a native sidecar (an init container). */
const proxyContainers = (pod: Entry): ReadonlyArray<Readonly<Record<string, unknown>>> => {
  const spec = rec(pod.body.spec)
  return [...arr(spec.containers), ...arr(spec.initContainers)]
    .map(rec)
    .filter((c) => PROXY_CONTAINERS.has(str(c.name)))
}

/**
 * Whether a pod opted out (`sidecar.mesh.io/inject: "false"` in any case; the label wins over
 * the annotation) or uses the host network.
 */
const optedOut = (pod: Entry): boolean =>
  (pod.labels[Annotations.sidecarInject] ?? pod.annotations[Annotations.sidecarInject] ?? "").toLowerCase() ===
    "false" || rec(pod.body.spec).hostNetwork === true

const missingProxy = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const injected = injectedNamespaces(snapshot)
  return snapshot
    .ofKind("Pod", "")
    .filter(
      (pod) => injected.has(pod.namespace) && !optedOut(pod) && !proxyContainers(pod).some((c) => str(c.image) !== ""),
    )
    .map((pod) =>
      message(
        MessageTypes.PodMissingProxy,
        pod,
        `The pod ${pod.namespace}/${pod.name} is missing the mesh proxy. This can often be resolved by restarting or redeploying the workload.`,
      ),
    )
}

/** The proxy image an injector ConfigMap injects (`global.proxy.image`, with hub and tag unless a full name). */
export const injectorProxyImage = (configMap: Entry): string => {
  try {
    const global = rec(rec(JSON.parse(str(rec(configMap.body.data)[INJECTOR_VALUES_KEY])) as unknown).global)
    const image = str(rec(global.proxy).image)
    return image.includes("/") ? image : `${str(global.hub)}/${image}:${str(global.tag)}`
  } catch {
    return ""
  }
}

const PROXY_IMAGE_ANNOTATION = `sidecar.${MESH_DOMAIN}/proxyImage`
const PROXY_CONFIG_ANNOTATION = `proxy.${MESH_DOMAIN}/config`

/**
 * The image variant (`distroless`, ...) a pod's proxy runs, as the effective proxy config says:
 * mesh config defaults, then the root namespace's ProxyConfig, its namespace's, a selecting
 * one, then the pod's `proxy.mesh.io/config` annotation; `default` is no variant.
 */
const imageVariant = (snapshot: Snapshot) => {
  const imageType = (value: unknown) => str(rec(rec(value).image).imageType)
  const root = snapshot.meshConfig.rootNamespace
  const configs = snapshot.ofKind("ProxyConfig")
  return (pod: Entry): string => {
    let variant = imageType(snapshot.meshConfig.defaultConfig)
    const layers = [
      ...configs.filter((c) => c.namespace === root),
      ...configs.filter((c) => c.namespace === pod.namespace && c.namespace !== root && c.body.selector === undefined),
      ...configs.filter(
        (c) =>
          c.namespace === pod.namespace &&
          c.namespace !== root &&
          c.body.selector !== undefined &&
          selects(stringMap(rec(c.body.selector).matchLabels), pod.labels),
      ),
    ]
    for (const layer of layers) variant = imageType(layer.body) || variant
    const annotation = pod.annotations[PROXY_CONFIG_ANNOTATION]
    if (annotation !== undefined)
      try {
        variant = imageType(parseYaml(annotation)) || variant
      } catch {
        // An unreadable annotation leaves the variant as configured elsewhere.
      }
    return variant === "default" ? "" : variant
  }
}

/**
 * Pods of injected namespaces whose proxy image is neither the one their injector ConfigMap
 * (per revision) configures nor its variant (`<image>-<variant>`); a pod naming its own image
 * is skipped. One message per namespace, pod names sorted.
 */
const imageMismatch = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const configured = new Map<string, string>()
  for (const c of snapshot.ofKind("ConfigMap", ""))
    if (c.name.startsWith(DEFAULT_INJECTOR_NAME)) configured.set(c.name, injectorProxyImage(c))
  if (configured.size === 0) return []
  const namespaces = new Map<string, { readonly entry: Entry; readonly revision: string }>()
  for (const ns of snapshot.ofKind("Namespace", "")) {
    const revision = ns.labels[Labels.revision]
    if (revision !== undefined) namespaces.set(ns.name, { entry: ns, revision })
    else if (ns.labels[INJECTION_LABEL] === "enabled") namespaces.set(ns.name, { entry: ns, revision: "default" })
  }
  const variantOf = imageVariant(snapshot)
  const mismatched = new Map<string, Array<string>>()
  for (const pod of snapshot.ofKind("Pod", "")) {
    const ns = namespaces.get(pod.namespace)
    if (ns === undefined || (pod.annotations[PROXY_IMAGE_ANNOTATION] ?? "") !== "") continue
    const image = configured.get(injectorName(ns.revision))
    if (image === undefined) continue
    const variant = variantOf(pod)
    for (const c of proxyContainers(pod)) {
      const running = str(c.image)
      if (running === image || running === `${image}-${variant}`) continue
      const list = mismatched.get(pod.namespace)
      if (list === undefined) mismatched.set(pod.namespace, [pod.name])
      else list.push(pod.name)
    }
  }
  return [...mismatched].map(([namespace, pods]) =>
    message(
      MessageTypes.PodsProxyImageMismatchInNamespace,
      namespaces.get(namespace)?.entry,
      `The mesh proxy images of the pods running in the namespace do not match the image defined in the injection configuration (pod names: [${pods.sort().join(" ")}]). This often happens after upgrading the mesh control-plane and can be fixed by redeploying the pods.`,
    ),
  )
}

export const injectionAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "injection.NamespaceLabelAnalyzer",
    description: "Checks namespaces are labelled for (or against) injection",
    types: [MessageTypes.NamespaceNotInjected, MessageTypes.NamespaceInjectionEnabledByDefault],
    run: notInjected,
  },
  {
    name: "injection.MultipleLabelsAnalyzer",
    description: "Checks namespaces carry one injection label only",
    types: [MessageTypes.NamespaceMultipleInjectionLabels],
    run: multipleLabels,
  },
  {
    name: "injection.PodProxyAnalyzer",
    description: "Checks pods of injected namespaces run the mesh proxy",
    types: [MessageTypes.PodMissingProxy],
    run: missingProxy,
  },
  {
    name: "injection.ImageAnalyzer",
    description: "Checks the injected pods of a namespace run one proxy image",
    types: [MessageTypes.PodsProxyImageMismatchInNamespace],
    run: imageMismatch,
  },
]
