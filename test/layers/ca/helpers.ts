/** Test helpers for the CA: a local OIDC issuer, CSRs, a real grpc-js client, openssl. */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Fiber, Option, Stream, TestClock } from "effect"
import * as jose from "jose"
import type { Registry } from "prom-client"
import type { CaSettings } from "../../../src/layers/ca/authority.js"
import { caClientConstructor } from "../../../src/layers/ca/proto.js"
import type { CertificateAuthorityShape } from "../../../src/services/ca/ca.js"
import { DEFAULT_KEY_ROTATION } from "../../../src/services/ca/key-rotation.js"
import type { SigningMaterial } from "../../../src/services/ca/material.js"
import { subtle, x509 } from "../../../src/services/ca/x509.js"

export const execFileAsync = promisify(execFile)

export const tempDir = (prefix: string) => mkdtemp(join(tmpdir(), `mesh-ca-${prefix}-`))

/** A local OIDC issuer: discovery and JWKS over HTTP on 127.0.0.1, signing real ES256 tokens. */
export interface TestIssuer {
  readonly issuer: string
  readonly close: () => Promise<void>
  readonly token: (claims: {
    sub?: string
    aud?: string | Array<string>
    expiresIn?: string | number
    issuer?: string
    extra?: Record<string, unknown>
    otherKey?: boolean
  }) => Promise<string>
}

export const startIssuer = async (): Promise<TestIssuer> => {
  const { privateKey, publicKey } = await jose.generateKeyPair("ES256")
  const other = await jose.generateKeyPair("ES256")
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "test-key", alg: "ES256", use: "sig" }
  let issuer = ""
  const server: Server = createServer((req, res) => {
    if (req.url === "/.well-known/openid-configuration") {
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }))
    } else if (req.url === "/jwks") {
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify({ keys: [jwk] }))
    } else {
      res.statusCode = 404
      res.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    close: () => new Promise((resolve) => server.close(() => resolve())),
    token: async (c) => {
      const jwt = new jose.SignJWT(c.extra ?? {})
        .setProtectedHeader({ alg: "ES256", kid: "test-key" })
        .setIssuer(c.issuer ?? issuer)
        .setAudience(c.aud ?? "mesh-ca")
        .setIssuedAt()
      if (c.sub !== undefined) jwt.setSubject(c.sub)
      if (typeof c.expiresIn === "number") jwt.setExpirationTime(c.expiresIn)
      else jwt.setExpirationTime(c.expiresIn ?? "1h")
      return jwt.sign(c.otherKey ? other.privateKey : privateKey)
    },
  }
}

