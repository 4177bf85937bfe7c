/**
 * Labels and annotations the templates put on an injected pod: the canonical service name and
 * revision (telemetry and the registry read them), the mTLS mode label, the revision that
 * injected the pod, and which container `kubectl logs/exec` pick by default. A value the pod
 * already has (under either spelling) is kept.
 */

import { stringAt } from "../orchestrator/json.js"
import { hasAliased } from "./aliased-metadata.js"
import { normalRevision } from "./decision.js"
import type { TemplateContext } from "./fragment.js"
import { InjectAnnotations, InjectLabels, OrchestratorNames, upstreamSpelling } from "./names.js"
import type { PodSettings } from "./pod-settings.js"

const existing = (labels: Readonly<Record<string, string>>, meshKey: string): string | undefined =>
  labels[meshKey] ?? labels[upstreamSpelling(meshKey)]

const firstSet = (...candidates: ReadonlyArray<string | undefined>): string | undefined =>
  candidates.find((c) => c !== undefined && c !== "")

export const canonicalLabels = (context: TemplateContext): Readonly<Record<string, string>> => {
  const labels = context.settings.labels
  return {
    [InjectLabels.canonicalName]:
      firstSet(
        existing(labels, InjectLabels.canonicalName),
        labels[OrchestratorNames.appName],
        labels[OrchestratorNames.app],
        context.owner.name,
      ) ?? "",
    [InjectLabels.canonicalRevision]:
      firstSet(
        existing(labels, InjectLabels.canonicalRevision),
        labels[OrchestratorNames.appVersion],
        labels[OrchestratorNames.version],
      ) ?? "latest",
  }
}

/**
 * The pod's network: its own `topology.mesh.io/network` label, else the values' `global.network`
 * ("" for none). The injector labels the pod with it (the registry reads the label) and hands it
 * to the agent as MESH_META_NETWORK.
 */
export const podNetwork = (settings: PodSettings): string =>
  existing(settings.labels, InjectLabels.network) ?? settings.values.network

/** Label values are at most 63 characters and start and end alphanumeric. */
const MAX_LABEL_VALUE = 63

/**
 * The sidecar template's canonical labels: the name cut to 63 characters and trimmed of `-_.`
 * at both ends, so that a long workload name (a generated one, say) still makes a valid label.
 */
export const sidecarCanonicalLabels = (context: TemplateContext): Readonly<Record<string, string>> => {
  const labels = canonicalLabels(context)
  const name = (labels[InjectLabels.canonicalName] ?? "").slice(0, MAX_LABEL_VALUE).replace(/^[-_.]+|[-_.]+$/g, "")
  return { ...labels, [InjectLabels.canonicalName]: name }
}

/** The pod's `service.mesh.io/workload-name` label (either spelling), which names its workload in telemetry. */
export const workloadNameLabel = (settings: PodSettings): string | undefined =>
  existing(settings.labels, InjectLabels.workloadName)

/** The peer-authentication mode the mesh's clients see for this workload: mutual TLS. */
export const tlsModeLabel = (context: TemplateContext): Readonly<Record<string, string>> => ({
  [InjectLabels.tlsMode]: existing(context.settings.labels, InjectLabels.tlsMode) ?? "mesh",
})

export const revisionAnnotation = (context: TemplateContext): Readonly<Record<string, string>> => ({
  [InjectAnnotations.revision]: normalRevision(context.revision),
})

/** The first application container becomes the default of `kubectl logs` / `kubectl exec`, unless set. */
export const defaultContainerAnnotations = (context: TemplateContext): Readonly<Record<string, string>> => {
  const first = stringAt(context.appContainers[0]?.name)
  if (first === undefined) return {}
  const annotations = context.settings.annotations
  return {
    ...(hasAliased(annotations, OrchestratorNames.defaultLogsContainer)
      ? {}
      : { [OrchestratorNames.defaultLogsContainer]: first }),
    ...(hasAliased(annotations, OrchestratorNames.defaultContainer)
      ? {}
      : { [OrchestratorNames.defaultContainer]: first }),
  }
}
