/**
 * The Secrets a mesh Gateway's servers name in `tls.credentialName`, as the reference checks
 * them (gateway.SecretAnalyzer): the Gateway's namespace for this is that of the first Pod its
 * selector matches (no Pod: MSH0101 on the selector); the Secret must exist there (or where a
 * `ns/name` credential says), else MSH0101; and it must hold a certificate and key (`cert`/`key`
 * or `tls.crt`/`tls.key`, both non-empty) whose first PEM certificate parses and is valid at
 * the time of the analysis, else MSH0161.
 */
import { X509Certificate } from "node:crypto"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, rec, type Snapshot, selects, str, stringMap } from "../snapshot.js"
import { selectorString } from "./workload-selectors.js"

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/

/** A Secret's data value, decoded (`data` is base64, `stringData` plain); "" when absent. */
const secretValue = (secret: Entry, key: string): string => {
  const data = stringMap(secret.body.data)[key]
  if (data !== undefined) return Buffer.from(data, "base64").toString("utf8")
  return stringMap(secret.body.stringData)[key] ?? ""
}

/** The certificate of a Secret's key pair (generic keys first, as the reference reads them). */
const certificateOf = (secret: Entry): string | undefined => {
  for (const [cert, key] of [
    ["cert", "key"],
    ["tls.crt", "tls.key"],
  ] as const) {
    const certificate = secretValue(secret, cert)
    if (certificate !== "" && secretValue(secret, key) !== "") return certificate
  }
  return undefined
}

/** Whether a Secret can serve a server certificate at `now`. */
export const validCredential = (secret: Entry, now: number): boolean => {
  const block = certificateOf(secret)?.match(PEM_CERTIFICATE)?.[0]
  if (block === undefined) return false
  try {
    const certificate = new X509Certificate(block)
    return now >= Date.parse(certificate.validFrom) && now <= Date.parse(certificate.validTo)
  } catch {
    return false
  }
}

const gatewaySecrets = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const pods = snapshot.ofKind("Pod", "")
  const secrets = new Map(snapshot.ofKind("Secret", "").map((s) => [`${s.namespace}/${s.name}`, s]))
  const out: Array<Message> = []
  for (const gateway of snapshot.ofKind("Gateway", "networking.mesh.io")) {
    const selector = stringMap(gateway.body.selector)
    const namespace = pods.find((p) => selects(selector, p.labels))?.namespace
    if (namespace === undefined) {
      out.push(
        message(
          MessageTypes.ReferencedResourceNotFound,
          gateway,
          `Referenced selector not found: "${selectorString(selector)}"`,
          ["spec", "selector"],
        ),
      )
      continue
    }
    arr(gateway.body.servers).forEach((server, i) => {
      const credential = str(rec(rec(server).tls).credentialName)
      if (credential === "") return
      const path = ["spec", "servers", i, "tls", "credentialName"]
      const secret = secrets.get(credential.includes("/") ? credential : `${namespace}/${credential}`)
      if (secret === undefined)
        out.push(
          message(
            MessageTypes.ReferencedResourceNotFound,
            gateway,
            `Referenced credentialName not found: "${credential}"`,
            path,
          ),
        )
      else if (!validCredential(secret, snapshot.now))
        out.push(
          message(
            MessageTypes.InvalidGatewayCredential,
            gateway,
            `The credential referenced by the Gateway ${gateway.name} in namespace ${namespace} is invalid, which can cause the traffic not to work as expected.`,
            path,
          ),
        )
    })
  }
  return out
}

export const gatewaySecretAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "gateway.SecretAnalyzer",
    description: "Checks a gateway's referenced secrets for correctness",
    types: [MessageTypes.ReferencedResourceNotFound, MessageTypes.InvalidGatewayCredential],
    run: gatewaySecrets,
  },
]
