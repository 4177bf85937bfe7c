/**
 * End-to-end: the webhook listener on `--httpsAddr` of the built `mesh-discovery`. Its certificate
 * is the secure gRPC listener's (CA-issued for meshd.mesh-system.svc, or `--tlsCertFile`), checked
 * with node's TLS client and `openssl s_client`; the validation webhook answers AdmissionReviews
 * and counts them on `--monitoringAddr`; a replaced `--tlsCertFile` is served to new connections
 * while an open keep-alive connection goes on working.
 */
import { X509Certificate } from "node:crypto"
import { readFileSync, renameSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:https"
import { join } from "node:path"
import type { TLSSocket } from "node:tls"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { opensslConnect, opensslServerCert } from "../support/openssl.js"
import { type Daemon, startDaemon } from "../support/processes.js"

const SERVER_NAME = "meshd.mesh-system.svc"

const args = (dir: string) => discoveryArgs(join(dir, "mesh"))

const newDir = () => exampleMeshDir("webhook-")

interface Answer {
  readonly status: number
  readonly body: string
  readonly peer: X509Certificate
  readonly socket: TLSSocket
}

/** One HTTPS request verifying the server as SERVER_NAME against `caPem`. */
const call = (
  port: number,
  caPem: string,
  options: { method?: string; path?: string; body?: string; contentType?: string; agent?: Agent } = {},
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        servername: SERVER_NAME,
        ca: caPem,
        method: options.method ?? "POST",
        path: options.path ?? "/validate",
        headers: { "content-type": options.contentType ?? "application/json" },
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
      },
      (res) => {
        // The socket is detached from the response once it ends (keep-alive).
        const socket = res.socket as TLSSocket
        const peer = socket.getPeerX509Certificate()!
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          body += chunk
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, peer, socket }))
      },
    )
    req.on("error", reject)
    req.end(options.body ?? "")
  })

const review = (uid: string, weights: ReadonlyArray<number>) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      resource: { group: "networking.istio.io", version: "v1", resource: "virtualservices" },
      operation: "CREATE",
      object: {
        apiVersion: "networking.istio.io/v1",
        kind: "VirtualService",
        metadata: { name: "reviews", namespace: "default" },
        spec: {
          hosts: ["reviews"],
          http: [
            { route: weights.map((weight, i) => ({ destination: { host: "reviews", subset: `v${i}` }, weight })) },
          ],
        },
      },
    },
  })

const metricsText = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()

describe("webhooks on --httpsAddr with the CA-issued certificate (PILOT_CERT_PROVIDER=meshd)", () => {
  let daemon: Daemon
  let dir: string
  let port: number
  let monitoring: number
  let rootPem: string

  beforeAll(async () => {
    dir = newDir()
    daemon = startDaemon("mesh-discovery", args(dir), {}, dir)
    port = Number((await daemon.waitFor(/webhook HTTPS listener on [\d.]+:(\d+)/, 30_000))[1])
    monitoring = Number((await daemon.waitFor(/monitoring listening on [\d.]+:(\d+)/, 30_000))[1])
    rootPem = readFileSync(join(dir, "var/lib/meshd/ca/ca-cert.pem"), "utf8")
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
  })

  it("serves the secure gRPC listener's certificate for meshd.mesh-system.svc, verified by the CA root", async () => {
    const grpcPort = Number((await daemon.waitFor(/secure gRPC listener on [\d.]+:(\d+)/))[1])
    const answer = await call(port, rootPem, { method: "GET", path: "/nothing" })
    expect(answer.status).toBe(404)
    expect(answer.peer.subjectAltName).toBe(`DNS:${SERVER_NAME}`)
    const grpcPeer = opensslConnect(grpcPort, SERVER_NAME, ["-alpn", "h2"])
    // One certificate for both listeners.
    expect(
      new X509Certificate(grpcPeer.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/)![0])
        .fingerprint256,
    ).toBe(answer.peer.fingerprint256)
    writeFileSync(join(dir, "root.pem"), rootPem)
    const out = opensslConnect(port, SERVER_NAME, [
      "-verify_return_error",
      "-verify_hostname",
      SERVER_NAME,
      "-CAfile",
      join(dir, "root.pem"),
    ])
    expect(out).toContain("Verify return code: 0 (ok)")
  })

  it("allows a valid resource, refuses an invalid one with the reason, and counts both", async () => {
    const ok = await call(port, rootPem, { body: review("uid-ok", [50, 50]) })
    expect(ok.status).toBe(200)
    expect(JSON.parse(ok.body).response).toEqual({ uid: "uid-ok", allowed: true })
    const bad = await call(port, rootPem, { path: "/admitpilot", body: review("uid-bad", [50, 20]) })
    expect(bad.status).toBe(200)
    const response = JSON.parse(bad.body).response
    expect(response.uid).toBe("uid-bad")
    expect(response.allowed).toBe(false)
    expect(response.status.message).toBe(
      "configuration is invalid: VirtualService default/reviews: spec.http[0].route: total destination weight 70 != 100",
    )
    const malformed = await call(port, rootPem, { body: "{" })
    expect(malformed.status).toBe(400)
    const wrongType = await call(port, rootPem, { body: review("x", [100]), contentType: "text/plain" })
    expect(wrongType.status).toBe(415)
    const get = await call(port, rootPem, { method: "GET" })
    expect(get.status).toBe(405)
    // /inject answers a review it cannot use with a denial (inject-webhook.test.ts covers it).
    const inject = await call(port, rootPem, { path: "/inject", body: "{}" })
    expect(inject.status).toBe(200)
    expect(JSON.parse(inject.body).response.allowed).toBe(false)

    const metrics = await metricsText(monitoring)
    expect(metrics).toContain(
      'mesh_validation_passed{group="networking.istio.io",version="v1",resource="virtualservices"} 1',
    )
    expect(metrics).toContain(
      'mesh_validation_failed{group="networking.istio.io",version="v1",resource="virtualservices",reason="invalid_resource"} 1',
    )
    expect(metrics).toContain('mesh_validation_http_error{status="400"} 1')
    expect(metrics).toContain('mesh_validation_http_error{status="415"} 1')
    expect(metrics).toContain('mesh_validation_http_error{status="405"} 1')
  })

  it("labels caller-chosen resource names it does not know as `unknown`: 200 bogus names, one series", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 4 })
    try {
      for (let i = 0; i < 200; i++) {
        const body = JSON.parse(review(`uid-bogus-${i}`, [100]))
        body.request.resource = { group: `g${i}.evil`, version: `v${i}`, resource: `r${i}${"x".repeat(200)}` }
        const answer = await call(port, rootPem, { body: JSON.stringify(body), agent })
        expect(answer.status).toBe(200)
      }
    } finally {
      agent.destroy()
    }
    const series = (await metricsText(monitoring))
      .split("\n")
      .filter((line) => line.startsWith("mesh_validation_passed{"))
    expect(series).toContain('mesh_validation_passed{group="unknown",version="unknown",resource="unknown"} 200')
    expect(series.length).toBeLessThanOrEqual(2)
  })

  it("answers an oversized body with 413", async () => {
    const answer = await call(port, rootPem, { body: "x".repeat(6 * 1024 * 1024 + 1) })
    expect(answer.status).toBe(413)
    expect(await metricsText(monitoring)).toContain('mesh_validation_http_error{status="413"} 1')
  })
})

