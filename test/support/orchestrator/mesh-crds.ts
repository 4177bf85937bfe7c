/**
 * The mesh's custom resources as an orchestrator would serve them after an install: every mesh
 * kind under its mesh.io group (and, with `upstream`, the istio.io alias groups), every version.
 */
import { crdSources } from "../../../src/services/config-model/crd-versions.js"
import { apiKindOf, GATEWAY_API_GROUP, GATEWAY_API_X_GROUP } from "../../../src/services/config-model/kinds.js"
import type { CustomResource } from "./resources.js"

export const meshCustomResources = (options: { upstream?: boolean } = {}): Array<CustomResource> =>
  // The Gateway-API CRDs are not the mesh's: a cluster has them from its own install.
  crdSources({ gatewayApi: false })
    .filter((s) => options.upstream === true || !s.upstream)
    .map((s) => ({
      group: s.group,
      versions: [...s.info.versions].sort((a, b) => (a === s.info.version ? -1 : b === s.info.version ? 1 : 0)),
      kind: s.info.kind,
      plural: s.info.plural,
      namespaced: s.info.namespaced,
    }))

/** The Gateway-API CRDs as a cluster's own install serves them (kind as the API names it). */
export const gatewayApiCustomResources = (): Array<CustomResource> =>
  // The experimental kinds too, as the experimental channel's install serves them.
  crdSources({ gatewayApi: true, alphaGatewayApi: true })
    .filter((s) => s.group === GATEWAY_API_GROUP || s.group === GATEWAY_API_X_GROUP)
    .map((s) => ({
      group: s.group,
      versions: [s.info.version, ...s.info.versions.filter((v) => v !== s.info.version)],
      kind: apiKindOf(s.info),
      plural: s.info.plural,
      namespaced: s.info.namespaced,
    }))
