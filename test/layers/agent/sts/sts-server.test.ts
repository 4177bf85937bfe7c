/**
 * The `--stsPort` token exchange endpoint over real HTTP: a well-formed RFC 8693 request gets its
 * subject token back with the seconds left before its `exp`; malformed requests get 400 and an
 * OAuth error body; a body over 64 KiB gets 413 and a closed connection, a chunked one counted as
 * it arrives; the listener is on loopback only, and port 0 starts nothing.
 */
import { connect } from "node:net"
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

/**
 * A POST with a chunked body over a raw socket: `body` writes chunks and says whether to send the
 * last chunk. Resolves when the server closes the connection or has answered a complete body.
 */
const chunkedPost = (target: number, body: (write: (text: string) => void) => "end" | "keep open") =>
  new Promise<{ head: string; body: string; closedByServer: boolean }>((resolve, reject) => {
    const socket = connect(target, "127.0.0.1")
    let received = ""
    const settle = (closedByServer: boolean) => {
      const [head = "", rest = ""] = received.split("\r\n\r\n", 2)
      socket.destroy()
      resolve({ head, body: rest, closedByServer })
    }
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1")
      // a 200 keeps the connection: settle once its JSON body is complete
      if (/\r\n\r\n[\s\S]*\}\s*$/.test(received) && !/connection: close/i.test(received)) settle(false)
    })
    socket.on("end", () => settle(true))
    socket.on("error", (e: NodeJS.ErrnoException) => (e.code === "ECONNRESET" ? settle(true) : reject(e)))
    socket.write(
      `POST /token HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: ${FORM}\r\ntransfer-encoding: chunked\r\n\r\n`,
    )
    const ending = body((text) => {
      if (!socket.destroyed) socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`)
    })
    if (ending === "end") socket.write("0\r\n\r\n")
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

  it("413 for a form over 64 KiB with Content-Length, other paths 404", async () => {
    const big = await post({ ...valid(jwt({})), scope: "s".repeat(70 * 1024) })
    expect(big.status).toBe(413)
    expect(big.headers.get("connection")).toBe("close")
    expect(((await big.json()) as Record<string, unknown>).error_description).toContain("65536")
    expect((await fetch(`http://127.0.0.1:${port}/other`, { method: "POST" })).status).toBe(404)
  })

  it("a chunked form under the bound is read whole and answered", async () => {
    const token = jwt({ sub: "chunked" })
    const form = new URLSearchParams(valid(token)).toString()
    const answer = await chunkedPost(port, (write) => {
      for (let i = 0; i < form.length; i += 100) write(form.slice(i, i + 100))
      return "end"
    })
    expect(answer.head).toMatch(/^HTTP\/1\.1 200/)
    expect(answer.body).toContain(token)
  })

  it("an endless chunked body is refused with 413 once past 64 KiB, and the connection closed", async () => {
    const answer = await chunkedPost(port, (write) => {
      // 1 MiB in 1 KiB chunks and no last chunk: the server must answer before the body ends
      for (let i = 0; i < 1024; i++) write("s".repeat(1024))
      return "keep open"
    })
    expect(answer.head).toMatch(/^HTTP\/1\.1 413/)
    expect(answer.head.toLowerCase()).toContain("connection: close")
    expect(answer.closedByServer).toBe(true)
  })

  it("port 0 starts no listener", async () => {
    const s = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(stsLayer(0), s))
    expect(context.unsafeMap.size).toBe(0)
    await Effect.runPromise(Scope.close(s, Exit.void))
  })
})
