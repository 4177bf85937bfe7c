/**
 * Deprecated fields and removed kinds (MSH0002), the reference's deprecation.FieldAnalyzer:
 * `fault.delay.percent` on a VirtualService's HTTP routes (replaced by `percentage`), a
 * Sidecar's `outboundTrafficPolicy.egressProxy` (ignored), and the CRDs of the removed RBAC
 * kinds still installed; Telemetry tracing through a Lightstep provider.
 */
import { MESH_DOMAIN } from "../../constants.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Message, message, num, rec, type Snapshot, str } from "../snapshot.js"

const RBAC_GROUP = `rbac.${MESH_DOMAIN}`
const REMOVED_KINDS = new Set(["ClusterRbacConfig", "RbacConfig", "ServiceRole", "ServiceRoleBinding"])

const deprecated = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const vs of snapshot.ofKind("VirtualService"))
    arr(vs.body.http).forEach((route, i) => {
      if ((num(rec(rec(rec(route).fault).delay).percent) ?? 0) > 0)
        out.push(
          message(
            MessageTypes.Deprecated,
            vs,
            "Deprecated: HTTPRoute.fault.delay.percent is deprecated; use HTTPRoute.fault.delay.percentage",
            ["spec", "http", i, "fault", "delay", "percent"],
          ),
        )
    })
  for (const sidecar of snapshot.ofKind("Sidecar")) {
    const egressProxy = rec(sidecar.body.outboundTrafficPolicy).egressProxy
    if (egressProxy !== undefined && egressProxy !== null)
      out.push(
        message(MessageTypes.Deprecated, sidecar, "Deprecated: OutboundTrafficPolicy.EgressProxy ignored", [
          "spec",
          "outboundTrafficPolicy",
          "egressProxy",
        ]),
      )
  }
  for (const crd of snapshot.ofKind("CustomResourceDefinition")) {
    const spec = rec(crd.body.spec)
    const kind = str(rec(spec.names).kind)
    if (str(spec.group) === RBAC_GROUP && REMOVED_KINDS.has(kind))
      out.push(
        message(MessageTypes.Deprecated, crd, `Deprecated: Custom resource type ${RBAC_GROUP} ${kind} is removed`),
      )
  }
  return out
}

/** Telemetry tracing through a Lightstep provider of the mesh config, a deprecated provider kind. */
const lightstep = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const names = new Set(
    (snapshot.meshConfig.extensionProviders ?? []).flatMap((p) => {
      const provider = rec(p)
      return provider.lightstep === undefined ? [] : [str(provider.name)]
    }),
  )
  if (names.size === 0) return []
  const out: Array<Message> = []
  for (const t of snapshot.ofKind("Telemetry"))
    for (const tracing of arr(t.body.tracing))
      for (const provider of arr(rec(tracing).providers)) {
        const name = str(rec(provider).name)
        if (names.has(name))
          out.push(
            message(
              MessageTypes.Deprecated,
              t,
              `Deprecated: The Lightstep provider ${name} is deprecated, please migrate to OpenTelemetry provider.`,
            ),
          )
      }
  return out
}

export const deprecationAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "deprecation.DeprecationAnalyzer",
    description: "Checks for deprecated mesh types and fields",
    types: [MessageTypes.Deprecated],
    run: deprecated,
  },
  {
    name: "telemetry.LightstepAnalyzer",
    description: "Validates that lightstep provider is still used",
    types: [MessageTypes.Deprecated],
    run: lightstep,
  },
]
