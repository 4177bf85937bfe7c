/**
 * CA key material and certificate profiles: the signing certificate and key, the chain up to
 * the root, the trust bundle; the workload certificate profile (SPIFFE URI SAN, key usages
 * digitalSignature + keyEncipherment, extended key usages serverAuth + clientAuth, not a CA);
 * the self-signed root profile (O=<trust domain>, CA, keyCertSign).
 * Pure computation: keys and certificates in, certificates out; files and clocks live in layers.
 */
import { randomBytes, type webcrypto } from "node:crypto"
import { Duration, Effect } from "effect"
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
  readonly publicKey: x509.PublicKeyType
  readonly uris?: ReadonlyArray<string>
  readonly dnsNames?: ReadonlyArray<string>
  readonly ttl: Duration.Duration
  readonly nowMs: number
}

/** Signs a workload (or server) certificate with the material's signing key. */
export const signLeaf = (
  material: SigningMaterial,
  request: LeafRequest,
): Effect.Effect<x509.X509Certificate, SignError> =>
  Effect.tryPromise({
    try: async () => {
      const chain = [material.signingCert, ...material.intermediates, material.root]
      const { notBefore, notAfter } = validityWindow(
        request.nowMs,
        request.ttl,
        chain.map((c) => c.notAfter.getTime()),
      )
      if (notAfter.getTime() <= notBefore.getTime()) throw new Error("the signing certificate has expired")
      const names = [
        ...(request.uris ?? []).map((value) => ({ type: "url" as const, value })),
        ...(request.dnsNames ?? []).map((value) => ({ type: "dns" as const, value })),
      ]
      const ski = material.signingCert.getExtension(x509.SubjectKeyIdentifierExtension)
      const extensions: Array<x509.Extension> = [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(WORKLOAD_KEY_USAGES, true),
        new x509.ExtendedKeyUsageExtension(WORKLOAD_EXT_KEY_USAGES, false),
        // The subject is empty, so the SAN extension is critical (RFC 5280 §4.2.1.6).
        new x509.SubjectAlternativeNameExtension(names, true),
      ]
      if (ski !== null) extensions.push(new x509.AuthorityKeyIdentifierExtension(ski.keyId))
      return x509.X509CertificateGenerator.create({
        serialNumber: randomSerial(),
        subject: "",
        issuer: material.signingCert.subjectName,
        notBefore,
        notAfter,
        publicKey: request.publicKey,
        signingKey: material.signingKey,
        signingAlgorithm: signingAlgorithm(material.signingKey),
        extensions,
      })
    },
    catch: (e) =>
      new SignError({ type: "CERT_GEN_ERROR", reason: `failed to generate the certificate: ${(e as Error).message}` }),
  })

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
