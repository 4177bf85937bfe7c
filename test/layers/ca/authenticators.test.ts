/** The authenticators built from TOKEN_ISSUER / JWT_RULE, against a local OIDC issuer over HTTP. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as jose from "jose"
import { buildAuthenticators, buildNodeAuthorizer } from "../../../src/layers/ca/authenticators.js"
import type { AuthContext } from "../../../src/services/ca/authenticate.js"
import { authenticateWith } from "../../../src/services/ca/authenticate.js"
import { noPodLocator } from "../../../src/services/ca/identity.js"
import { startIssuer } from "./helpers.js"

const ctx = (token: string): AuthContext => ({
  metadata: (key) => (key === "authorization" ? [`Bearer ${token}`] : []),
  verifiedPeerUris: undefined,
})

const base = { trustDomain: "cluster.local", tokenIssuer: "", jwtRule: "", tokenAudiences: "mesh-ca", audience: "" }

describe("authenticators from the environment", () => {
  it.live("TOKEN_ISSUER: keys from the issuer's OIDC discovery", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => startIssuer()),
      (issuer) =>
        Effect.gen(function* () {
          const list = Either.getOrThrow(buildAuthenticators({ ...base, tokenIssuer: issuer.issuer }))
          expect(list.map((a) => a.name)).toEqual(["ClientCertAuthenticator", "JwtAuthenticator"])
          const token = yield* Effect.promise(() => issuer.token({ sub: "system:serviceaccount:ns1:sa1" }))
          const caller = yield* authenticateWith(list, ctx(token))
          expect(caller.identities).toEqual(["spiffe://cluster.local/ns/ns1/sa/sa1"])
        }),
      (issuer) => Effect.promise(() => issuer.close()),
    ),
  )

  it.live("JWT_RULE: jwks_uri, inline jwks and its own audiences", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => startIssuer()),
      (issuer) =>
        Effect.gen(function* () {
          const rule = JSON.stringify({
            issuer: issuer.issuer,
            audiences: ["custom"],
            jwks_uri: `${issuer.issuer}/jwks`,
          })
          const list = Either.getOrThrow(buildAuthenticators({ ...base, jwtRule: rule }))
          const good = yield* Effect.promise(() => issuer.token({ sub: "system:serviceaccount:a:b", aud: "custom" }))
          expect((yield* authenticateWith(list, ctx(good))).identities).toEqual(["spiffe://cluster.local/ns/a/sa/b"])
          const meshCa = yield* Effect.promise(() => issuer.token({ sub: "system:serviceaccount:a:b" }))
          expect((yield* Effect.flip(authenticateWith(list, ctx(meshCa)))).reason).toMatch(
            /accepted audiences \[custom\]/,
          )

          const jwks = yield* Effect.promise(() => fetch(`${issuer.issuer}/jwks`).then((r) => r.text()))
          const inline = Either.getOrThrow(
            buildAuthenticators({ ...base, jwtRule: JSON.stringify({ issuer: issuer.issuer, jwks }) }),
          )
          expect((yield* authenticateWith(inline, ctx(meshCa))).identities).toEqual([
            "spiffe://cluster.local/ns/a/sa/b",
          ])
        }),
      (issuer) => Effect.promise(() => issuer.close()),
    ),
  )

  it.live("an unreachable issuer refuses with a clear reason", () =>
    Effect.gen(function* () {
      const issuer = yield* Effect.promise(() => startIssuer())
      const token = yield* Effect.promise(() => issuer.token({ sub: "system:serviceaccount:a:b" }))
      yield* Effect.promise(() => issuer.close())
      const list = Either.getOrThrow(buildAuthenticators({ ...base, tokenIssuer: issuer.issuer }))
      const error = yield* Effect.flip(authenticateWith(list, ctx(token)))
      expect(error.reason).toContain(`OIDC discovery of ${issuer.issuer} failed`)
    }),
  )

  it("rejects a malformed JWT_RULE and CA_TRUSTED_NODE_ACCOUNTS at start-up", () => {
    expect(Either.isLeft(buildAuthenticators({ ...base, jwtRule: "{not json" }))).toBe(true)
    expect(Either.isLeft(buildNodeAuthorizer("no-slash", "cluster.local", noPodLocator))).toBe(true)
    expect(Either.getOrThrow(buildNodeAuthorizer("", "cluster.local", noPodLocator))).toBeUndefined()
  })

  it.live("a token signed by an unknown key of the right issuer is refused", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => startIssuer()),
      (issuer) =>
        Effect.gen(function* () {
          const list = Either.getOrThrow(buildAuthenticators({ ...base, tokenIssuer: issuer.issuer }))
          const { privateKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
          const token = yield* Effect.promise(() =>
            new jose.SignJWT({ sub: "system:serviceaccount:a:b" })
              .setProtectedHeader({ alg: "ES256", kid: "unknown" })
              .setIssuer(issuer.issuer)
              .setAudience("mesh-ca")
              .setExpirationTime("1h")
              .sign(privateKey),
          )
          expect((yield* Effect.flip(authenticateWith(list, ctx(token)))).reason).toContain(
            "no key of the issuer's JWKS matches the token",
          )
        }),
      (issuer) => Effect.promise(() => issuer.close()),
    ),
  )
})
