/**
 * Certificate issuance throughput of the CA over gRPC with TLS: concurrent grpc-js clients send
 * pre-generated ECDSA P-256 CSRs with a bearer token; measured against an RSA-2048 root and an
 * ECDSA P-256 root, with p50/p99 latency. The same run prints `openssl speed` sign rates for
 * rsa2048 and ecdsap256 as the floor. Target (issue 5): issuance rate at least 50% of openssl's
 * single-core sign rate for the root's key type.
 *   node dist/scripts/bench-ca.mjs [requests=2000] [concurrency=32]
 */
import { execFileSync, fork } from "node:child_process"
import { createPublicKey, generateKeyPairSync } from "node:crypto"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Layer, ManagedRuntime } from "effect"
import * as jose from "jose"
import { buildAuthenticators } from "../src/layers/ca/authenticators.js"
import { certificateAuthorityLayer } from "../src/layers/ca/authority.js"
import { CaGrpcServer, caGrpcServerLayer } from "../src/layers/ca/grpc-server.js"
import { caClientConstructor } from "../src/layers/ca/proto.js"
import { metricsLayer } from "../src/layers/metrics.js"
import { CertificateAuthority } from "../src/services/ca/ca.js"
import { trustBundlePem } from "../src/services/ca/material.js"
import { subtle, x509 } from "../src/services/ca/x509.js"

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"))
const requests = Number(args[0] ?? 2000)
const concurrency = Number(args[1] ?? 32)
const ID = "spiffe://cluster.local/ns/bench/sa/client"
const ISSUER = "https://bench.issuer"

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!

/** A plugged-in CA directory whose root is an ECDSA P-256 key (made with Node crypto + x509). */
const ecRootDir = async (dir: string) => {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const pkcs8 = privateKey.export({ format: "der", type: "pkcs8" })
  const alg = { name: "ECDSA", namedCurve: "P-256" }
  const key = await subtle.importKey("pkcs8", pkcs8, alg, true, ["sign"])
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" })
  const pub = await subtle.importKey("spki", spki, alg, true, ["verify"])
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    name: "O=bench, CN=EC root",
    notAfter: new Date(Date.now() + 365 * 86_400_000),
    keys: { privateKey: key, publicKey: pub } as never,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      await x509.SubjectKeyIdentifierExtension.create(pub),
    ],
  })
  mkdirSync(dir, { recursive: true })
  const pem = `${root.toString("pem")}\n`
  writeFileSync(join(dir, "ca-cert.pem"), pem)
  writeFileSync(join(dir, "root-cert.pem"), pem)
  writeFileSync(join(dir, "cert-chain.pem"), pem)
  writeFileSync(join(dir, "ca-key.pem"), privateKey.export({ format: "pem", type: "pkcs8" }))
}

const csrs = async (count: number) => {
  const out: Array<string> = []
  for (let i = 0; i < count; i++) {
    const keys = await subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      keys: keys as never,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: "url", value: ID }])],
    })
    out.push(csr.toString("pem"))
  }
  return out
}

const run = async (label: string, rootCaDir: string, stateDir: string, pool: ReadonlyArray<string>) => {
  const { privateKey, publicKey } = await jose.generateKeyPair("ES256")
  const jwks = JSON.stringify({ keys: [{ ...(await jose.exportJWK(publicKey)), kid: "k" }] })
  const token = await new jose.SignJWT({ sub: "system:serviceaccount:bench:client" })
    .setProtectedHeader({ alg: "ES256", kid: "k" })
    .setIssuer(ISSUER)
    .setAudience("mesh-ca")
    .setExpirationTime("1h")
    .sign(privateKey)
  const auth = buildAuthenticators({
    trustDomain: "cluster.local",
    tokenIssuer: "",
    jwtRule: JSON.stringify({ issuer: ISSUER, jwks }),
    tokenAudiences: "mesh-ca",
    audience: "",
  })
  if (auth._tag === "Left") throw new Error(auth.left)
  const ca = certificateAuthorityLayer({
    trustDomain: "cluster.local",
    rootCaDir,
    stateDir,
    rsaKeySize: 2048,
    selfSignedTtl: Duration.hours(87600),
    rotation: { checkInterval: Duration.zero, gracePeriodPercentile: 20, enableJitter: false },
    policy: { defaultTtl: Duration.hours(24), maxTtl: Duration.hours(2160) },
  })
  const server = caGrpcServerLayer({
    address: { host: "127.0.0.1", port: 0 },
    dnsNames: ["meshd.mesh-system.svc"],
    authenticators: auth.right,
    nodeAuthorizer: undefined,
  })
  const runtime = ManagedRuntime.make(server.pipe(Layer.provideMerge(ca), Layer.provideMerge(metricsLayer("bench"))))
  const [{ port }, authority] = await runtime.runPromise(Effect.all([CaGrpcServer, CertificateAuthority]))
  const rootPem = trustBundlePem(await runtime.runPromise(authority.material))
  // The clients run in a child process so that this process's core serves only the CA.
  const child = fork(fileURLToPath(import.meta.url), ["--client"], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const measured = await new Promise<{ latencies: Array<number>; seconds: number }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { latencies: Array<number>; seconds: number }))
    child.once("error", reject)
    child.send({ port, rootPem, token, pool, requests, concurrency })
  })
  child.kill()
  const latencies = measured.latencies.sort((a, b) => a - b)
  const seconds = measured.seconds
  await runtime.dispose()
  return {
    root: label,
    requests,
    concurrency,
    certsPerSecond: Math.round(requests / seconds),
    p50Ms: Math.round(percentile(latencies, 50) * 100) / 100,
    p99Ms: Math.round(percentile(latencies, 99) * 100) / 100,
  }
}

