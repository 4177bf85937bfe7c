/**
 * Bounded close of HTTP(S) servers: connections with no request in a handler (idle keep-alive,
 * slowloris heads, unfinished TLS handshakes) close at once; requests in flight may finish
 * within the drain time and then end their connection; whatever is left is destroyed when it
 * runs out. Real sockets, real servers.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, request, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { trackConnections } from "../../../src/layers/http/connection-drain.js"
import { type StuckClient, slowloris, stalledBody, stalledHandshake } from "../../support/stuck-clients.js"

const dir = mkdtempSync(join(tmpdir(), "connection-drain-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const tlsMaterial = () => {
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"].concat([
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-subj",
      "/O=drain",
    ]),
    { stdio: "pipe" },
  )
  return { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }
}

const listen = (server: Server) =>
  Effect.async<number>((resume) => {
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
  })

/** A keep-alive GET; resolves with the status and the connection header once the body ended. */
const get = (port: number, path: string) =>
  Effect.async<{ status: number; connection: string | undefined }, Error>((resume) => {
    const req = request(
      { host: "127.0.0.1", port, path, agent: false, headers: { connection: "keep-alive" } },
      (res) => {
        res.resume()
        res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, connection: res.headers.connection })))
      },
    )
    req.on("error", (e) => resume(Effect.fail(e)))
    req.end()
  })

/** Whether `client` was closed by the server within `millis`. */
const closedWithin = (client: StuckClient, millis: number) =>
  Effect.promise(() =>
    Promise.race([
      client.closed.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), millis)),
    ]),
  )

const timed = <A>(effect: Effect.Effect<A>) => Effect.map(Effect.timed(effect), ([took]) => Duration.toMillis(took))

describe("connection drain", () => {
  it.live("closes connections with no request in a handler at once: slowloris heads, idle keep-alive", () =>
    Effect.gen(function* () {
      const server = createServer((_req, res) => res.end("ok"))
      const connections = trackConnections(server)
      const port = yield* listen(server)
      const loris = yield* Effect.promise(() => slowloris("slowloris", port))
      expect((yield* get(port, "/")).status).toBe(200)
      expect(connections.open()).toBe(2)
      const took = yield* timed(connections.close(Effect.succeed(Duration.seconds(30))))
      expect(took).toBeLessThan(1000)
      expect(yield* closedWithin(loris, 1000)).toBe(true)
      expect(server.listening).toBe(false)
    }),
  )

  it.live("closes unfinished TLS handshakes and slowloris heads over TLS at once", () =>
    Effect.gen(function* () {
      const server = createHttpsServer(tlsMaterial(), (_req, res) => res.end("ok"))
      const connections = trackConnections(server)
      const port = yield* listen(server)
      const handshake = yield* Effect.promise(() => stalledHandshake("handshake", port))
      const loris = yield* Effect.promise(() => slowloris("slowloris", port, { tls: true }))
      const took = yield* timed(connections.close(Effect.succeed(Duration.seconds(30))))
      expect(took).toBeLessThan(1000)
      expect(yield* closedWithin(handshake, 1000)).toBe(true)
      expect(yield* closedWithin(loris, 1000)).toBe(true)
    }),
  )

  it.live("lets a request in flight finish, closing its connection after it", () =>
    Effect.gen(function* () {
      const pending: Array<ServerResponse> = []
      const server = createServer((_req, res) => void pending.push(res))
      const connections = trackConnections(server)
      const port = yield* listen(server)
      const answer = yield* Effect.fork(get(port, "/slow"))
      yield* Effect.async<void>((resume) => {
        const poll = setInterval(() => {
          if (pending.length > 0) {
            clearInterval(poll)
            resume(Effect.void)
          }
        }, 5)
      })
      const closing = yield* Effect.fork(timed(connections.close(Effect.succeed(Duration.seconds(30)))))
      setTimeout(() => pending[0]!.end("late"), 200)
      const result = yield* answer
      expect(result).toEqual({ status: 200, connection: "close" })
      const took = yield* closing
      expect(took).toBeGreaterThanOrEqual(150)
      expect(took).toBeLessThan(2000)
      expect(connections.open()).toBe(0)
    }),
  )

  it.live("destroys a request that never finishes when the drain time runs out", () =>
    Effect.gen(function* () {
      const server = createServer((req) => req.resume())
      const connections = trackConnections(server)
      const port = yield* listen(server)
      const body = yield* Effect.promise(() => stalledBody("stalled body", port, { method: "POST", path: "/" }))
      const took = yield* timed(connections.close(Effect.succeed(Duration.millis(300))))
      expect(took).toBeGreaterThanOrEqual(250)
      expect(took).toBeLessThan(1500)
      expect(yield* closedWithin(body, 1000)).toBe(true)
    }),
  )

  it.live("closeNow destroys every connection, requests in flight included", () =>
    Effect.gen(function* () {
      const server = createServer((req) => req.resume())
      const connections = trackConnections(server)
      const port = yield* listen(server)
      const body = yield* Effect.promise(() => stalledBody("stalled body", port, { method: "PUT", path: "/" }))
      const loris = yield* Effect.promise(() => slowloris("slowloris", port))
      expect(yield* connections.closeNow).toBe(2)
      expect(yield* closedWithin(body, 1000)).toBe(true)
      expect(yield* closedWithin(loris, 1000)).toBe(true)
      // A close after it has nothing left to wait for.
      expect(yield* timed(connections.close(Effect.succeed(Duration.seconds(30))))).toBeLessThan(1000)
    }),
  )
})
