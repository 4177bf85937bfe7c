/**
 * The `gateway` template, for gateway deployments (`inject.mesh.io/templates: gateway`): the
 * `mesh-proxy` container in router mode and the agent's volumes; no capture (a gateway receives
 * its traffic directly). As in the reference, resources and the rest of the security context are
 * left to the deployment's own `mesh-proxy` container (usually `image: auto`), merged over this
 * one; the proxy runs as 1337, and the pod lets it bind ports below 1024 without privileges
 * (`net.ipv4.ip_unprivileged_port_start=0`) unless the values' `gateways.securityContext` gives
 * the pod's security context. The injecting revision is an annotation, as on sidecars.
 */

import type { Fragment, Template } from "../fragment.js"
import { emptyFragment } from "../fragment.js"
import { canonicalLabels, defaultContainerAnnotations, revisionAnnotation } from "../pod-metadata.js"
import { proxyContainer } from "../proxy-container.js"
import { agentVolumes, mtlsCertsVolumes, userVolumes } from "../volumes.js"

/** Lets the non-root proxy listen on 80 and 443. */
export const UNPRIVILEGED_PORTS_SYSCTL = { name: "net.ipv4.ip_unprivileged_port_start", value: "0" }

export const gatewayTemplate: Template = (context): Fragment => {
  const given = context.settings.values.gatewaySecurityContext
  return {
    ...emptyFragment,
    containers: [proxyContainer({ ...context, capture: true }, "router")],
    volumes: [
      ...agentVolumes("proxy", context.settings.values.tokenAudience),
      ...mtlsCertsVolumes(context.settings),
      ...userVolumes(context.settings),
    ],
    imagePullSecrets: context.settings.values.imagePullSecrets,
    labels: canonicalLabels(context),
    annotations: { ...revisionAnnotation(context), ...defaultContainerAnnotations(context) },
    podSecurityContext: Object.keys(given).length > 0 ? given : { sysctls: [UNPRIVILEGED_PORTS_SYSCTL] },
  }
}