/** A private CA and a certificate for meshd.mesh-system.svc, made by openssl, named `name`. */
const serverCert = (dir: string, name: string) => opensslServerCert(dir, name, `DNS:${SERVER_NAME}`)

describe("webhooks on --httpsAddr with --tlsCertFile/--tlsKeyFile", () => {
  let daemon: Daemon
  let dir: string
  let port: number

  beforeAll(async () => {
    dir = newDir()
    serverCert(dir, "first")
    daemon = startDaemon(
      "mesh-discovery",
      [...args(dir), "--tlsCertFile", join(dir, "first.crt"), "--tlsKeyFile", join(dir, "first.key")],
      { PILOT_CERT_PROVIDER: "none" },
      dir,
    )
    port = Number((await daemon.waitFor(/webhook HTTPS listener on [\d.]+:(\d+)/, 30_000))[1])
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
  })

  it("serves that certificate, and a replacement to new connections without dropping an open one", async () => {
    const first = readFileSync(join(dir, "first-ca.crt"), "utf8")
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const before = await call(port, first, { agent, body: review("a", [100]) })
    expect(before.status).toBe(200)
    expect(before.peer.fingerprint256).toBe(new X509Certificate(readFileSync(join(dir, "first.crt"))).fingerprint256)

    // Replace the files (atomically, as a secret mount does) with a certificate of another CA.
    const second = serverCert(dir, "second")
    renameSync(join(dir, "second.key"), join(dir, "first.key"))
    renameSync(join(dir, "second.crt"), join(dir, "first.crt"))
    await daemon.waitFor(/serving certificate reloaded from/, 10_000)

    // A new connection gets the new certificate (verifies against the second CA only) ...
    const fresh = await call(port, second.caPem, { body: review("b", [100]) })
    expect(fresh.peer.fingerprint256).toBe(new X509Certificate(second.certPem).fingerprint256)
    // ... while the kept-alive connection, made under the first certificate, still answers.
    const after = await call(port, first, { agent, body: review("c", [100]) })
    expect(after.status).toBe(200)
    // Same TLS connection (the one negotiated with the first certificate), not a new one.
    expect(after.socket).toBe(before.socket)
    agent.destroy()
  })
})

describe("webhooks on --httpsAddr without a certificate", () => {
  it("are off with PILOT_CERT_PROVIDER=none, saying so", async () => {
    const dir = newDir()
    const daemon = startDaemon("mesh-discovery", args(dir), { PILOT_CERT_PROVIDER: "none" }, dir)
    try {
      await daemon.waitFor(/the webhook HTTPS listener on --httpsAddr=127\.0\.0\.1:0 is disabled/, 30_000)
      await daemon.waitFor(/ADS server listening on/, 30_000)
      expect(daemon.output()).not.toMatch(/webhook HTTPS listener on [\d.]+:\d+/)
    } finally {
      await daemon.stop()
    }
  })

  it("fail start-up naming --httpsAddr when the port is taken", async () => {
    const dir = newDir()
    const holder = startDaemon("mesh-discovery", args(dir), {}, dir)
    try {
      const taken = Number((await holder.waitFor(/webhook HTTPS listener on [\d.]+:(\d+)/, 30_000))[1])
      const other = newDir()
      const second = startDaemon(
        "mesh-discovery",
        args(other).map((a, i, all) => (all[i - 1] === "--httpsAddr" ? `127.0.0.1:${taken}` : a)),
        {},
        other,
      )
      const code = await new Promise<number | null>((resolve) => second.process.once("exit", resolve))
      expect(code).not.toBe(0)
      expect(second.output()).toMatch(
        new RegExp(`--httpsAddr=127\\.0\\.0\\.1:${taken}: the webhook HTTPS listener cannot listen: .*EADDRINUSE`),
      )
    } finally {
      await holder.stop()
    }
  })
})
