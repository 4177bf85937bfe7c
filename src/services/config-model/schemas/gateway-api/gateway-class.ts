/** gateway.networking.k8s.io GatewayClass (cluster-scoped): which controller implements a class of Gateways. */
import { Schema } from "effect"
import { opt } from "../common.js"
import { ControllerName, Group, Kind, Namespace, ObjectName } from "./names.js"

const MAX_DESCRIPTION = 64

export const GatewayClass = Schema.Struct({
  controllerName: ControllerName,
  description: opt(
    Schema.String.pipe(
      Schema.filter((v) => (v.length > MAX_DESCRIPTION ? `must be at most ${MAX_DESCRIPTION} characters` : undefined)),
    ),
  ),
  parametersRef: opt(Schema.Struct({ group: Group, kind: Kind, name: ObjectName, namespace: opt(Namespace) })),
})
