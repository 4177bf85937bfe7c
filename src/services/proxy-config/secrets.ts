/**
 * `proxy-config secret`: the SDS secrets of a dump (active and warming) with the first
 * certificate of each: its serial (decimal), validity window (RFC 3339, seconds) and whether
 * it is valid now. `Cert Chain` for workload certificates, `CA` for validation contexts.
 */
import { x509 } from "../ca/x509.js"
import { asObject, asObjects, asString, type ConfigDump, type Json, SECTION, section } from "./dump.js"
import { formatTable } from "./table.js"

export interface SecretRow {
  readonly name: string
  readonly type: "Cert Chain" | "CA" | ""
  readonly state: "ACTIVE" | "WARMING"
  readonly valid: boolean
  readonly serialNumber: string
  readonly notAfter: string
  readonly notBefore: string
}

/** The PEM text of a DataSource: `inline_bytes` is base64 in JSON, `inline_string` plain. */
const dataSourceText = (source: unknown): string => {
  const s = asObject(source)
  if (s === undefined) return ""
  if (typeof s.inline_bytes === "string") return Buffer.from(s.inline_bytes, "base64").toString("utf8")
  return asString(s.inline_string)
}

const rfc3339 = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, "Z")

const describeSecret = (name: string, secret: Json, state: SecretRow["state"], now: Date): SecretRow => {
  const chain = dataSourceText(asObject(secret.tls_certificate)?.certificate_chain)
  const ca = dataSourceText(asObject(secret.validation_context)?.trusted_ca)
  const type: SecretRow["type"] = chain !== "" ? "Cert Chain" : ca !== "" ? "CA" : ""
  const pem = chain || ca
  const base = { name, type, state, valid: false, serialNumber: "", notAfter: "", notBefore: "" }
  const first = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(pem)?.[0]
  if (first === undefined) return base
  try {
    const cert = new x509.X509Certificate(first)
    return {
      ...base,
      valid: cert.notBefore.getTime() <= now.getTime() && now.getTime() < cert.notAfter.getTime(),
      serialNumber: BigInt(`0x${cert.serialNumber}`).toString(10),
      notAfter: rfc3339(cert.notAfter),
      notBefore: rfc3339(cert.notBefore),
    }
  } catch {
    return base
  }
}

export const secretsOf = (dump: ConfigDump, now: Date = new Date()): ReadonlyArray<SecretRow> => {
  const s = section(dump, SECTION.secrets)
  if (s === undefined) return []
  const rows = (entries: unknown, state: SecretRow["state"]) =>
    asObjects(entries).map((e) =>
      describeSecret(asString(e.name) || asString(asObject(e.secret)?.name), asObject(e.secret) ?? {}, state, now),
    )
  return [
    ...rows(s.static_secrets, "ACTIVE"),
    ...rows(s.dynamic_active_secrets, "ACTIVE"),
    ...rows(s.dynamic_warming_secrets, "WARMING"),
  ]
}

export const secretTable = (rows: ReadonlyArray<SecretRow>): string =>
  formatTable([
    ["RESOURCE NAME", "TYPE", "STATUS", "VALID CERT", "SERIAL NUMBER", "NOT AFTER", "NOT BEFORE"],
    ...rows.map((r) => [r.name, r.type, r.state, `${r.valid}`, r.serialNumber, r.notAfter, r.notBefore]),
  ])

/** The root certificate a proxy trusts: its `ROOTCA` secret's PEM, else the first CA secret's. */
export const rootCaOf = (dump: ConfigDump): string | undefined => {
  const s = section(dump, SECTION.secrets)
  if (s === undefined) return undefined
  const entries = [...asObjects(s.static_secrets), ...asObjects(s.dynamic_active_secrets)]
  const caText = (e: Json) => dataSourceText(asObject(asObject(asObject(e.secret)?.validation_context))?.trusted_ca)
  const named = entries.find((e) => asString(e.name) === "ROOTCA" && caText(e) !== "")
  const any = named ?? entries.find((e) => caText(e) !== "")
  return any === undefined ? undefined : caText(any).trim()
}
