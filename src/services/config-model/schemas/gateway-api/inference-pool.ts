/**
 * inference.networking.k8s.io/v1 InferencePool (the Gateway-API inference extension): the model
 * server pods a route may send to (`selector`, up to 8 `targetPorts`) and the endpoint picker,
 * an ext_proc service in the pool's namespace that chooses the pod for each request
 * (`endpointPickerRef`: its name, port, and whether requests go on when it fails). Limits are
 * the CRD's.
 */
import { Schema } from "effect"
import { Enum, opt, StringMap } from "../common.js"
import { Group, Kind, listOf, ObjectName, Port } from "./names.js"

const MAX_TARGET_PORTS = 8

export const EndpointPickerFailureMode = Enum("FailOpen", "FailClose")

export const InferencePool = Schema.Struct({
  selector: Schema.Struct({ matchLabels: StringMap }),
  targetPorts: listOf(Schema.Struct({ number: Port }), { min: 1, max: MAX_TARGET_PORTS }),
  appProtocol: opt(Schema.String),
  endpointPickerRef: Schema.Struct({
    group: opt(Group),
    kind: opt(Kind),
    name: ObjectName,
    port: opt(Schema.Struct({ number: Port })),
    failureMode: opt(EndpointPickerFailureMode),
  }),
})

export type InferencePoolSpec = Schema.Schema.Type<typeof InferencePool>
