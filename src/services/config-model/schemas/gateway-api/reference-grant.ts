/**
 * gateway.networking.k8s.io ReferenceGrant: lets objects of the listed kinds in other namespaces
 * refer to objects of this namespace.
 */
import { Schema } from "effect"
import { opt } from "../common.js"
import { Group, Kind, listOf, Namespace, ObjectName } from "./names.js"

const MAX_ENTRIES = 16

export const ReferenceGrant = Schema.Struct({
  from: listOf(Schema.Struct({ group: Group, kind: Kind, namespace: Namespace }), { min: 1, max: MAX_ENTRIES }),
  to: listOf(Schema.Struct({ group: Group, kind: Kind, name: opt(ObjectName) }), { min: 1, max: MAX_ENTRIES }),
})
