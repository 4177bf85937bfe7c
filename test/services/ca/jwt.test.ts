import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import * as jose from "jose"
import type { AuthContext } from "../../../src/services/ca/authenticate.js"
import { authenticateWith, bearerToken, clientCertAuthenticator } from "../../../src/services/ca/authenticate.js"
import { acceptedAudiences, identityFromClaims, jwtAuthenticator, parseJwtRule } from "../../../src/services/ca/jwt.js"

const ISSUER = "https://issuer.example"
const T0 = Date.UTC(2026, 0, 1) / 1000

const setup = Effect.promise(async () => {
  const { privateKey, publicKey } = await jose.generateKeyPair("ES256")
  const jwks = { keys: [{ ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "ES256" }] }
  const authenticator = jwtAuthenticator({
    issuer: ISSUER,
    audiences: ["mesh-ca"],
    trustDomain: "cluster.local",
    keys: jose.createLocalJWKSet(jwks),
  })
  const sign = (claims: jose.JWTPayload) =>
    new jose.SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(privateKey)
  return { authenticator, sign }
})

const ctx = (token?: string): AuthContext => ({
  metadata: (key) => (key === "authorization" && token !== undefined ? [`Bearer ${token}`] : []),
  verifiedPeerUris: undefined,
})

const claims = (extra: jose.JWTPayload = {}): jose.JWTPayload => ({
  iss: ISSUER,
  aud: "mesh-ca",
  sub: "system:serviceaccount:default:sleep",
  iat: T0,
  exp: T0 + 3600,
  ...extra,
})

describe("JWT authentication", () => {
  it.effect("accepts a valid token and names the SPIFFE identity of its service account", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 * 1000 + 1000)
      const { authenticator, sign } = yield* setup
      const caller = yield* authenticator.authenticate(ctx(yield* Effect.promise(() => sign(claims()))))
      expect(caller.authSource).toBe("IDToken")
      expect(caller.identities).toEqual(["spiffe://cluster.local/ns/default/sa/sleep"])
      expect(caller.orchestrator).toEqual({ namespace: "default", serviceAccount: "sleep" })
    }),
  )

  it.effect("refuses the token once it expires (TestClock)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 * 1000 + 1000)
      const { authenticator, sign } = yield* setup
      const token = yield* Effect.promise(() => sign(claims()))
      yield* authenticator.authenticate(ctx(token))
      yield* TestClock.adjust("1 hours")
      const error = yield* Effect.flip(authenticator.authenticate(ctx(token)))
      expect(error.reason).toBe("the token expired at 2026-01-01T01:00:00.000Z")
    }),
  )

  it.effect("refuses a wrong audience, another issuer, a bad signature, no exp and a malformed token", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 * 1000 + 1000)
      const { authenticator, sign } = yield* setup
      const reason = (token: string) => Effect.map(Effect.flip(authenticator.authenticate(ctx(token))), (e) => e.reason)
      expect(yield* reason(yield* Effect.promise(() => sign(claims({ aud: ["a", "b"] }))))).toBe(
        "the token audience [a, b] is not one of the accepted audiences [mesh-ca]",
      )
      expect(yield* reason(yield* Effect.promise(() => sign(claims({ iss: "https://evil.example" }))))).toBe(
        'the token issuer "https://evil.example" is not "https://issuer.example"',
      )
      const good = yield* Effect.promise(() => sign(claims()))
      const [h, p] = good.split(".")
      const forged = `${h}.${p}.${Buffer.alloc(64, 1).toString("base64url")}`
      expect(yield* reason(forged)).toBe("the token signature is invalid")
      const { exp: _exp, ...noExp } = claims()
      expect(yield* reason(yield* Effect.promise(() => sign(noExp)))).toMatch(/"exp"/)
      expect(yield* reason("not-a-jwt")).toMatch(/malformed/)
    }),
  )

  it.effect("refuses a token without a service account, and a request without a bearer token", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 * 1000 + 1000)
      const { authenticator, sign } = yield* setup
      const error = yield* Effect.flip(
        authenticator.authenticate(ctx(yield* Effect.promise(() => sign(claims({ sub: "alice" }))))),
      )
      expect(error.reason).toBe('invalid sub "alice": the token names no service account')
      expect((yield* Effect.flip(authenticator.authenticate(ctx()))).reason).toBe(
        "no bearer token in the authorization metadata",
      )
    }),
  )

  it.effect("remembers a verified token for a minute at most, never past its expiry", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 * 1000 + 1000)
      const { privateKey, publicKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
      const local = jose.createLocalJWKSet({
        keys: [{ ...(yield* Effect.promise(() => jose.exportJWK(publicKey))), kid: "k1" }],
      })
      let lookups = 0
      const authenticator = jwtAuthenticator({
        issuer: ISSUER,
        audiences: ["mesh-ca"],
        trustDomain: "cluster.local",
        keys: (header, token) => {
          lookups++
          return local(header, token)
        },
      })
      const token = yield* Effect.promise(() =>
        new jose.SignJWT(claims()).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(privateKey),
      )
      yield* authenticator.authenticate(ctx(token))
      yield* authenticator.authenticate(ctx(token))
      expect(lookups).toBe(1)
      yield* TestClock.adjust("61 seconds")
      yield* authenticator.authenticate(ctx(token))
      expect(lookups).toBe(2)
      yield* TestClock.adjust("1 hours")
      expect((yield* Effect.flip(authenticator.authenticate(ctx(token)))).reason).toMatch(/expired/)
    }),
  )

  it.effect("tries authenticators in order and reports every failure", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 * 1000 + 1000)
      const { authenticator } = yield* setup
      const error = yield* Effect.flip(authenticateWith([clientCertAuthenticator(), authenticator], ctx()))
      expect(error.reason).toBe(
        "Authenticator ClientCertAuthenticator: no verified client certificate is presented; Authenticator JwtAuthenticator: no bearer token in the authorization metadata",
      )
      const byCert = yield* authenticateWith([clientCertAuthenticator(), authenticator], {
        metadata: () => [],
        verifiedPeerUris: ["spiffe://cluster.local/ns/a/sa/b"],
      })
      expect(byCert).toEqual({ authSource: "ClientCertificate", identities: ["spiffe://cluster.local/ns/a/sa/b"] })
    }),
  )
})

