/** networking.mesh.io EnvoyFilter: patches to the generated proxy configuration. */
import { Schema } from "effect"
import {
  checked,
  Enum,
  Int32,
  NetworkingWorkloadSelector,
  opt,
  PolicyTargetReference,
  regexProblem,
  StringMap,
  Struct,
  structuralKeywords,
  UInt,
} from "./common.js"

export const ApplyTo = Enum(
  "INVALID",
  "LISTENER",
  "FILTER_CHAIN",
  "NETWORK_FILTER",
  "HTTP_FILTER",
  "ROUTE_CONFIGURATION",
  "VIRTUAL_HOST",
  "HTTP_ROUTE",
  "CLUSTER",
  "EXTENSION_CONFIG",
  "BOOTSTRAP",
  "LISTENER_FILTER",
)
export const PatchContext = Enum("ANY", "SIDECAR_INBOUND", "SIDECAR_OUTBOUND", "GATEWAY", "WAYPOINT")
export const Operation = Enum(
  "INVALID",
  "MERGE",
  "ADD",
  "REMOVE",
  "INSERT_BEFORE",
  "INSERT_AFTER",
  "INSERT_FIRST",
  "REPLACE",
  /** MERGE, except that a list in the value replaces the generated list instead of extending it. */
  "MERGE_AND_REPLACE_LIST",
)

const SubFilter = Schema.Struct({ name: opt(Schema.String) })
const FilterMatch = Schema.Struct({ name: opt(Schema.String), subFilter: opt(SubFilter) })
const FilterChainMatch = Schema.Struct({
  name: opt(Schema.String),
  sni: opt(Schema.String),
  transportProtocol: opt(Schema.String),
  applicationProtocols: opt(Schema.String),
  filter: opt(FilterMatch),
  destinationPort: opt(UInt),
})
const ListenerMatch = Schema.Struct({
  portNumber: opt(UInt),
  portName: opt(Schema.String),
  filterChain: opt(FilterChainMatch),
  listenerFilter: opt(Schema.String),
  name: opt(Schema.String),
})
const RouteConfigurationMatch = Schema.Struct({
  portNumber: opt(UInt),
  portName: opt(Schema.String),
  gateway: opt(Schema.String),
  vhost: opt(
    Schema.Struct({
      name: opt(Schema.String),
      domainName: opt(Schema.String),
      route: opt(
        Schema.Struct({ name: opt(Schema.String), action: opt(Enum("ANY", "ROUTE", "REDIRECT", "DIRECT_RESPONSE")) }),
      ),
    }),
  ),
  name: opt(Schema.String),
})
const ClusterMatch = Schema.Struct({
  portNumber: opt(UInt),
  service: opt(Schema.String),
  subset: opt(Schema.String),
  name: opt(Schema.String),
})

/** The waypoint's service port: the CRD's rule and message, stated as schema bounds. */
const WaypointPort = Schema.Number.pipe(
  Schema.filter(
    (n) => (Number.isInteger(n) && n >= 1 && n <= 65535 ? undefined : "port must be between 1-65535"),
    structuralKeywords({ type: "integer", minimum: 1, maximum: 65535 }),
  ),
)

/** A waypoint's service port, route and (sub)filter; only with the WAYPOINT context. */
const WaypointMatch = Schema.Struct({
  portNumber: opt(WaypointPort),
  route: opt(Schema.Struct({ name: opt(Schema.String) })),
  filter: opt(Schema.Struct({ name: opt(Schema.String), subFilter: opt(SubFilter) })),
})

const ObjectMatch = Schema.Struct({
  context: opt(PatchContext),
  proxy: opt(Schema.Struct({ proxyVersion: opt(Schema.String), metadata: opt(StringMap) })),
  listener: opt(ListenerMatch),
  routeConfiguration: opt(RouteConfigurationMatch),
  cluster: opt(ClusterMatch),
  waypoint: opt(WaypointMatch),
}).pipe(
  checked((match, report) => {
    // The CRD's rule, both ways: a WAYPOINT patch names its waypoint match, and only it may.
    if ((match.context === "WAYPOINT") !== (match.waypoint !== undefined)) {
      report(["waypoint"], "only support waypointMatch when context is WAYPOINT")
    }
  }),
)

const Patch = Schema.Struct({
  operation: opt(Operation),
  value: opt(Struct),
  filterClass: opt(Enum("UNSPECIFIED", "AUTHN", "AUTHZ", "STATS")),
}).annotations(
  // ConfigPatch's rule: a value unless the operation is REMOVE (a missing operation is refused too).
  structuralKeywords({
    anyOf: [{ required: ["value"] }, { required: ["operation"], properties: { operation: { enum: ["REMOVE"] } } }],
  }),
)

const LISTENER_CLASS = new Set(["LISTENER", "FILTER_CHAIN", "NETWORK_FILTER", "HTTP_FILTER", "LISTENER_FILTER"])
const HCM = "envoy.filters.network.http_connection_manager"
/** The connection manager's name and its legacy spelling: the only filter with sub filters. */
const HTTP_CONNECTION_MANAGERS = new Set([HCM, "envoy.http_connection_manager"])
const ROUTE_CLASS = new Set(["ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE"])

