/**
 * `meshctl manifest translate`: the reference turns the operator resource into the values its
 * charts read. This mesh renders without charts, so what the renderer reads is the fully
 * resolved operator resource: the profile with the `-f` overlays and `--set` flags applied and
 * the revision set, as one `IstioOperator` document.
 */
import { stringify } from "yaml"
import type { Obj } from "../orchestrator/json.js"
import { owningResourceName } from "./names.js"
import { OPERATOR_GROUP, OPERATOR_KIND, OPERATOR_VERSION } from "./operator.js"
import type { ResolvedOperator } from "./resolve.js"

export const TRANSLATED_FILE = "operator.yaml"

export const resolvedOperatorResource = (op: ResolvedOperator): Obj => ({
  apiVersion: `${OPERATOR_GROUP}/${OPERATOR_VERSION}`,
  kind: OPERATOR_KIND,
  metadata: { name: owningResourceName(op.revision), namespace: op.namespace },
  spec: {
    ...op.spec,
    ...(op.revision === "" ? {} : { revision: op.revision }),
    namespace: op.namespace,
    hub: op.hub,
    tag: op.tag,
  },
})

export const resolvedOperatorYaml = (op: ResolvedOperator): string =>
  stringify(resolvedOperatorResource(op), { lineWidth: 0, aliasDuplicateObjects: false })