describe("token claims and settings", () => {
  it("reads orchestrator token claims, including pod and node", () => {
    const id = identityFromClaims(
      {
        sub: "x",
        "kubernetes.io": {
          namespace: "shop",
          serviceaccount: { name: "cart" },
          pod: { name: "cart-1" },
          node: { name: "n1" },
        },
      },
      "td",
    )
    expect(id).toEqual(
      Either.right({
        identity: "spiffe://td/ns/shop/sa/cart",
        orchestrator: { namespace: "shop", serviceAccount: "cart", podName: "cart-1", nodeName: "n1" },
      }),
    )
    expect(Either.isLeft(identityFromClaims({ sub: "system:serviceaccount:only-ns" }, "td"))).toBe(true)
  })

  it("combines TOKEN_AUDIENCES (default mesh-ca) and AUDIENCE", () => {
    expect(acceptedAudiences("")).toEqual(["mesh-ca"])
    expect(acceptedAudiences("a, b")).toEqual(["a", "b"])
    expect(acceptedAudiences("mesh-ca", "extra")).toEqual(["mesh-ca", "extra"])
  })

  it("parses JWT_RULE JSON", () => {
    expect(parseJwtRule('{"issuer":"https://i","audiences":["x"],"jwks_uri":"https://i/k"}')).toEqual(
      Either.right({ issuer: "https://i", audiences: ["x"], jwksUri: "https://i/k" }),
    )
    expect(Either.isLeft(parseJwtRule("{"))).toBe(true)
    expect(Either.isLeft(parseJwtRule('{"audiences":[]}'))).toBe(true)
  })

  it("reads the bearer token case-insensitively", () => {
    expect(bearerToken(ctx("abc"))).toEqual(Either.right("abc"))
    expect(Either.isLeft(bearerToken({ metadata: () => ["Basic xyz"], verifiedPeerUris: undefined }))).toBe(true)
  })
})