/** Client mode (child process): drives the server and reports latencies. */
const clientMode = () =>
  process.once("message", async (message) => {
    const {
      port,
      rootPem,
      token,
      pool,
      requests: total,
      concurrency: lanes,
    } = message as {
      port: number
      rootPem: string
      token: string
      pool: Array<string>
      requests: number
      concurrency: number
    }
    const Client = caClientConstructor()
    const clients = Array.from(
      { length: Math.min(8, lanes) },
      () =>
        new Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(Buffer.from(rootPem)), {
          "grpc.ssl_target_name_override": "meshd.mesh-system.svc",
          "grpc.default_authority": "meshd.mesh-system.svc",
        }) as unknown as Record<string, Function>,
    )
    const metadata = new grpc.Metadata()
    metadata.set("authorization", `Bearer ${token}`)
    const call = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const start = performance.now()
        clients[i % clients.length]!.CreateCertificate!(
          { csr: pool[i % pool.length], validity_duration: 3600 },
          metadata,
          (error: Error | null) => (error ? reject(error) : resolve(performance.now() - start)),
        )
      })
    const drive = async (count: number) => {
      const latencies: Array<number> = []
      let next = 0
      await Promise.all(
        Array.from({ length: lanes }, async () => {
          while (next < count) latencies.push(await call(next++))
        }),
      )
      return latencies
    }
    await drive(Math.min(200, total)) // warm-up: JIT, TLS, HTTP/2 windows
    const start = performance.now()
    const latencies = await drive(total)
    const seconds = (performance.now() - start) / 1000
    process.send!({ latencies, seconds })
  })

const opensslSpeed = () => {
  const out = execFileSync("openssl", ["speed", "-seconds", "3", "rsa2048", "ecdsap256"], {
    stdio: ["ignore", "pipe", "ignore"],
  }).toString()
  const rsa = /^rsa\s+2048 bits\s+\S+s\s+\S+s\s+([\d.]+)/m.exec(out)
  const ec = /^\s*256 bits ecdsa \(nistp256\)\s+\S+s\s+\S+s\s+([\d.]+)/m.exec(out)
  return {
    rsa2048SignsPerSecond: Number(rsa?.[1] ?? Number.NaN),
    ecdsap256SignsPerSecond: Number(ec?.[1] ?? Number.NaN),
  }
}

if (process.argv.includes("--client")) {
  clientMode()
} else {
  const work = mkdtempSync(join(tmpdir(), "mesh-bench-ca-"))
  const pool = await csrs(256)
  const rsa = await run("RSA-2048 (self-signed)", join(work, "none"), join(work, "state-rsa"), pool)
  await ecRootDir(join(work, "ec"))
  const ec = await run("ECDSA P-256 (plugged-in)", join(work, "ec"), join(work, "state-ec"), pool)
  const floor = opensslSpeed()
  const result = {
    benchmark: "ca-issuance",
    results: [
      {
        ...rsa,
        opensslSignsPerSecond: floor.rsa2048SignsPerSecond,
        ratio: rsa.certsPerSecond / floor.rsa2048SignsPerSecond,
      },
      {
        ...ec,
        opensslSignsPerSecond: floor.ecdsap256SignsPerSecond,
        ratio: ec.certsPerSecond / floor.ecdsap256SignsPerSecond,
      },
    ],
    target: "ratio >= 0.5",
  }
  console.log(JSON.stringify(result, null, 2))
}
