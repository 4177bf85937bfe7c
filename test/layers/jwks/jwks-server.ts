/**
 * A local JWKS server for the resolver tests (HTTP, or HTTPS with a self-signed certificate
 * made by openssl): each path answers what the test last set, and counts its requests.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"

/** An answer: a status and body, or no answer at all (the request hangs until the server closes). */
export type Answer = { readonly status: number; readonly body: string } | "hang"

export interface JwksServer {
  readonly base: string
  /** Sets what a path answers from now on (unknown paths answer 404). */
  readonly answer: (path: string, answer: Answer) => void
  /** Requests received for a path. */
  readonly hits: (path: string) => number
}

export const json = (value: unknown): Answer => ({ status: 200, body: JSON.stringify(value) })

/** A key set with one key id (the kid is what tests compare). */
export const keySet = (kid: string) => ({ keys: [{ kty: "EC", crv: "P-256", x: "AAAA", y: "BBBB", kid }] })

/** A self-signed certificate for 127.0.0.1, made by openssl in a temporary directory. */
export const selfSignedCert = (): { readonly key: string; readonly cert: string } => {
  const dir = mkdtempSync(join(tmpdir(), "mesh-jwks-"))
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"].concat([
        "-keyout",
        join(dir, "server.key"),
        "-out",
        join(dir, "server.crt"),
        "-subj",
        "/CN=jwks.test",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ]),
      { stdio: "ignore" },
    )
    return { key: readFileSync(join(dir, "server.key"), "utf8"), cert: readFileSync(join(dir, "server.crt"), "utf8") }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Starts the server for the test's scope. */
export const jwksServer = (tls?: { readonly key: string; readonly cert: string }) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Server; readonly jwks: JwksServer }>((resume) => {
      const answers = new Map<string, Answer>()
      const hits = new Map<string, number>()
      const handler = (req: IncomingMessage, res: ServerResponse) => {
        const path = req.url ?? "/"
        hits.set(path, (hits.get(path) ?? 0) + 1)
        const answer = answers.get(path) ?? { status: 404, body: "not found" }
        if (answer === "hang") return
        res.statusCode = answer.status
        res.setHeader("content-type", "application/json")
        res.end(answer.body)
      }
      const server = tls === undefined ? createHttpServer(handler) : createHttpsServer(tls, handler)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(
          Effect.succeed({
            server,
            jwks: {
              base: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
              answer: (path, answer) => void answers.set(path, answer),
              hits: (path) => hits.get(path) ?? 0,
            },
          }),
        )
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      }),
  ).pipe(Effect.map(({ jwks }) => jwks))
