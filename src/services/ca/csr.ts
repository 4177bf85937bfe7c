/**
 * Certificate signing requests: parsed from PEM (PKCS#10, DER read directly), signature
 * verified with Node crypto, key type checked (RSA of at least 2048 bits, ECDSA on P-256 or
 * P-384) and subject alternative names extracted.
 */
import { createPublicKey, type KeyObject, verify } from "node:crypto"
import { Effect, Either } from "effect"
import { children, content, decodeOid, fromPemBlock, raw, read } from "./der.js"
import { CsrError } from "./errors.js"

export const MIN_RSA_BITS = 2048
export const MAX_RSA_BITS = 8192
const CURVES: Record<string, string> = { prime256v1: "P-256", secp384r1: "P-384" }

/** Signature algorithms accepted on a CSR: OID → hash. */
const SIGNATURE_HASHES: Record<string, string> = {
  "1.2.840.113549.1.1.11": "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  "1.2.840.10045.4.3.2": "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
}
const OID_EXTENSION_REQUEST = "1.2.840.113549.1.9.14"
const OID_SAN = "2.5.29.17"

export interface SubjectAltNames {
  readonly uris: ReadonlyArray<string>
  readonly dnsNames: ReadonlyArray<string>
  readonly ips: ReadonlyArray<string>
  readonly emails: ReadonlyArray<string>
}

