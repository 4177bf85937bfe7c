/**
 * `meshctl analyze --meshNetworksFile`: the mesh networks the analysis checks, read with the
 * parser the control plane uses (so a bad file fails by file and field) and given to the
 * analyzers as one `MeshNetworks` object named `meshnetworks` in the mesh namespace, as the
 * reference names it in its messages.
 */
import { Either } from "effect"
import type { ValidationIssue } from "../config-model/resource.js"
import { parseMeshNetworks } from "../mesh-config/mesh-config.js"
import type { Entry } from "./snapshot.js"

export const MESH_NETWORKS_KIND = "MeshNetworks"
export const MESH_NETWORKS_NAME = "meshnetworks"

export const meshNetworksEntry = (
  file: string,
  text: string,
  meshNamespace: string,
): Either.Either<{ readonly entry: Entry; readonly warnings: ReadonlyArray<string> }, ReadonlyArray<ValidationIssue>> =>
  Either.map(parseMeshNetworks(file, text), ({ value, warnings }) => ({
    entry: {
      kind: MESH_NETWORKS_KIND,
      group: "",
      name: MESH_NETWORKS_NAME,
      namespace: meshNamespace,
      labels: {},
      annotations: {},
      body: value as unknown as Readonly<Record<string, unknown>>,
      origin: { file, documentIndex: 0, line: 1, text, textLine: 1 },
    },
    warnings,
  }))
