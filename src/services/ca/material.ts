/**
 * CA key material and certificate profiles: the signing certificate and key, the chain up to
 * the root, the trust bundle; the workload certificate profile (SPIFFE URI SAN, key usages
 * digitalSignature + keyEncipherment, extended key usages serverAuth + clientAuth, not a CA);
 * the self-signed root profile (O=<trust domain>, CA, keyCertSign).
 * Pure computation: keys and certificates in, certificates out; files and clocks live in layers.
 */
import { KeyObject, randomBytes, sign, type webcrypto } from "node:crypto"
import { Duration, Effect, Either } from "effect"
import * as der_ from "./der.js"
import { SignError } from "./errors.js"
import { validityWindow } from "./ttl.js"
import { x509 } from "./x509.js"

export type CryptoKey = webcrypto.CryptoKey

export interface SigningMaterial {
  /** The certificate that signs workload certificates (the root itself when self-signed). */
  readonly signingCert: x509.X509Certificate
  readonly signingKey: CryptoKey
  /** Certificates between the signing certificate and the root, nearest first. */
  readonly intermediates: ReadonlyArray<x509.X509Certificate>
  /** The root of the signing chain. */
  readonly root: x509.X509Certificate
  /** Every root a workload must trust: the current root first, then roots kept during a rotation. */
  readonly trustBundle: ReadonlyArray<x509.X509Certificate>
  readonly source: "self-signed" | "plugged"
}

export const toPem = (cert: x509.X509Certificate): string => `${cert.toString("pem")}\n`

/** The chain a response carries after the leaf: signing cert (unless it is the root), intermediates, root. */
export const chainAfterLeaf = (material: SigningMaterial): ReadonlyArray<x509.X509Certificate> => {
  const self = material.signingCert.equal(material.root)
  return [...(self ? [] : [material.signingCert]), ...material.intermediates, material.root]
}

export const trustBundlePem = (material: SigningMaterial): string => material.trustBundle.map(toPem).join("")

/**
 * What a CreateCertificate response carries after the leaf: the signing cert (unless it is the
 * root) and intermediates, then the whole trust bundle as one last element (every root, current
 * first), as the reference sends its root-cert.pem, so an agent's root file and ROOTCA hold every
 * root during a rotation.
 */
export const responseChainAfterLeaf = (material: SigningMaterial): ReadonlyArray<string> => [
  ...chainAfterLeaf(material).slice(0, -1).map(toPem),
  trustBundlePem(material),
]

/** The WebCrypto signature algorithm for a signing key. */
export const signingAlgorithm = (key: CryptoKey): webcrypto.AlgorithmIdentifier | webcrypto.EcdsaParams => {
  if (key.algorithm.name === "ECDSA") {
    const curve = (key.algorithm as webcrypto.EcKeyAlgorithm).namedCurve
    return { name: "ECDSA", hash: curve === "P-384" ? "SHA-384" : "SHA-256" } as webcrypto.EcdsaParams
  }
  return key.algorithm as webcrypto.Algorithm
}

/** A random positive 128-bit serial number, hex. */
export const randomSerial = (): string => {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0]! & 0x7f) | 0x01
  return bytes.toString("hex")
}

/** Key usages and extended key usages of workload (and server) certificates. */
export const WORKLOAD_KEY_USAGES = x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment
export const WORKLOAD_EXT_KEY_USAGES = [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]

export interface LeafRequest {
  /** DER SubjectPublicKeyInfo of the certified key. */
  readonly spki: Uint8Array
  readonly uris?: ReadonlyArray<string>
  readonly dnsNames?: ReadonlyArray<string>
  readonly ttl: Duration.Duration
  readonly nowMs: number
}

export interface IssuedLeaf {
  readonly pem: string
  readonly notBefore: Date
  readonly notAfter: Date
}

/**
 * What signing needs from the material, computed once per material: the key as a Node
 * KeyObject, and the DER pieces every certificate it signs shares.
 */
interface Signer {
  readonly key: KeyObject
  readonly hash: string
  readonly algorithmId: Buffer
  /** signature AlgorithmIdentifier then issuer Name: the TBS fields after the serial number. */
  readonly afterSerial: Buffer
  /** The extensions every leaf carries: basic constraints, key usage, extended key usage, AKI. */
  readonly fixedExtensions: Buffer
  /** The earliest expiry of the signing chain, as a one-element list for validityWindow. */
  readonly chainNotAfter: ReadonlyArray<number>
}

