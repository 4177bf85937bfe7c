/**
 * The Gateway-API CustomResourceDefinitions for a real orchestrator API server, as a cluster's own
 * install provides them (the mesh does not install them). Their schemas keep every field: the tests
 * check the mesh's controllers, not the Gateway API's own validation.
 */
import { crdSources } from "../../src/services/config-model/crd-versions.js"
import { apiKindOf, GATEWAY_API_GROUP, GATEWAY_API_X_GROUP } from "../../src/services/config-model/kinds.js"

// biome-ignore lint/suspicious/noExplicitAny: plain API objects
export const gatewayApiCrds = (): Array<{ metadata: { name: string } } & Record<string, any>> =>
  // The experimental kinds too, as the experimental channel's install serves them.
  crdSources({ gatewayApi: true, alphaGatewayApi: true })
    .filter((s) => s.group === GATEWAY_API_GROUP || s.group === GATEWAY_API_X_GROUP)
    .map((s) => {
      const kind = apiKindOf(s.info)
      return {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: {
          name: `${s.info.plural}.${s.group}`,
          // *.k8s.io groups are protected: the API server wants the API review's approval, as the
          // Gateway API's own CRDs carry it.
          annotations: { "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/1923" },
        },
        spec: {
          group: s.group,
          names: { kind, listKind: `${kind}List`, plural: s.info.plural, singular: kind.toLowerCase() },
          scope: s.info.namespaced ? "Namespaced" : "Cluster",
          versions: [s.info.version, ...s.info.versions.filter((v) => v !== s.info.version)].map((name, i) => ({
            name,
            served: true,
            storage: i === 0,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            subresources: { status: {} },
          })),
        },
      }
    })
