/**
 * Injection analyzers: namespaces that opt neither in nor out (MSH0102) or carry both injection
 * labels (MSH0123); pods of injected namespaces without the proxy (MSH0103) or running another
 * proxy image than their namespace's other injected pods (MSH0158).
 */
import { Annotations, Labels, SYSTEM_NAMESPACE } from "../../constants.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, groupBy, type Message, message, rec, type Snapshot, str } from "../snapshot.js"

export const INJECTION_LABEL = "mesh-injection"
const PROXY_CONTAINERS = new Set(["mesh-proxy", "istio-proxy"])
/** The `app` label of the control-plane (meshd) pods. */
const CONTROL_PLANE_APP = "meshd"
const SKIPPED = new Set(["kube-system", "kube-public", "kube-node-lease", "local-path-storage", SYSTEM_NAMESPACE])

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

const notInjected = (snapshot: Snapshot): ReadonlyArray<Message> =>
  snapshot
    .ofKind("Namespace", "")
    .filter(
      (ns) =>
        !SKIPPED.has(ns.name) && ns.labels[INJECTION_LABEL] === undefined && ns.labels[Labels.revision] === undefined,
    )
    .map((ns) =>
      message(
        MessageTypes.NamespaceNotInjected,
        ns,
        `The namespace is not enabled for mesh injection. Run 'kubectl label namespace ${ns.name} ${INJECTION_LABEL}=enabled' to enable it, or 'kubectl label namespace ${ns.name} ${INJECTION_LABEL}=disabled' to explicitly mark it as not needing injection.`,
      ),
    )

const multipleLabels = (snapshot: Snapshot): ReadonlyArray<Message> =>
  snapshot
    .ofKind("Namespace", "")
    .filter((ns) => ns.labels[INJECTION_LABEL] !== undefined && ns.labels[Labels.revision] !== undefined)
    .map((ns) =>
      message(
        MessageTypes.NamespaceMultipleInjectionLabels,
        ns,
        `The namespace has both new and legacy injection labels. Run 'kubectl label namespace ${ns.name} ${Labels.revision}-' or 'kubectl label namespace ${ns.name} ${INJECTION_LABEL}-'`,
      ),
    )

const proxyContainer = (pod: Entry): Readonly<Record<string, unknown>> | undefined =>
  arr(rec(pod.body.spec).containers)
    .map(rec)
    .find((c) => PROXY_CONTAINERS.has(str(c.name)))

/** Whether a pod opted out (`sidecar.mesh.io/inject: "false"`, label or annotation) or uses the host network. */
const optedOut = (pod: Entry): boolean =>
  pod.labels[Annotations.sidecarInject] === "false" ||
  pod.annotations[Annotations.sidecarInject] === "false" ||
  rec(pod.body.spec).hostNetwork === true

const missingProxy = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const injected = injectedNamespaces(snapshot)
  return snapshot
    .ofKind("Pod", "")
    .filter((pod) => injected.has(pod.namespace) && !optedOut(pod) && proxyContainer(pod) === undefined)
    .map((pod) =>
      message(
        MessageTypes.PodMissingProxy,
        pod,
        "The pod is missing the mesh proxy. This can often be resolved by restarting or redeploying the workload.",
      ),
    )
}

const imageMismatch = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const injected = injectedNamespaces(snapshot)
  const out: Array<Message> = []
  const pods = snapshot.ofKind("Pod", "").filter((p) => injected.has(p.namespace))
  for (const [namespace, list] of groupBy(pods, (p) => p.namespace)) {
    const withImage = list.flatMap((pod) => {
      const image = str(proxyContainer(pod)?.image)
      return image === "" ? [] : [{ pod, image }]
    })
    const counts = groupBy(withImage, (x) => x.image)
    if (counts.size < 2) continue
    // The image most pods run is taken as the injector's current one.
    const [current] = [...counts.entries()].sort((a, b) => b[1].length - a[1].length)[0]!
    const stale = withImage.filter((x) => x.image !== current).map((x) => x.pod.name)
    const ns = snapshot.ofKind("Namespace", "").find((n) => n.name === namespace)
    out.push(
      message(
        MessageTypes.PodsProxyImageMismatchInNamespace,
        ns ?? list[0],
        `The pods [${stale.join(", ")}] in namespace ${namespace} are not running the same proxy image (${current}) as the other injected pods. Restart or redeploy them to update their sidecars.`,
      ),
    )
  }
  return out
}

export const injectionAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "injection.Analyzer",
    description: "Checks namespaces are labelled for (or against) injection",
    types: [MessageTypes.NamespaceNotInjected],
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
    name: "injection.ImageMismatchAnalyzer",
    description: "Checks the injected pods of a namespace run one proxy image",
    types: [MessageTypes.PodsProxyImageMismatchInNamespace],
    run: imageMismatch,
  },
]
