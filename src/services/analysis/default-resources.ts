/**
 * The objects a files-only analysis assumes the mesh installation provides (issue 35 group 2):
 * the default ingress gateway's Service and one Pod standing for its workload, in the mesh
 * namespace, named after the mesh config's `ingressService`. The reference adds the same pair
 * when it analyzes files alone, so a Gateway selecting the default ingress (`mesh:
 * ingressgateway`) finds its workload and has its ports checked against that Service. Nothing is
 * added when the mesh config turns the ingress controller off. The analyzed files come after
 * these and replace an object of the same name.
 */
import { DEFAULT_INGRESS_LABEL_VALUE, INGRESS_SELECTOR_LABEL } from "../ingress/model.js"
import type { MeshConfig } from "../mesh-config/mesh-config.js"

/** The origin file name messages about these objects carry. */
export const DEFAULT_RESOURCES_ORIGIN = "internal-ingress"

/** The default Service's ports: name, port (= target port) and node port. */
const INGRESS_PORTS: ReadonlyArray<readonly [string, number, number]> = [
  ["http2", 80, 31380],
  ["https", 443, 31390],
  ["tcp", 31400, 31400],
  ["tls", 15443, 31447],
]

/** The YAML of the default objects, or "" when the mesh config has no ingress controller. */
export const defaultIngressDocuments = (meshConfig: MeshConfig, meshNamespace: string): string => {
  if (meshConfig.ingressControllerMode === "OFF") return ""
  const service = meshConfig.ingressService
  const selector = `{${INGRESS_SELECTOR_LABEL}: ${DEFAULT_INGRESS_LABEL_VALUE}}`
  const ports = INGRESS_PORTS.map(
    ([name, port, nodePort]) =>
      `  - {name: ${name}, port: ${port}, targetPort: ${port}, nodePort: ${nodePort}, protocol: TCP}`,
  ).join("\n")
  return [
    "apiVersion: v1",
    "kind: Pod",
    `metadata: {name: ${JSON.stringify(`${service}-dummypod`)}, namespace: ${JSON.stringify(meshNamespace)}, labels: ${selector}}`,
    "spec:",
    "  containers:",
    "  - name: mesh-proxy",
    "---",
    "apiVersion: v1",
    "kind: Service",
    `metadata: {name: ${JSON.stringify(service)}, namespace: ${JSON.stringify(meshNamespace)}}`,
    "spec:",
    `  selector: ${selector}`,
    "  ports:",
    ports,
    "",
  ].join("\n")
}