const extension = (id: string, critical: boolean, value: Buffer) =>
  der_.seq(der_.oid(id), ...(critical ? [der_.boolTrue] : []), der_.octets(value))

// Fixed extensions of every workload certificate: not a CA; digitalSignature + keyEncipherment;
// serverAuth + clientAuth.
const BASIC_CONSTRAINTS = extension("2.5.29.19", true, der_.seq())
const KEY_USAGE = extension("2.5.29.15", true, Buffer.from([0x03, 0x02, 0x05, 0xa0]))
const EXT_KEY_USAGE = extension(
  "2.5.29.37",
  false,
  der_.seq(der_.oid(x509.ExtendedKeyUsage.serverAuth), der_.oid(x509.ExtendedKeyUsage.clientAuth)),
)
const VERSION_3 = der_.tlv(0xa0, der_.smallInteger(2))
const EMPTY_NAME = der_.seq()

const SERIAL_POOL_BYTES = 4096

/**
 * A source of random positive 128-bit serial numbers as DER INTEGERs, always 18 bytes: the first
 * byte is non-zero without its top bit. Random bytes are drawn from the CSPRNG in batches, which
 * costs a fraction of one draw per certificate; the batch is the source's own.
 */
export const makeSerialSource = (): (() => Buffer) => {
  let pool: Buffer = Buffer.alloc(0)
  let at = 0
  return () => {
    if (at + 16 > pool.length) {
      pool = randomBytes(SERIAL_POOL_BYTES)
      at = 0
    }
    const out = Buffer.allocUnsafe(18)
    out[0] = 0x02
    out[1] = 16
    pool.copy(out, 2, at, at + 16)
    at += 16
    out[2] = (out[2]! & 0x7f) | 0x01
    return out
  }
}

/** The subject Name (DER) of a certificate. */
const subjectDer = (cert: x509.X509Certificate): Buffer => {
  const der = new Uint8Array(cert.rawData)
  const tbs = der_.children(der, der_.children(der, der_.read(der, 0))[0]!)
  const fields = tbs[0]?.tag === 0xa0 ? tbs.slice(1) : tbs
  return Buffer.from(der_.raw(der, fields[4]!))
}

const makeSigner = (material: SigningMaterial): Signer => {
  const key = KeyObject.from(material.signingKey)
  const curve = key.asymmetricKeyDetails?.namedCurve
  const [hash, algorithmId] =
    key.asymmetricKeyType === "ec"
      ? curve === "secp384r1"
        ? ["sha384", der_.seq(der_.oid("1.2.840.10045.4.3.3"))]
        : ["sha256", der_.seq(der_.oid("1.2.840.10045.4.3.2"))]
      : ["sha256", der_.seq(der_.oid("1.2.840.113549.1.1.11"), der_.derNull)]
  const ski = material.signingCert.getExtension(x509.SubjectKeyIdentifierExtension)
  const authorityKeyId =
    ski === null ? [] : [extension("2.5.29.35", false, der_.seq(der_.tlv(0x80, Buffer.from(ski.keyId, "hex"))))]
  return {
    key,
    hash,
    algorithmId,
    afterSerial: Buffer.concat([algorithmId, subjectDer(material.signingCert)]),
    fixedExtensions: Buffer.concat([BASIC_CONSTRAINTS, KEY_USAGE, EXT_KEY_USAGE, ...authorityKeyId]),
    chainNotAfter: [
      Math.min(...[material.signingCert, ...material.intermediates, material.root].map((c) => c.notAfter.getTime())),
    ],
  }
}

/**
 * Signs workload (or server) certificates with a material's signing key: empty subject,
 * critical SAN with the identities, the workload key usages, AKI of the signing cert.
 * Synchronous, for the issuance path.
 */
export interface LeafIssuer {
  readonly issue: (material: SigningMaterial, request: LeafRequest) => Either.Either<IssuedLeaf, SignError>
}

/**
 * An issuer keeps what signing reuses between certificates: each material's `Signer`, a batch of
 * random serial bytes and the DER Validity of the last leaf. A CA owns one, so two CAs in one
 * process share none of it.
 */
