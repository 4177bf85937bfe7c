/**
 * DestinationRule TLS: SIMPLE or MUTUAL origination without a CA to verify the server
 * (MSH0128 at the destination level, MSH0129 per port).
 */
import type { Analyzer } from "../analyzer.js"
import { type MessageType, MessageTypes } from "../message-types.js"
import { arr, type Entry, type FieldPath, type Message, message, rec, type Snapshot, str } from "../snapshot.js"

const unverified = (tls: Readonly<Record<string, unknown>>): string | undefined => {
  const mode = str(tls.mode)
  if (mode !== "SIMPLE" && mode !== "MUTUAL") return undefined
  if (str(tls.caCertificates) !== "" || str(tls.credentialName) !== "" || tls.insecureSkipVerify === true)
    return undefined
  return mode
}

const check =
  (type: MessageType, portLevel: boolean) =>
  (snapshot: Snapshot): ReadonlyArray<Message> => {
    const out: Array<Message> = []
    const report = (dr: Entry, tls: unknown, path: FieldPath, port?: unknown) => {
      const mode = unverified(rec(tls))
      if (mode === undefined) return
      const host = str(dr.body.host)
      out.push(
        message(
          type,
          dr,
          port === undefined
            ? `DestinationRule ${dr.name} in namespace ${dr.namespace} has TLS mode set to ${mode} but no caCertificates are set to validate server identity for host: ${host}`
            : `DestinationRule ${dr.name} in namespace ${dr.namespace} has TLS mode set to ${mode} but no caCertificates are set to validate server identity for host: ${host} at port ${JSON.stringify(port)}`,
          path,
        ),
      )
    }
    for (const dr of snapshot.ofKind("DestinationRule")) {
      const policies: Array<[unknown, FieldPath]> = [[dr.body.trafficPolicy, ["spec", "trafficPolicy"]]]
      arr(dr.body.subsets).forEach((s, i) => {
        policies.push([rec(s).trafficPolicy, ["spec", "subsets", i, "trafficPolicy"]])
      })
      for (const [policy, path] of policies) {
        if (!portLevel) report(dr, rec(policy).tls, [...path, "tls"])
        else
          arr(rec(policy).portLevelSettings).forEach((p, i) => {
            report(dr, rec(p).tls, [...path, "portLevelSettings", i, "tls"], rec(rec(p).port).number)
          })
      }
    }
    return out
  }

export const destinationRuleAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "destinationrule.CaCertificateAnalyzer",
    description: "Checks TLS origination verifies the server at the destination level",
    types: [MessageTypes.NoServerCertificateVerificationDestinationLevel],
    run: check(MessageTypes.NoServerCertificateVerificationDestinationLevel, false),
  },
  {
    name: "destinationrule.PortLevelCaCertificateAnalyzer",
    description: "Checks TLS origination verifies the server in port-level settings",
    types: [MessageTypes.NoServerCertificateVerificationPortLevel],
    run: check(MessageTypes.NoServerCertificateVerificationPortLevel, true),
  },
]
