/**
 * JWKS fetching for token authentication: PILOT_JWT_PUB_KEY_REFRESH_INTERVAL (with a test
 * clock), unknown key ids, failed refreshes, and JWKS_RESOLVER_INSECURE_SKIP_VERIFY against a
 * real HTTPS server with a self-signed certificate.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import * as jose from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { oidcKeyResolver, remoteKeyResolver } from "../../../src/layers/ca/oidc.js"
import { tempDir } from "./helpers.js"

const MINUTE = 60_000

type KeyPair = jose.GenerateKeyPairResult

let keys: { first: KeyPair; second: KeyPair }
let published: Array<jose.JWK> = []
let jwksHits = 0
let failJwks = false
let base = ""
const handler = (req: IncomingMessage, res: ServerResponse) => {
  if (req.url === "/.well-known/openid-configuration") {
    res.setHeader("content-type", "application/json")
    res.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks` }))
  } else if (req.url === "/jwks") {
    jwksHits++
    if (failJwks) {
      res.statusCode = 500
      return res.end()
    }
    res.setHeader("content-type", "application/json")
    res.end(JSON.stringify({ keys: published }))
  } else {
    res.statusCode = 404
    res.end()
  }
}
const server = createHttpServer(handler)

const jwk = async (pair: KeyPair, kid: string) => ({
  ...(await jose.exportJWK(pair.publicKey)),
  kid,
  alg: "ES256",
})
const sign = (pair: KeyPair, kid: string) =>
  new jose.SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid })
    .setIssuer(base)
    .setExpirationTime("1h")
    .sign(pair.privateKey)
const verifies = (token: string, resolver: jose.JWTVerifyGetKey) =>
  jose.jwtVerify(token, resolver).then(
    () => "ok",
    (e: Error) => e.message,
  )

beforeAll(async () => {
  keys = { first: await jose.generateKeyPair("ES256"), second: await jose.generateKeyPair("ES256") }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

describe("JWKS refresh (PILOT_JWT_PUB_KEY_REFRESH_INTERVAL)", () => {
  it("keeps the key set for the refresh interval and refetches after it", async () => {
    published = [await jwk(keys.first, "k1")]
    jwksHits = 0
    failJwks = false
    let now = 0
    const resolver = remoteKeyResolver(`${base}/jwks`, { refreshIntervalMs: 20 * MINUTE, now: () => now })
    const token = await sign(keys.first, "k1")
    expect(await verifies(token, resolver)).toBe("ok")
    expect(jwksHits).toBe(1)
    now = 20 * MINUTE - 1
    expect(await verifies(token, resolver)).toBe("ok")
    expect(jwksHits).toBe(1)
    now = 20 * MINUTE
    expect(await verifies(token, resolver)).toBe("ok")
    expect(jwksHits).toBe(2)
  })

  it("honours a shorter interval: a removed key stops verifying once the interval has passed", async () => {
    published = [await jwk(keys.first, "k1")]
    jwksHits = 0
    let now = 0
    const resolver = remoteKeyResolver(`${base}/jwks`, { refreshIntervalMs: MINUTE, now: () => now })
    const token = await sign(keys.first, "k1")
    expect(await verifies(token, resolver)).toBe("ok")
    published = [await jwk(keys.second, "k2")]
    now = MINUTE / 2
    expect(await verifies(token, resolver)).toBe("ok")
    now = MINUTE
    expect(await verifies(token, resolver)).toMatch(/no applicable key found/)
  })

  it("refetches early for an unknown key id, at most once per cool-down", async () => {
    published = [await jwk(keys.first, "k1")]
    jwksHits = 0
    let now = 0
    const resolver = remoteKeyResolver(`${base}/jwks`, {
      refreshIntervalMs: 20 * MINUTE,
      cooldownMs: MINUTE,
      now: () => now,
    })
    expect(await verifies(await sign(keys.first, "k1"), resolver)).toBe("ok")
    published = [await jwk(keys.first, "k1"), await jwk(keys.second, "k2")]
    const rotated = await sign(keys.second, "k2")
    expect(await verifies(rotated, resolver)).toMatch(/no applicable key found/)
    expect(jwksHits).toBe(1)
    now = MINUTE
    expect(await verifies(rotated, resolver)).toBe("ok")
    expect(jwksHits).toBe(2)
  })

  it("keeps the previous keys when a refresh fails", async () => {
    published = [await jwk(keys.first, "k1")]
    failJwks = false
    let now = 0
    const resolver = remoteKeyResolver(`${base}/jwks`, { refreshIntervalMs: MINUTE, now: () => now })
    const token = await sign(keys.first, "k1")
    expect(await verifies(token, resolver)).toBe("ok")
    failJwks = true
    now = 2 * MINUTE
    const hits = jwksHits
    expect(await verifies(token, resolver)).toBe("ok")
    expect(jwksHits).toBe(hits + 1)
    failJwks = false
  })

  it("finds the JWKS through OIDC discovery, and reports a first fetch that fails", async () => {
    published = [await jwk(keys.first, "k1")]
    expect(await verifies(await sign(keys.first, "k1"), oidcKeyResolver(base))).toBe("ok")
    failJwks = true
    expect(await verifies(await sign(keys.first, "k1"), oidcKeyResolver(base))).toMatch(
      /fetching the JWKS at .*\/jwks failed: HTTP 500/,
    )
    failJwks = false
  })
})

describe("JWKS_RESOLVER_INSECURE_SKIP_VERIFY", () => {
  let https: ReturnType<typeof createHttpsServer>
  let httpsBase = ""

  beforeAll(async () => {
    const dir = await tempDir("jwks-tls")
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"].concat([
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ]),
      { stdio: "pipe" },
    )
    https = createHttpsServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      handler,
    )
    await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve))
    httpsBase = `https://127.0.0.1:${(https.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    await new Promise((resolve) => https.close(resolve))
  })

  it("refuses a JWKS server whose certificate does not verify, unless told to skip verification", async () => {
    published = [await jwk(keys.first, "k1")]
    failJwks = false
    const token = await sign(keys.first, "k1")
    expect(await verifies(token, remoteKeyResolver(`${httpsBase}/jwks`))).toMatch(/self-signed certificate/)
    expect(await verifies(token, remoteKeyResolver(`${httpsBase}/jwks`, { insecureSkipVerify: true }))).toBe("ok")
  })
})