export const makeLeafIssuer = (): LeafIssuer => {
  const serialInteger = makeSerialSource()
  const signers = new WeakMap<SigningMaterial, Signer>()
  const signerOf = (material: SigningMaterial): Signer => {
    let signer = signers.get(material)
    if (signer === undefined) {
      signer = makeSigner(material)
      signers.set(material, signer)
    }
    return signer
  }
  /** The DER Validity of the last leaf: certificates issued in the same second share it. */
  let lastValidity: { readonly notBefore: number; readonly notAfter: number; readonly der: Buffer } | undefined
  const validityDer = (notBefore: Date, notAfter: Date): Buffer => {
    const nb = notBefore.getTime()
    const na = notAfter.getTime()
    if (lastValidity?.notBefore !== nb || lastValidity.notAfter !== na) {
      lastValidity = { notBefore: nb, notAfter: na, der: der_.seq(der_.time(notBefore), der_.time(notAfter)) }
    }
    return lastValidity.der
  }
  const state: IssuerState = { signerOf, serialInteger, validityDer }
  return { issue: (material, request) => issueWith(state, material, request) }
}

/** What an issuer keeps, as `issueWith` uses it. */
interface IssuerState {
  readonly signerOf: (material: SigningMaterial) => Signer
  readonly serialInteger: () => Buffer
  readonly validityDer: (notBefore: Date, notAfter: Date) => Buffer
}

const issueWith = (
  { signerOf, serialInteger, validityDer }: IssuerState,
  material: SigningMaterial,
  request: LeafRequest,
): Either.Either<IssuedLeaf, SignError> => {
  try {
    const signer = signerOf(material)
    const { notBefore, notAfter } = validityWindow(request.nowMs, request.ttl, signer.chainNotAfter)
    if (notAfter.getTime() <= notBefore.getTime()) throw new Error("the signing certificate has expired")
    const names: Array<Buffer> = []
    for (const uri of request.uris ?? []) names.push(der_.tlv(0x86, Buffer.from(uri, "ascii")))
    for (const dns of request.dnsNames ?? []) names.push(der_.tlv(0x82, Buffer.from(dns, "ascii")))
    // The subject is empty, so the SAN extension is critical (RFC 5280 §4.2.1.6).
    const san = extension("2.5.29.17", true, der_.seq(...names))
    const tbs = der_.seq(
      VERSION_3,
      serialInteger(),
      signer.afterSerial,
      validityDer(notBefore, notAfter),
      EMPTY_NAME,
      request.spki,
      der_.tlv(0xa3, der_.seq(signer.fixedExtensions, san)),
    )
    const signature = sign(signer.hash, tbs, signer.key)
    const der = der_.seq(tbs, signer.algorithmId, der_.bitString(signature))
    return Either.right({ pem: der_.toPemBlock("CERTIFICATE", der), notBefore, notAfter })
  } catch (e) {
    return Either.left(
      new SignError({ type: "CERT_GEN_ERROR", reason: `failed to generate the certificate: ${(e as Error).message}` }),
    )
  }
}

/** One certificate, as an Effect, from a fresh issuer (tests, tools): a CA keeps a `LeafIssuer`. */
export const signLeaf = (material: SigningMaterial, request: LeafRequest): Effect.Effect<IssuedLeaf, SignError> =>
  Effect.suspend(() => makeLeafIssuer().issue(material, request))

export interface RootParams {
  readonly trustDomain: string
  readonly ttl: Duration.Duration
  readonly nowMs: number
}

/** A self-signed root for `keys` (the reference's profile: O=<trust domain>, CA, keyCertSign). */
export const createSelfSignedRoot = (
  keys: { readonly privateKey: CryptoKey; readonly publicKey: CryptoKey },
  params: RootParams,
): Effect.Effect<x509.X509Certificate, SignError> =>
  Effect.tryPromise({
    try: async () => {
      const notBefore = new Date(Math.floor(params.nowMs / 1000) * 1000)
      const notAfter = new Date(notBefore.getTime() + Duration.toMillis(params.ttl))
      return x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: randomSerial(),
        name: [{ O: [params.trustDomain] }],
        notBefore,
        notAfter,
        keys: keys as webcrypto.CryptoKeyPair,
        signingAlgorithm: signingAlgorithm(keys.privateKey),
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        ],
      })
    },
    catch: (e) =>
      new SignError({
        type: "CERT_GEN_ERROR",
        reason: `failed to generate the root certificate: ${(e as Error).message}`,
      }),
  })
