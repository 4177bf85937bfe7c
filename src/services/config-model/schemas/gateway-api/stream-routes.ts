/**
 * gateway.networking.k8s.io TCPRoute and TLSRoute (alpha upstream): connections forwarded to
 * weighted backends, TLS ones chosen by SNI hostname.
 */
import { Schema } from "effect"
import { checked, opt } from "../common.js"
import { MAX_RULES, ruleNamesProblems } from "./matches.js"
import { Hostname, listOf, SectionName } from "./names.js"
import { BackendRef, ParentRefs } from "./references.js"

const MAX_HOSTNAMES = 16
const MAX_BACKENDS = 16

const StreamRouteRule = Schema.Struct({
  name: opt(SectionName),
  backendRefs: opt(listOf(BackendRef, { min: 1, max: MAX_BACKENDS })),
})

const StreamRouteRules = listOf(StreamRouteRule, { min: 1, max: MAX_RULES }).pipe(checked(ruleNamesProblems))

export const TCPRoute = Schema.Struct({ parentRefs: opt(ParentRefs), rules: StreamRouteRules })

export const TLSRoute = Schema.Struct({
  parentRefs: opt(ParentRefs),
  hostnames: opt(listOf(Hostname, { max: MAX_HOSTNAMES })),
  rules: StreamRouteRules,
})