const ConfigPatch = Schema.Struct({
  applyTo: opt(ApplyTo),
  match: opt(ObjectMatch),
  patch: opt(Patch),
})
  .annotations(
    structuralKeywords({
      // A patch and an applyTo other than INVALID are required.
      allOf: [{ required: ["patch", "applyTo"], properties: { applyTo: { not: { enum: ["INVALID"] } } } }],
    }),
  )
  .pipe(
    checked((cp, report) => {
      // The reference checks waypoint patches only by the CRD's rules (the schema above), not these.
      if (cp.match?.context === "WAYPOINT") return
      const applyTo = cp.applyTo ?? "INVALID"
      if (cp.patch === undefined) {
        report(["patch"], "Envoy filter: missing patch")
        return
      }
      if (applyTo === "INVALID") report(["applyTo"], "Envoy filter: missing applyTo")
      const op = cp.patch.operation ?? "INVALID"
      if (op === "INVALID") report(["patch", "operation"], "Envoy filter: missing patch operation")
      if (op !== "REMOVE" && cp.patch.value === undefined) {
        report(["patch", "value"], "Envoy filter: missing patch value for non-remove operation")
      }
      const match = cp.match
      if (match?.proxy?.proxyVersion !== undefined && match.proxy.proxyVersion !== "") {
        const problem = regexProblem(match.proxy.proxyVersion)
        if (problem !== undefined)
          report(["match", "proxy", "proxyVersion"], `Envoy filter: invalid regex for proxy version, ${problem}`)
      }
      if (LISTENER_CLASS.has(applyTo)) {
        if (match?.routeConfiguration !== undefined || match?.cluster !== undefined) {
          report(["match"], "Envoy filter: applyTo for listener class objects cannot have non listener match")
        }
        if (applyTo === "LISTENER_FILTER" && match?.listener?.filterChain !== undefined) {
          report(
            ["match", "listener", "filterChain"],
            "Envoy filter: filter chain match cannot be set for LISTENER_FILTER",
          )
        }
        if (op === "INSERT_FIRST" || op === "INSERT_BEFORE" || op === "INSERT_AFTER") {
          if (applyTo !== "NETWORK_FILTER" && applyTo !== "HTTP_FILTER" && applyTo !== "LISTENER_FILTER") {
            report(["patch", "operation"], `Envoy filter: ${op} is valid only for network, http and listener filters`)
          }
        }
      } else if (ROUTE_CLASS.has(applyTo)) {
        if (match?.listener !== undefined || match?.cluster !== undefined) {
          report(
            ["match"],
            "Envoy filter: applyTo for http route class objects cannot have non route configuration match",
          )
        }
      } else if (applyTo === "CLUSTER") {
        if (match?.listener !== undefined || match?.routeConfiguration !== undefined) {
          report(["match"], "Envoy filter: applyTo for cluster class objects cannot have non cluster match")
        }
      }
      if (
        op === "REPLACE" &&
        applyTo !== "HTTP_FILTER" &&
        applyTo !== "NETWORK_FILTER" &&
        applyTo !== "CLUSTER" &&
        applyTo !== "LISTENER"
      ) {
        report(
          ["patch", "operation"],
          "Envoy filter: REPLACE is valid only for HTTP_FILTER, NETWORK_FILTER, CLUSTER and LISTENER",
        )
      }
      // ADD appends to a list (filters included: FilterClass places it); the reference ignores it
      // where there is no list (ROUTE_CONFIGURATION, HTTP_ROUTE) rather than refusing it.
      const filter = match?.listener?.filterChain?.filter
      if (filter !== undefined && LISTENER_CLASS.has(applyTo)) {
        const at = ["match", "listener", "filterChain", "filter"]
        if ((filter.name ?? "") === "") report(at, "Envoy filter: filter match has no name to match on")
        else if (filter.subFilter !== undefined) {
          if (applyTo !== "HTTP_FILTER") {
            report([...at, "subFilter"], "Envoy filter: subfilter match can be used with applyTo HTTP_FILTER only")
          }
          if (!HTTP_CONNECTION_MANAGERS.has(filter.name ?? "")) {
            report([...at, "subFilter"], `Envoy filter: subfilter match requires filter match with ${HCM}`)
          }
          if ((filter.subFilter.name ?? "") === "") {
            report([...at, "subFilter", "name"], "Envoy filter: subfilter match has no name to match on")
          }
        }
      }
    }),
  )

export const EnvoyFilter = Schema.Struct({
  workloadSelector: opt(NetworkingWorkloadSelector),
  targetRefs: opt(Schema.Array(PolicyTargetReference)),
  configPatches: opt(Schema.Array(ConfigPatch)),
  priority: opt(Int32),
})
  .annotations(
    structuralKeywords({
      not: { required: ["workloadSelector", "targetRefs"], properties: { targetRefs: { minItems: 1 } } },
    }),
  )
  .pipe(
    checked((ef, report) => {
      if (ef.workloadSelector !== undefined && (ef.targetRefs?.length ?? 0) > 0) {
        report([], "only one of targetRefs or workloadSelector can be set")
      }
    }),
  )
export type EnvoyFilterSpec = typeof EnvoyFilter.Type
