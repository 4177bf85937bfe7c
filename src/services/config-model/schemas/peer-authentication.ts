/** security.mesh.io PeerAuthentication: mutual TLS mode for workloads receiving traffic. */
import { Schema } from "effect"
import { checked, Enum, opt, structuralKeywords, WorkloadSelector } from "./common.js"

export const MutualTLSMode = Enum("UNSET", "DISABLE", "PERMISSIVE", "STRICT")
const MutualTLS = Schema.Struct({ mode: opt(MutualTLSMode) })

export const PeerAuthentication = Schema.Struct({
  selector: opt(WorkloadSelector),
  mtls: opt(MutualTLS),
  portLevelMtls: opt(
    Schema.Record({ key: Schema.String, value: MutualTLS }).annotations(structuralKeywords({ minProperties: 1 })),
  ),
})
  .annotations(
    // Port-level mTLS only with a selector that has labels (an empty portLevelMtls is refused by itself).
    structuralKeywords({
      anyOf: [
        { not: { required: ["portLevelMtls"] } },
        {
          required: ["selector"],
          properties: { selector: { required: ["matchLabels"], properties: { matchLabels: { minProperties: 1 } } } },
        },
      ],
    }),
  )
  .pipe(
    checked((pa, report) => {
      const emptySelector = pa.selector === undefined || Object.keys(pa.selector.matchLabels ?? {}).length === 0
      const ports = Object.keys(pa.portLevelMtls ?? {})
      if (emptySelector && ports.length > 0) {
        report(["portLevelMtls"], "mesh/namespace peer authentication cannot have port level mTLS")
      }
      if (pa.portLevelMtls !== undefined && ports.length === 0) {
        report(["portLevelMtls"], "port level mTLS, if defined, must have at least one element")
      }
      for (const port of ports) {
        const n = Number(port)
        if (!/^\d+$/.test(port) || n <= 0 || n > 65535)
          report(["portLevelMtls", port], "port must be in range 1..65535")
      }
    }),
  )
export type PeerAuthenticationSpec = typeof PeerAuthentication.Type
