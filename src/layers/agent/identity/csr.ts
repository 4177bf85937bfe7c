/** Workload key generation and the PKCS#10 request carrying the SPIFFE URI SAN. */
import { Effect } from "effect"
import type { KeySpec } from "../../../services/agent/identity/identity.js"
import { IdentityError } from "../../../services/agent/identity/identity.js"
import { signingAlgorithm } from "../../../services/ca/material.js"
import { x509 } from "../../../services/ca/x509.js"
import { generateEcKey, generateRsaKey } from "../../ca/keys.js"

export interface KeyAndCsr {
  readonly keyPem: string
  readonly csrPem: string
}

/** A fresh key of `spec` and a CSR for `identity` (empty subject, critical URI SAN). */
export const generateKeyAndCsr = (spec: KeySpec, identity: string): Effect.Effect<KeyAndCsr, IdentityError> =>
  Effect.gen(function* () {
    const pair = yield* (spec.kind === "RSA" ? generateRsaKey(spec.bits) : generateEcKey(spec.curve)).pipe(
      Effect.mapError((e) => new IdentityError({ reason: e.reason })),
    )
    const csr = yield* Effect.tryPromise({
      try: () =>
        x509.Pkcs10CertificateRequestGenerator.create({
          name: "",
          keys: { privateKey: pair.privateKey, publicKey: pair.publicKey } as never,
          signingAlgorithm: signingAlgorithm(pair.privateKey) as never,
          extensions: [new x509.SubjectAlternativeNameExtension([{ type: "url", value: identity }], true)],
        }),
      catch: (e) => new IdentityError({ reason: `cannot create the CSR: ${(e as Error).message}` }),
    })
    return { keyPem: pair.privateKeyPem, csrPem: csr.toString("pem") }
  })
