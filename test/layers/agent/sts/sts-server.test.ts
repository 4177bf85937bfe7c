/**
 * The `--stsPort` token exchange endpoint over real HTTP: a well-formed RFC 8693 request gets its
 * subject token back with the seconds left before its `exp`; malformed requests get 400 and an
 * OAuth error body; the listener is on loopback only, and port 0 starts nothing.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layer as stsLayer } from "../../../../src/layers/agent/sts/sts-server.js"
import { freePort } from "../../../support/ports.js"

const FORM = "application/x-www-form-urlencoded"
const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
const JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
const jwt = (claims: object) => `${b64({ alg: "RS256", typ: "JWT" })}.${b64(claims)}.c2lnbmF0dXJl`

let port: number
let scope: Scope.CloseableScope

beforeAll(async () => {
  port = await freePort()
  scope = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(stsLayer(port), scope))
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const post = (fields: Record<string, string>, contentType = FORM) =>
  fetch(`http://127.0.0.1:${port}/token`, {
    method: "POST",
    headers: { "content-type": contentType },
    body: new URLSearchParams(fields).toString(),
  })

const valid = (token: string) => ({
  grant_type: GRANT,
  subject_token: token,
  subject_token_type: JWT_TYPE,
  audience: "//iam.example/projects/1/pools/mesh",
  scope: "https://www.example.com/auth/cloud-platform",
  requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
})

describe("token exchange (--stsPort)", () => {
  it("passes the subject token through, expiring with its exp claim", async () => {
    const exp = Math.floor(Date.now() / 1000) + 600
    const token = jwt({ iss: "cluster.local", sub: "system:serviceaccount:default:app", exp })
    const response = await post(valid(token))
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(response.headers.get("cache-control")).toBe("no-store")
    const body = (await response.json()) as Record<string, unknown>
    expect(body.access_token).toBe(token)
    expect(body.issued_token_type).toBe("urn:ietf:params:oauth:token-type:access_token")
    expect(body.token_type).toBe("Bearer")
    expect(body.expires_in).toBeGreaterThan(590)
    expect(body.expires_in).toBeLessThanOrEqual(600)
  })

  it("a JWT without exp: no expires_in; the optional fields may be left out", async () => {
    const token = jwt({ sub: "x" })
    const response = await post({ grant_type: GRANT, subject_token: token, subject_token_type: JWT_TYPE })
    expect(response.status).toBe(200)
    const body = (await response.json()) as Record<string, unknown>
    expect(body.access_token).toBe(token)
    expect("expires_in" in body).toBe(false)
  })

  it.each([
    ["no subject token", { ...valid(""), subject_token: "" }, "invalid_request", "subject_token"],
    ["a subject token that is not a JWT", valid("opaque-token"), "invalid_request", "not a JWT"],
    ["an expired subject token", valid(jwt({ exp: 1000 })), "invalid_request", "expired"],
    [
      "another subject token type",
      { ...valid(jwt({})), subject_token_type: "urn:x" },
      "invalid_request",
      "subject_token_type",
    ],
    ["another grant", { ...valid(jwt({})), grant_type: "client_credentials" }, "unsupported_grant_type", "grant_type"],
    ["no grant", { subject_token: jwt({}), subject_token_type: JWT_TYPE }, "invalid_request", "grant_type"],
    [
      "another requested type",
      { ...valid(jwt({})), requested_token_type: "urn:x" },
      "invalid_request",
      "requested_token_type",
    ],
  ])("400 for %s", async (_, fields, error, mentions) => {
    const response = await post(fields)
    expect(response.status).toBe(400)
    const body = (await response.json()) as Record<string, unknown>
    expect(body.error).toBe(error)
    expect(body.error_description).toContain(mentions)
  })

  it("400 for a JSON body or a GET", async () => {
    const json = await post(valid(jwt({})), "application/json")
    expect(json.status).toBe(400)
    expect(((await json.json()) as Record<string, unknown>).error_description).toContain("content type")
    const get = await fetch(`http://127.0.0.1:${port}/token`)
    expect(get.status).toBe(400)
    expect(((await get.json()) as Record<string, unknown>).error_description).toContain("POST")
  })

  it("400 for an oversized form, other paths 404", async () => {
    const big = await post({ ...valid(jwt({})), scope: "s".repeat(70 * 1024) })
    expect(big.status).toBe(400)
    expect((await fetch(`http://127.0.0.1:${port}/other`, { method: "POST" })).status).toBe(404)
  })

  it("port 0 starts no listener", async () => {
    const s = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(stsLayer(0), s))
    expect(context.unsafeMap.size).toBe(0)
    await Effect.runPromise(Scope.close(s, Exit.void))
  })
})