export interface ParsedCsr {
  /** DER SubjectPublicKeyInfo of the requested key. */
  readonly spki: Buffer
  readonly publicKey: KeyObject
  /** "RSA-2048", "EC-P-256", ... */
  readonly keyDescription: string
  readonly sans: SubjectAltNames
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

const ipText = (bytes: Buffer): string => {
  if (bytes.length === 4) return [...bytes].join(".")
  const groups: Array<string> = []
  for (let i = 0; i < bytes.length; i += 2) groups.push(bytes.readUInt16BE(i).toString(16))
  return groups.join(":")
}

/** The SANs of a DER GeneralNames value. */
export const parseGeneralNames = (der: Buffer): SubjectAltNames => {
  const uris: Array<string> = []
  const dnsNames: Array<string> = []
  const ips: Array<string> = []
  const emails: Array<string> = []
  for (const name of children(der, read(der, 0))) {
    const value = content(der, name)
    switch (name.tag) {
      case 0x86:
        uris.push(value.toString("ascii"))
        break
      case 0x82:
        dnsNames.push(value.toString("ascii"))
        break
      case 0x87:
        ips.push(ipText(value))
        break
      case 0x81:
        emails.push(value.toString("ascii"))
        break
    }
  }
  return { uris, dnsNames, ips, emails }
}

const parseStructure = (der: Buffer) => {
  const root = read(der, 0)
  if (root.tag !== 0x30 || root.end !== der.length) throw new Error("not a DER SEQUENCE")
  const [info, algorithm, signature] = children(der, root)
  if (info?.tag !== 0x30 || algorithm?.tag !== 0x30 || signature?.tag !== 0x03)
    throw new Error("not a CertificationRequest")
  const [version, , spki, attributes] = children(der, info)
  if (version?.tag !== 0x02 || spki?.tag !== 0x30) throw new Error("not a CertificationRequestInfo")
  const algOid = children(der, algorithm)[0]
  if (algOid?.tag !== 0x06) throw new Error("invalid signature algorithm")
  const sig = content(der, signature)
  let sans: SubjectAltNames = { uris: [], dnsNames: [], ips: [], emails: [] }
  if (attributes !== undefined && attributes.tag === 0xa0) {
    for (const attribute of children(der, attributes)) {
      const [type, values] = children(der, attribute)
      if (type?.tag !== 0x06 || values === undefined || decodeOid(content(der, type)) !== OID_EXTENSION_REQUEST)
        continue
      for (const extensions of children(der, values)) {
        for (const extension of children(der, extensions)) {
          const parts = children(der, extension)
          const id = parts[0]
          const value = parts[parts.length - 1]
          if (id?.tag === 0x06 && value?.tag === 0x04 && decodeOid(content(der, id)) === OID_SAN) {
            sans = parseGeneralNames(content(der, value))
          }
        }
      }
    }
  }
  return {
    tbs: raw(der, info),
    spki: Buffer.from(raw(der, spki)),
    algorithm: decodeOid(content(der, algOid)),
    signature: sig.subarray(1),
    sans,
  }
}

const b64url = (bytes: Buffer) => {
  let i = 0
  while (i < bytes.length - 1 && bytes[i] === 0) i++
  return bytes.subarray(i).toString("base64url")
}
const JWK_CURVES: Record<string, { crv: string; size: number }> = {
  "1.2.840.10045.3.1.7": { crv: "P-256", size: 32 },
  "1.3.132.0.34": { crv: "P-384", size: 48 },
}

/**
 * A public key from DER SubjectPublicKeyInfo. RSA and uncompressed EC keys go through JWK,
 * which OpenSSL 3 imports several times faster than a DER SPKI; anything else through DER.
 */
export const publicKeyFromSpki = (spki: Buffer): KeyObject => {
  try {
    const [algorithm, bits] = children(spki, read(spki, 0))
    if (algorithm?.tag === 0x30 && bits?.tag === 0x03) {
      const [id, params] = children(spki, algorithm)
      const key = content(spki, bits).subarray(1)
      const alg = id?.tag === 0x06 ? decodeOid(content(spki, id)) : ""
      if (alg === "1.2.840.113549.1.1.1") {
        const [n, e] = children(key, read(key, 0))
        if (n?.tag === 0x02 && e?.tag === 0x02) {
          return createPublicKey({
            key: { kty: "RSA", n: b64url(content(key, n)), e: b64url(content(key, e)) },
            format: "jwk",
          })
        }
      } else if (alg === "1.2.840.10045.2.1" && params?.tag === 0x06) {
        const curve = JWK_CURVES[decodeOid(content(spki, params))]
        if (curve !== undefined && key[0] === 0x04 && key.length === 1 + 2 * curve.size) {
          const x = key.subarray(1, 1 + curve.size).toString("base64url")
          const y = key.subarray(1 + curve.size).toString("base64url")
          return createPublicKey({ key: { kty: "EC", crv: curve.crv, x, y }, format: "jwk" })
        }
      }
    }
  } catch {
    // fall through to the DER import, which reports the error
  }
  return createPublicKey({ key: spki, format: "der", type: "spki" })
}

const invalid = (reason: string) => Either.left(new CsrError({ reason }))

/**
 * Parses and verifies a PEM CSR, synchronously: the issuance path calls it once per request,
 * where every Effect step costs (see parseCsr for the Effect form).
 */
export const decodeCsr = (pem: string): Either.Either<ParsedCsr, CsrError> => {
  const der = typeof pem === "string" ? fromPemBlock(pem, "CERTIFICATE REQUEST") : undefined
  if (der === undefined) return invalid("failed to decode the CSR: no PEM block of type CERTIFICATE REQUEST")
  let parsed: ReturnType<typeof parseStructure>
  try {
    parsed = parseStructure(der)
  } catch (e) {
    return invalid(`failed to parse the CSR: ${(e as Error).message}`)
  }
  let publicKey: KeyObject
  try {
    publicKey = publicKeyFromSpki(parsed.spki)
  } catch (e) {
    return invalid(`failed to read the CSR public key: ${(e as Error).message}`)
  }
  const description = describeKey(publicKey)
  if (description instanceof CsrError) return Either.left(description)
  const hash = SIGNATURE_HASHES[parsed.algorithm]
  const family = publicKey.asymmetricKeyType === "rsa" ? "1.2.840.113549." : "1.2.840.10045."
  if (hash === undefined || !parsed.algorithm.startsWith(family)) {
    return invalid(`the CSR signature algorithm ${parsed.algorithm} is not supported`)
  }
  let valid = false
  try {
    valid = verify(hash, parsed.tbs, publicKey, parsed.signature)
  } catch {
    // a malformed signature value: invalid like a wrong one
  }
  if (!valid) return invalid("the CSR signature is invalid")
  return Either.right({ spki: parsed.spki, publicKey, keyDescription: description, sans: parsed.sans })
}

/** Parses and verifies a PEM CSR. */
export const parseCsr = (pem: string): Effect.Effect<ParsedCsr, CsrError> => Effect.suspend(() => decodeCsr(pem))
