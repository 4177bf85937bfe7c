/**
 * Whether a workload is part of the mesh, as the reference's analyzers decide it: it runs the
 * proxy container (with an image), else its own `sidecar.mesh.io/inject` label, else that
 * annotation, says so; else its namespace's `mesh-injection=enabled` label (a namespace that is
 * not analyzed says no). A pod redirected to the node proxy (ambient) is in the mesh too.
 */
import { Annotations, Labels, MESH_DOMAIN } from "../../constants.js"
import { arr, type Entry, rec, type Snapshot, str, stringMap } from "../snapshot.js"
import { AMBIENT_MODE, DATAPLANE_MODE_LABEL, INJECTION_LABEL, PROXY_CONTAINERS } from "./injection.js"

export const AMBIENT_REDIRECTION = `ambient.${MESH_DOMAIN}/redirection`

const hasProxy = (containers: ReadonlyArray<unknown>): boolean =>
  containers.map(rec).some((c) => PROXY_CONTAINERS.has(str(c.name)) && str(c.image) !== "")

/** A namespace's injection label as a verdict: undefined when the namespace is not analyzed. */
export type NamespaceInjection = (namespace: string) => boolean | undefined

export const namespaceInjection = (snapshot: Snapshot): NamespaceInjection => {
  const labels = new Map(snapshot.ofKind("Namespace", "").map((n) => [n.name, n.labels]))
  return (namespace) => {
    const found = labels.get(namespace)
    return found === undefined ? undefined : found[INJECTION_LABEL] === "enabled"
  }
}

const inMesh = (
  annotations: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
  namespace: string,
  containers: ReadonlyArray<unknown>,
  injection: NamespaceInjection,
): boolean => {
  if (hasProxy(containers)) return true
  const label = labels[Annotations.sidecarInject]
  if (label !== undefined) return label === "true"
  const annotation = annotations[Annotations.sidecarInject]
  if (annotation !== undefined) return annotation === "true"
  return injection(namespace) ?? false
}

export const podInMesh = (pod: Entry, injection: NamespaceInjection): boolean => {
  const spec = rec(pod.body.spec)
  return inMesh(
    pod.annotations,
    pod.labels,
    pod.namespace,
    [...arr(spec.containers), ...arr(spec.initContainers)],
    injection,
  )
}

export const deploymentInMesh = (deployment: Entry, injection: NamespaceInjection): boolean => {
  const template = rec(rec(deployment.body.spec).template)
  const metadata = rec(template.metadata)
  return inMesh(
    stringMap(metadata.annotations),
    stringMap(metadata.labels),
    deployment.namespace,
    arr(rec(template.spec).containers),
    injection,
  )
}

export const podInAmbient = (pod: Entry): boolean => pod.annotations[AMBIENT_REDIRECTION] === "enabled"

/**
 * Whether a namespace runs ambient: labelled `mesh.io/dataplane-mode: ambient` and not also
 * labelled for sidecar injection (the legacy label enabled, or a revision).
 */
export const namespaceInAmbient = (namespace: Entry): boolean =>
  namespace.labels[INJECTION_LABEL] !== "enabled" &&
  (namespace.labels[Labels.revision] ?? "") === "" &&
  namespace.labels[DATAPLANE_MODE_LABEL] === AMBIENT_MODE
