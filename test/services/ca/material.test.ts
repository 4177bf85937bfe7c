import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either } from "effect"
import { generateEcKey } from "../../../src/layers/ca/keys.js"
import { read } from "../../../src/services/ca/der.js"
import {
  createSelfSignedRoot,
  makeLeafIssuer,
  makeSerialSource,
  type SigningMaterial,
} from "../../../src/services/ca/material.js"
import { x509 } from "../../../src/services/ca/x509.js"

describe("leaf serial numbers", () => {
  it("are positive 128-bit DER INTEGERs of a fixed size, never repeated", () => {
    const serialInteger = makeSerialSource()
    const seen = new Set<string>()
    // More than one batch of pooled randomness.
    for (let i = 0; i < 1000; i++) {
      const serial = serialInteger()
      expect(serial).toHaveLength(18)
      const node = read(serial, 0)
      expect([node.tag, node.end - node.start]).toEqual([0x02, 16])
      // Minimal and positive: no leading zero byte, top bit clear.
      expect(serial[2]).toBeGreaterThan(0)
      expect(serial[2]).toBeLessThan(0x80)
      seen.add(serial.toString("hex"))
    }
    expect(seen.size).toBe(1000)
  })
})

describe("leaf issuers", () => {
  it.effect("two issuers (two CAs in one process) each sign valid leaves with their own serials", () =>
    Effect.gen(function* () {
      const keys = yield* generateEcKey("P-256")
      const nowMs = Date.now()
      const root = yield* createSelfSignedRoot(keys, { trustDomain: "cluster.local", ttl: Duration.days(1), nowMs })
      const material: SigningMaterial = {
        signingCert: root,
        signingKey: keys.privateKey,
        intermediates: [],
        root,
        trustBundle: [root],
        source: "self-signed",
      }
      const leafKeys = yield* generateEcKey("P-256")
      const spki = new Uint8Array(yield* Effect.promise(() => crypto.subtle.exportKey("spki", leafKeys.publicKey)))
      const request = { spki, uris: ["spiffe://cluster.local/ns/a/sa/b"], ttl: Duration.hours(1), nowMs }
      const leaves = [makeLeafIssuer(), makeLeafIssuer()].flatMap((issuer) =>
        [1, 2].map(() => new x509.X509Certificate(Either.getOrThrow(issuer.issue(material, request)).pem)),
      )
      for (const leaf of leaves) expect(yield* Effect.promise(() => leaf.verify({ publicKey: root }))).toBe(true)
      expect(new Set(leaves.map((l) => l.serialNumber)).size).toBe(leaves.length)
      expect(new Set(leaves.map((l) => l.notAfter.getTime())).size).toBe(1)
    }),
  )
})
