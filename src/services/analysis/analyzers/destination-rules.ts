/**
 * DestinationRule TLS origination without a CA to verify the server, as the reference's
 * destinationrule.CaCertificateAnalyzer checks it: the rule's top-level traffic policy
 * (MSH0128) and its port-level settings (MSH0129), SIMPLE or MUTUAL mode. A `credentialName`
 * counts only in a DestinationRule with a `workloadSelector` (elsewhere it does not supply the
 * CA); `insecureSkipVerify` does not silence it. The rule is named `namespace/name`, a port as
 * its selector is printed (`number:443`).
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, rec, type Snapshot, str } from "../snapshot.js"

const unverified = (dr: Entry, tls: Readonly<Record<string, unknown>>): string | undefined => {
  const mode = str(tls.mode)
  if (mode !== "SIMPLE" && mode !== "MUTUAL") return undefined
  if (str(tls.caCertificates) !== "") return undefined
  if (str(tls.credentialName) !== "" && dr.body.workloadSelector !== undefined && dr.body.workloadSelector !== null)
    return undefined
  return mode
}

const caCertificates = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const dr of snapshot.ofKind("DestinationRule")) {
    const policy = rec(dr.body.trafficPolicy)
    const host = str(dr.body.host)
    const prefix = `DestinationRule ${dr.namespace}/${dr.name} in namespace ${dr.namespace} has TLS mode set to`
    const mode = unverified(dr, rec(policy.tls))
    if (mode !== undefined)
      out.push(
        message(
          MessageTypes.NoServerCertificateVerificationDestinationLevel,
          dr,
          `${prefix} ${mode} but no caCertificates are set to validate server identity for host: ${host}`,
          ["spec", "trafficPolicy", "tls", "mode"],
        ),
      )
    arr(policy.portLevelSettings).forEach((p, i) => {
      const portMode = unverified(dr, rec(rec(p).tls))
      if (portMode === undefined) return
      const number = rec(rec(p).port).number
      const port = typeof number === "number" && number !== 0 ? `number:${number}` : ""
      out.push(
        message(
          MessageTypes.NoServerCertificateVerificationPortLevel,
          dr,
          `${prefix} ${portMode} but no caCertificates are set to validate server identity for host: ${host} at port ${port}`,
          ["spec", "trafficPolicy", "portLevelSettings", i, "tls", "mode"],
        ),
      )
    })
  }
  return out
}

export const destinationRuleAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "destinationrule.CaCertificateAnalyzer",
    description: "Checks if caCertificates is set when TLS mode is SIMPLE/MUTUAL",
    types: [
      MessageTypes.NoServerCertificateVerificationDestinationLevel,
      MessageTypes.NoServerCertificateVerificationPortLevel,
    ],
    run: caCertificates,
  },
]
