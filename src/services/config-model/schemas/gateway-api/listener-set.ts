/**
 * gateway.networking.k8s.io ListenerSet (v1 since Gateway API v1.5; before, the experimental
 * `gateway.networking.x-k8s.io` XListenerSet): listeners attached to a parent Gateway that
 * allows them (its `allowedListeners`). An entry is a Gateway listener whose port may be left
 * out (HTTP 80, HTTPS 443).
 */
import { Schema } from "effect"
import { checked, opt, type Report } from "../common.js"
import { AllowedRoutes, GatewayTLSConfig, listenerFieldProblems } from "./gateway.js"
import { Group, Hostname, Kind, listOf, Namespace, ObjectName, Port, ProtocolType, SectionName } from "./names.js"

const MAX_LISTENERS = 64

const ListenerEntry = Schema.Struct({
  name: SectionName,
  hostname: opt(Hostname),
  port: opt(Port),
  protocol: ProtocolType,
  tls: opt(GatewayTLSConfig),
  allowedRoutes: opt(AllowedRoutes),
}).pipe(checked(listenerFieldProblems))

/** Entry names are unique (the CRD's list-map key). */
const entriesProblems = (entries: ReadonlyArray<{ readonly name: string }>, report: Report) => {
  const names = new Set<string>()
  entries.forEach((entry, i) => {
    if (names.has(entry.name)) report([i, "name"], `duplicate listener name "${entry.name}"`)
    names.add(entry.name)
  })
}

export const ListenerSet = Schema.Struct({
  parentRef: Schema.Struct({ group: opt(Group), kind: opt(Kind), namespace: opt(Namespace), name: ObjectName }),
  listeners: listOf(ListenerEntry, { min: 1, max: MAX_LISTENERS }).pipe(checked(entriesProblems)),
})