/** An ECDSA (or RSA) CSR made with @peculiar/x509 over WebCrypto. */
export const makeCsr = async (
  uris: ReadonlyArray<string>,
  kind: "P-256" | "P-384" | "RSA-2048" = "P-256",
): Promise<{ csrPem: string; keyPem: string }> => {
  const algorithm =
    kind === "RSA-2048"
      ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }
      : { name: "ECDSA", namedCurve: kind }
  const keys = (await subtle.generateKey(algorithm, true, ["sign", "verify"])) as {
    privateKey: import("node:crypto").webcrypto.CryptoKey
    publicKey: import("node:crypto").webcrypto.CryptoKey
  }
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: "",
    keys: keys as never,
    signingAlgorithm:
      kind === "RSA-2048" ? algorithm : { name: "ECDSA", hash: kind === "P-384" ? "SHA-384" : "SHA-256" },
    extensions:
      uris.length > 0 ? [new x509.SubjectAlternativeNameExtension(uris.map((value) => ({ type: "url", value })))] : [],
  })
  const pkcs8 = Buffer.from(await subtle.exportKey("pkcs8", keys.privateKey)).toString("base64")
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`
  return { csrPem: csr.toString("pem"), keyPem }
}

/** An RSA-2048 CSR made by the real openssl. */
export const opensslRsaCsr = async (dir: string, uri: string): Promise<{ csrPem: string; keyPem: string }> => {
  const key = join(dir, "rsa.key")
  const csr = join(dir, "rsa.csr")
  await execFileAsync("openssl", [
    "req",
    "-new",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    key,
    "-out",
    csr,
    "-subj",
    "/O=mesh-test",
    "-addext",
    `subjectAltName=URI:${uri}`,
  ])
  return { csrPem: await readFile(csr, "utf8"), keyPem: await readFile(key, "utf8") }
}

export interface CallResult {
  readonly chain?: ReadonlyArray<string>
  readonly error?: grpc.ServiceError
}

/** Calls CreateCertificate with a real grpc-js client over TLS. */
export const createCertificateCall = (
  port: number,
  rootPem: string,
  request: { csr: string; validity_duration?: number; metadata?: Record<string, string> },
  options: { token?: string; clientCert?: { certPem: string; keyPem: string }; serverName?: string } = {},
): Promise<CallResult> => {
  const Client = caClientConstructor()
  const credentials = grpc.credentials.createSsl(
    Buffer.from(rootPem),
    options.clientCert ? Buffer.from(options.clientCert.keyPem) : null,
    options.clientCert ? Buffer.from(options.clientCert.certPem) : null,
  )
  const client = new Client(`127.0.0.1:${port}`, credentials, {
    "grpc.ssl_target_name_override": options.serverName ?? "meshd.mesh-system.svc",
    "grpc.default_authority": options.serverName ?? "meshd.mesh-system.svc",
  })
  const metadata = new grpc.Metadata()
  if (options.token !== undefined) metadata.set("authorization", `Bearer ${options.token}`)
  const fields = Object.fromEntries(
    Object.entries(request.metadata ?? {}).map(([k, v]) => [k, { stringValue: v, kind: "stringValue" }]),
  )
  return new Promise((resolve) => {
    ;(client as unknown as Record<string, Function>).CreateCertificate!(
      { csr: request.csr, validity_duration: request.validity_duration ?? 0, metadata: { fields } },
      metadata,
      (error: grpc.ServiceError | null, response: { cert_chain: Array<string> }) => {
        client.close()
        resolve(error ? { error } : { chain: response.cert_chain })
      },
    )
  })
}

/** Current value of a counter (optionally one label set) in a registry. */
/**
 * A `WatchTrustBundle` stream authenticated with `token`, reading what it is sent and never
 * acknowledging (an agent that has not applied the bundle). `close` cancels the call first:
 * closing a grpc-js client leaves its calls running.
 */
export const openTrustBundleStream = (port: number, rootPem: string, token: string) => {
  const Client = caClientConstructor()
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(Buffer.from(rootPem)), {
    "grpc.ssl_target_name_override": "meshd.mesh-system.svc",
    "grpc.default_authority": "meshd.mesh-system.svc",
  })
  const metadata = new grpc.Metadata()
  metadata.set("authorization", `Bearer ${token}`)
  const call = (
    client as unknown as { WatchTrustBundle: (m: grpc.Metadata) => grpc.ClientDuplexStream<unknown, unknown> }
  ).WatchTrustBundle(metadata)
  call.on("error", () => {})
  call.on("data", () => {})
  /** The call's final status. */
  const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve))
  return {
    status,
    close: () => {
      call.cancel()
      client.close()
    },
  }
}

/**
 * CA settings for key rotation tests under TestClock: a self-signed root in `stateDir` (no
 * ROOT_CA_DIR), no root rotation, workload certificates of at most 2 h (phase (c)), phase
 * checks every 10 s, at least 30 s of publishing, a 10 min publish timeout.
 */
export const keyRotationTestSettings = (stateDir: string, overrides: Partial<CaSettings> = {}): CaSettings => ({
  trustDomain: "cluster.local",
  rootCaDir: join(stateDir, "no-plugged-ca"),
  stateDir,
  rsaKeySize: 2048,
  selfSignedTtl: Duration.hours(1000),
  rotation: { checkInterval: Duration.zero, gracePeriodPercentile: 20, enableJitter: false },
  policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(2) },
  keyRotation: {
    ...DEFAULT_KEY_ROTATION,
    checkInterval: Duration.seconds(10),
    publishMinWait: Duration.seconds(30),
    publishTimeout: Duration.minutes(10),
  },
  ...overrides,
})

/**
 * Runs `change` (a clock adjustment, a change of the CA's source) and waits for the material
 * `done` accepts: a phase change writes its state (real I/O) after the clock moved, so a test
 * waits for its result, not for the clock. No timeout: under TestClock it would fire as the
 * clock moves.
 */
export const changeUntil = <E, R>(
  ca: CertificateAuthorityShape,
  change: Effect.Effect<unknown, E, R>,
  done: (m: SigningMaterial) => boolean,
) =>
  Effect.gen(function* () {
    const waiting = yield* Effect.fork(
      ca.changes.pipe(Stream.filter(done), Stream.runHead, Effect.map(Option.getOrThrow)),
    )
    yield* change
    return yield* Fiber.join(waiting)
  })

/** `changeUntil` with TestClock advanced by `by`. */
export const adjustUntil = (
  ca: CertificateAuthorityShape,
  by: Duration.DurationInput,
  done: (m: SigningMaterial) => boolean,
) => changeUntil(ca, TestClock.adjust(by), done)

export const counterValue = async (registry: Registry, name: string, labels: Record<string, string> = {}) => {
  const metric = registry.getSingleMetric(name)
  if (metric === undefined) return 0
  const data = await metric.get()
  return data.values
    .filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l))
    .reduce((sum, v) => sum + v.value, 0)
}

/** `openssl verify -CAfile root -untrusted chain leaf` on a response chain; returns stdout. */
export const opensslVerify = async (dir: string, chain: ReadonlyArray<string>, rootPem: string) => {
  const leaf = join(dir, "leaf.pem")
  const untrusted = join(dir, "chain.pem")
  const root = join(dir, "root.pem")
  await writeFile(leaf, chain[0]!)
  await writeFile(untrusted, chain.slice(1, -1).join("") || chain[chain.length - 1]!)
  await writeFile(root, rootPem)
  const { stdout } = await execFileAsync("openssl", ["verify", "-CAfile", root, "-untrusted", untrusted, leaf])
  return stdout
}

/** `openssl verify -attime` of `leaf` against the roots of `bundle` at `atMs`: "…: OK" or openssl's complaint. */
export const opensslVerifyAt = async (dir: string, bundle: string, leaf: string, atMs: number): Promise<string> => {
  await writeFile(join(dir, "bundle.pem"), bundle)
  await writeFile(join(dir, "leaf.pem"), leaf)
  return execFileAsync("openssl", [
    "verify",
    "-attime",
    String(Math.floor(atMs / 1000)),
    "-CAfile",
    join(dir, "bundle.pem"),
    join(dir, "leaf.pem"),
  ]).then(
    (r) => r.stdout,
    (e: { stdout: string; stderr: string }) => `${e.stdout}${e.stderr}`,
  )
}

export const opensslText = async (dir: string, pem: string) => {
  const file = join(dir, "text.pem")
  await writeFile(file, pem)
  const { stdout } = await execFileAsync("openssl", ["x509", "-noout", "-text", "-in", file])
  return stdout
}

/** The certificate a TLS server presents (handshake only, ALPN h2). */
export const servingCertificate = (port: number, servername = "meshd.mesh-system.svc") =>
  new Promise<import("node:tls").DetailedPeerCertificate>((resolve, reject) => {
    import("node:tls").then(({ connect }) => {
      const socket = connect({ host: "127.0.0.1", port, servername, ALPNProtocols: ["h2"], rejectUnauthorized: false })
      socket.once("secureConnect", () => {
        const cert = socket.getPeerCertificate(true)
        socket.destroy()
        resolve(cert)
      })
      socket.once("error", reject)
    }, reject)
  })
