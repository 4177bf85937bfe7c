/** Private keys for the CA: generated, read from PEM into WebCrypto, written back as PKCS#8 PEM. */
import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from "node:crypto"
import { promisify } from "node:util"
import { Effect } from "effect"
import { CaMaterialError } from "../../services/ca/errors.js"
import type { CryptoKey } from "../../services/ca/material.js"
import { subtle } from "../../services/ca/x509.js"

const generateKeyPairAsync = promisify(generateKeyPair)

export interface KeyPair {
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly privateKeyPem: string
}

const CURVES: Record<string, "P-256" | "P-384"> = { prime256v1: "P-256", secp384r1: "P-384" }

/** Imports a Node private key into WebCrypto (RSA PKCS#1 v1.5 SHA-256, or ECDSA on its curve). */
export const importKeyObject = async (key: KeyObject): Promise<KeyPair> => {
  const pkcs8 = key.export({ format: "der", type: "pkcs8" })
  const spki = createPublicKey(key).export({ format: "der", type: "spki" })
  let algorithm: { name: string; hash?: string; namedCurve?: string }
  if (key.asymmetricKeyType === "rsa") {
    algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
  } else if (key.asymmetricKeyType === "ec") {
    const curve = CURVES[key.asymmetricKeyDetails?.namedCurve ?? ""]
    if (curve === undefined) throw new Error(`unsupported EC curve ${key.asymmetricKeyDetails?.namedCurve}`)
    algorithm = { name: "ECDSA", namedCurve: curve }
  } else {
    throw new Error(`unsupported key type ${key.asymmetricKeyType}`)
  }
  const privateKey = await subtle.importKey("pkcs8", pkcs8, algorithm, true, ["sign"])
  const publicKey = await subtle.importKey("spki", spki, algorithm, true, ["verify"])
  return { privateKey, publicKey, privateKeyPem: key.export({ format: "pem", type: "pkcs8" }).toString() }
}

export const importPrivateKeyPem = (pem: string, origin: string): Effect.Effect<KeyPair, CaMaterialError> =>
  Effect.tryPromise({
    try: () => importKeyObject(createPrivateKey(pem)),
    catch: (e) => new CaMaterialError({ reason: `${origin}: cannot read the private key: ${(e as Error).message}` }),
  })

export const generateRsaKey = (bits: number): Effect.Effect<KeyPair, CaMaterialError> =>
  Effect.tryPromise({
    try: async () => {
      const { privateKey } = await generateKeyPairAsync("rsa", { modulusLength: bits })
      return importKeyObject(privateKey)
    },
    catch: (e) => new CaMaterialError({ reason: `cannot generate an RSA-${bits} key: ${(e as Error).message}` }),
  })

export const generateEcKey = (curve: "P-256" | "P-384" = "P-256"): Effect.Effect<KeyPair, CaMaterialError> =>
  Effect.tryPromise({
    try: async () => {
      const { privateKey } = await generateKeyPairAsync("ec", {
        namedCurve: curve === "P-256" ? "prime256v1" : "secp384r1",
      })
      return importKeyObject(privateKey)
    },
    catch: (e) => new CaMaterialError({ reason: `cannot generate an EC ${curve} key: ${(e as Error).message}` }),
  })

/** Whether a private key (WebCrypto) belongs to a certificate's public key. */
export const keyMatchesPublicKey = async (pair: KeyPair, spkiDer: ArrayBuffer): Promise<boolean> => {
  const ours = Buffer.from(await subtle.exportKey("spki", pair.publicKey))
  return ours.equals(Buffer.from(spkiDer))
}
