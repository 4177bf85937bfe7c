/** `request <method> <path> [<body>]` against a local HTTP server. */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { sendLocalRequest } from "../../../src/programs/shared/request-command.js"

describe("sendLocalRequest", () => {
  it.live("sends method, path and body; returns status and body", () =>
    Effect.gen(function* () {
      const server = createServer((req, res) => {
        let body = ""
        req.on("data", (chunk) => (body += chunk))
        req.on("end", () => {
          res.statusCode = req.url === "/missing" ? 404 : 200
          res.end(`${req.method} ${req.url} ${body}`)
        })
      })
      yield* Effect.async<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      const port = (server.address() as AddressInfo).port
      const ok = yield* sendLocalRequest(port, "POST", "logging?level=debug", "payload")
      expect(ok).toEqual({ status: 200, body: "POST /logging?level=debug payload" })
      const missing = yield* sendLocalRequest(port, "GET", "/missing", undefined)
      expect(missing.status).toBe(404)
      yield* Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
      const refused = yield* Effect.flip(sendLocalRequest(port, "GET", "/x", undefined))
      expect(refused.message).toContain(`GET http://127.0.0.1:${port}/x`)
    }),
  )
})
