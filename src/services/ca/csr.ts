/**
 * Certificate signing requests: parsed from PEM, signature verified, key type checked
 * (RSA of at least 2048 bits, ECDSA on P-256 or P-384) and subject alternative names extracted.
 */
import { createPublicKey, type KeyObject } from "node:crypto"
import { Effect } from "effect"
import { CsrError } from "./errors.js"
import { x509 } from "./x509.js"

export const MIN_RSA_BITS = 2048
export const MAX_RSA_BITS = 8192
const CURVES: Record<string, string> = { prime256v1: "P-256", secp384r1: "P-384" }

export interface SubjectAltNames {
  readonly uris: ReadonlyArray<string>
  readonly dnsNames: ReadonlyArray<string>
  readonly ips: ReadonlyArray<string>
  readonly emails: ReadonlyArray<string>
}

export interface ParsedCsr {
  readonly csr: x509.Pkcs10CertificateRequest
  readonly publicKey: KeyObject
  /** "RSA-2048", "EC-P-256", ... */
  readonly keyDescription: string
  readonly sans: SubjectAltNames
}

const emptySans: SubjectAltNames = { uris: [], dnsNames: [], ips: [], emails: [] }

/** The SANs of an extension list (certificate or CSR). */
export const sansOf = (extensions: ReadonlyArray<x509.Extension>): SubjectAltNames => {
  const ext = extensions.find((e) => e.type === "2.5.29.17")
  if (ext === undefined) return emptySans
  const san =
    ext instanceof x509.SubjectAlternativeNameExtension ? ext : new x509.SubjectAlternativeNameExtension(ext.rawData)
  const pick = (type: string) => san.names.items.filter((n) => n.type === type).map((n) => n.value)
  return { uris: pick("url"), dnsNames: pick("dns"), ips: pick("ip"), emails: pick("email") }
}

const describeKey = (key: KeyObject): string | CsrError => {
  const details = key.asymmetricKeyDetails ?? {}
  switch (key.asymmetricKeyType) {
    case "rsa": {
      const bits = details.modulusLength ?? 0
      if (bits < MIN_RSA_BITS || bits > MAX_RSA_BITS) {
        return new CsrError({ reason: `RSA key size ${bits} is not allowed (${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits)` })
      }
      return `RSA-${bits}`
    }
    case "ec": {
      const curve = CURVES[details.namedCurve ?? ""]
      if (curve === undefined) {
        return new CsrError({ reason: `EC curve ${details.namedCurve ?? "unknown"} is not allowed (P-256 or P-384)` })
      }
      return `EC-${curve}`
    }
    default:
      return new CsrError({ reason: `key type ${key.asymmetricKeyType ?? "unknown"} is not allowed (RSA or ECDSA)` })
  }
}

/** Parses and verifies a PEM CSR. */
export const parseCsr = (pem: string): Effect.Effect<ParsedCsr, CsrError> =>
  Effect.gen(function* () {
    if (typeof pem !== "string" || !pem.includes("-----BEGIN CERTIFICATE REQUEST-----")) {
      return yield* new CsrError({ reason: "failed to decode the CSR: no PEM block of type CERTIFICATE REQUEST" })
    }
    const csr = yield* Effect.try({
      try: () => new x509.Pkcs10CertificateRequest(pem.trim()),
      catch: (e) => new CsrError({ reason: `failed to parse the CSR: ${(e as Error).message}` }),
    })
    const publicKey = yield* Effect.try({
      try: () => createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: "der", type: "spki" }),
      catch: (e) => new CsrError({ reason: `failed to read the CSR public key: ${(e as Error).message}` }),
    })
    const description = describeKey(publicKey)
    if (description instanceof CsrError) return yield* description
    const valid = yield* Effect.tryPromise({
      try: () => csr.verify(),
      catch: (e) => new CsrError({ reason: `failed to check the CSR signature: ${(e as Error).message}` }),
    })
    if (!valid) return yield* new CsrError({ reason: "the CSR signature is invalid" })
    const sans = yield* Effect.try({
      try: () => sansOf(csr.extensions),
      catch: (e) =>
        new CsrError({ reason: `failed to read the CSR subject alternative names: ${(e as Error).message}` }),
    })
    return { csr, publicKey, keyDescription: description, sans }
  })
