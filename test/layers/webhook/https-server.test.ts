/**
 * The HTTPS listener of --httpsAddr: it serves the shared serving certificate, installs a
 * replacement for new connections, applies the TLS restrictions, and is off without a
 * certificate. The shared source is run once however many listeners subscribe.
 */
import { execFileSync } from "node:child_process"
import { X509Certificate } from "node:crypto"
import { mkdtempSync, readFileSync } from "node:fs"
import { request } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TLSSocket } from "node:tls"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Queue, Schedule, Stream } from "effect"
import type { ListenerTls, ServingCertSource, ServingMaterial } from "../../../src/layers/secure-grpc/listener.js"
import { ServingCert, shareServingCertSource } from "../../../src/layers/secure-grpc/serving-cert.js"
import { makeHttpsServer } from "../../../src/layers/webhook/https-server.js"

const NAME = "meshd.mesh-system.svc"

const selfSigned = (dir: string, name: string): ServingMaterial => {
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"].concat([
      "-keyout",
      join(dir, `${name}.key`),
      "-out",
      join(dir, `${name}.crt`),
      "-subj",
      `/O=${name}`,
      "-addext",
      `subjectAltName=DNS:${NAME}`,
    ]),
    { stdio: "pipe" },
  )
  const certChainPem = readFileSync(join(dir, `${name}.crt`), "utf8")
  return { certChainPem, keyPem: readFileSync(join(dir, `${name}.key`), "utf8"), clientCaPem: "" }
}

const dir = mkdtempSync(join(tmpdir(), "https-server-"))
const first = selfSigned(dir, "first")
const second = selfSigned(dir, "second")

/** GET / trusting `caPem`; resolves with the status and the served certificate, or the TLS error. */
const get = (port: number, caPem: string, tls: { maxVersion?: "TLSv1.3"; minVersion?: "TLSv1.3" } = {}) =>
  Effect.async<{ status: number; peer: X509Certificate }, Error>((resume) => {
    const req = request({ host: "127.0.0.1", port, servername: NAME, ca: caPem, agent: false, ...tls }, (res) => {
      const peer = (res.socket as TLSSocket).getPeerX509Certificate()!
      res.resume()
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, peer })))
    })
    req.on("error", (e) => resume(Effect.fail(e)))
    req.end()
  })

/** A source whose replacements the test pushes; counts how often it is run. */
const manualSource =
  (updates: Queue.Queue<ServingMaterial>, runs: { count: number }): ServingCertSource =>
  (apply) =>
    Effect.gen(function* () {
      runs.count++
      yield* apply(first)
      yield* Effect.forkScoped(Stream.runForEach(Stream.fromQueue(updates), apply))
    })

const certLayer = (source: ServingCertSource | undefined, tls: ListenerTls = {}) =>
  Layer.scoped(
    ServingCert,
    source === undefined
      ? Effect.succeed({ source: undefined, tls })
      : Effect.map(shareServingCertSource(source), (shared) => ({ source: shared, tls })),
  )

const handler = (_req: unknown, res: import("node:http").ServerResponse) => {
  res.writeHead(204)
  res.end()
}

describe("HTTPS listener", () => {
  it.live(
    "serves the shared certificate, and a replacement to new connections; two listeners share one source run",
    () =>
      Effect.gen(function* () {
        const updates = yield* Queue.unbounded<ServingMaterial>()
        const runs = { count: 0 }
        const cert = yield* Layer.build(certLayer(manualSource(updates, runs)))
        const ports = yield* Effect.all([
          makeHttpsServer({ address: { host: "127.0.0.1", port: 0 }, name: "a" }, handler),
          makeHttpsServer({ address: { host: "127.0.0.1", port: 0 }, name: "b" }, handler),
        ]).pipe(Effect.provide(cert))
        const [a, b] = ports as [number, number]
        expect(runs.count).toBe(1)
        const before = yield* get(a, first.certChainPem)
        expect(before.status).toBe(204)
        expect(before.peer.fingerprint256).toBe(new X509Certificate(first.certChainPem).fingerprint256)

        yield* Queue.offer(updates, second)
        // Both listeners switch: poll until a new connection presents the second certificate.
        for (const port of [a, b]) {
          const after = yield* get(port, second.certChainPem).pipe(
            Effect.retry({ times: 100, schedule: Schedule.spaced("20 millis") }),
          )
          expect(after.peer.fingerprint256).toBe(new X509Certificate(second.certChainPem).fingerprint256)
        }
        // The old certificate no longer verifies for new connections.
        const old = yield* Effect.either(get(a, first.certChainPem))
        expect(old._tag).toBe("Left")
      }).pipe(Effect.scoped),
  )

  it.live("applies the TLS restrictions (COMPLIANCE_POLICY=fips-140-2 caps at TLS 1.2)", () =>
    Effect.gen(function* () {
      const runs = { count: 0 }
      const updates = yield* Queue.unbounded<ServingMaterial>()
      const cert = yield* Layer.build(
        certLayer(manualSource(updates, runs), {
          ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
          minVersion: "TLSv1.2",
          maxVersion: "TLSv1.2",
          ecdhCurve: "P-256:P-384",
        }),
      )
      const port = yield* makeHttpsServer({ address: { host: "127.0.0.1", port: 0 }, name: "fips" }, handler).pipe(
        Effect.provide(cert),
      )
      expect((yield* get(port!, first.certChainPem)).status).toBe(204)
      const tls13 = yield* Effect.either(get(port!, first.certChainPem, { minVersion: "TLSv1.3" }))
      expect(tls13._tag).toBe("Left")
    }).pipe(Effect.scoped),
  )

  it.live("is off without a certificate, and fails naming --httpsAddr when it cannot listen", () =>
    Effect.gen(function* () {
      const off = yield* makeHttpsServer({ address: { host: "127.0.0.1", port: 0 }, name: "off" }, handler).pipe(
        Effect.provide(certLayer(undefined)),
      )
      expect(off).toBeUndefined()
      const runs = { count: 0 }
      const updates = yield* Queue.unbounded<ServingMaterial>()
      const layer = yield* Layer.build(certLayer(manualSource(updates, runs)))
      const taken = yield* makeHttpsServer({ address: { host: "127.0.0.1", port: 0 }, name: "x" }, handler).pipe(
        Effect.provide(layer),
      )
      const error = yield* Effect.flip(
        makeHttpsServer({ address: { host: "127.0.0.1", port: taken! }, name: "webhook" }, handler).pipe(
          Effect.provide(layer),
        ),
      )
      expect(error.reason).toMatch(
        new RegExp(`^--httpsAddr=127\\.0\\.0\\.1:${taken}: the webhook HTTPS listener cannot listen: .*EADDRINUSE`),
      )
    }).pipe(Effect.scoped),
  )
})
