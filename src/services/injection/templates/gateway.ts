/**
 * The `gateway` template, for gateway deployments (`inject.mesh.io/templates: gateway`): the
 * `mesh-proxy` container in router mode and the agent's volumes; no capture (a gateway receives
 * its traffic directly). As in the reference, security context and resources are left to the
 * deployment's own `mesh-proxy` container (usually `image: auto`), which is merged over this one.
 */

import { normalRevision } from "../decision.js"
import type { Fragment, Template } from "../fragment.js"
import { emptyFragment } from "../fragment.js"
import { InjectLabels, upstreamSpelling } from "../names.js"
import { canonicalLabels, defaultContainerAnnotations } from "../pod-metadata.js"
import { proxyContainer } from "../proxy-container.js"
import { agentVolumes, mtlsCertsVolumes, userVolumes } from "../volumes.js"

export const gatewayTemplate: Template = (context): Fragment => {
  const labels = context.settings.labels
  const revisionLabel =
    labels[InjectLabels.revision] ?? labels[upstreamSpelling(InjectLabels.revision)] ?? normalRevision(context.revision)
  return {
    ...emptyFragment,
    containers: [proxyContainer({ ...context, capture: true }, "router")],
    volumes: [
      ...agentVolumes("proxy", context.settings.values.tokenAudience),
      ...mtlsCertsVolumes(context.settings),
      ...userVolumes(context.settings),
    ],
    imagePullSecrets: context.settings.values.imagePullSecrets,
    labels: { ...canonicalLabels(context), [InjectLabels.revision]: revisionLabel },
    annotations: defaultContainerAnnotations(context, true),
  }
}
