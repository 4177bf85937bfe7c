/**
 * The `sidecar` template: the `mesh-proxy` container running `mesh-agent proxy sidecar`, the
 * agent's volumes, the workload labels (mTLS mode, canonical name and revision), the injecting
 * revision, the default container, and traffic capture (the `init` template).
 */
import type { Fragment, Template } from "../fragment.js"
import {
  defaultContainerAnnotations,
  revisionAnnotation,
  sidecarCanonicalLabels,
  tlsModeLabel,
} from "../pod-metadata.js"
import { proxyContainer } from "../proxy-container.js"
import { agentVolumes, crlVolume, mtlsCertsVolumes, userVolumes } from "../volumes.js"
import { captureTemplate } from "./capture.js"

export const sidecarTemplate: Template = (context): Fragment => {
  const capture = captureTemplate(context)
  return {
    ...capture,
    containers: [proxyContainer({ ...context, capture: true }, "sidecar")],
    volumes: [
      ...agentVolumes("proxy", context.settings.values.tokenAudience),
      crlVolume(context.settings.values.crlConfigMapName),
      ...mtlsCertsVolumes(context.settings),
      ...userVolumes(context.settings),
    ],
    imagePullSecrets: context.settings.values.imagePullSecrets,
    labels: { ...tlsModeLabel(context), ...sidecarCanonicalLabels(context) },
    annotations: { ...revisionAnnotation(context), ...defaultContainerAnnotations(context), ...capture.annotations },
  }
}
