/**
 * End-to-end: secure xDS on `--secureGRPCAddr` of the built `mesh-discovery`, driven by a real
 * grpc-js ADS client over TLS. Certificates for the clients come from the daemon's own CA
 * (CreateCertificate with a token from a local OIDC issuer); `openssl` makes the
 * `--tlsCertFile` material.
 */
import { X509Certificate } from "node:crypto"
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { caClientConstructor } from "../../src/layers/ca/proto.js"
import { loadXdsProtos } from "../../src/layers/xds/protos.js"
import {
  createCertificateCall,
  makeCsr,
  servingCertificate,
  startIssuer,
  type TestIssuer,
} from "../layers/ca/helpers.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { opensslConnect, opensslServerCert } from "../support/openssl.js"
import { type Daemon, run, startDaemon } from "../support/processes.js"

const CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
const SERVER_NAME = "meshd.mesh-system.svc"
const nodeOf = (ns: string) => `sidecar~10.0.0.1~app-1.${ns}~${ns}.svc.cluster.local`
const tokenFor = (ns: string) => issuer.token({ sub: `system:serviceaccount:${ns}:app` })

interface ClientIdentity {
  readonly certPem: string
  readonly keyPem: string
}

interface AdsOutcome {
  readonly resources?: number
  readonly code?: number
  readonly details?: string
}

const protos = loadXdsProtos()
const AdsClient = grpc.makeClientConstructor(protos.ads, "AggregatedDiscoveryService")

/** Opens one ADS stream (SotW or delta), asks for clusters as `nodeId`, resolves with the first answer. */
const adsCall = (
  address: string,
  options: { rootPem?: string; identity?: ClientIdentity; token?: string; nodeId: string; delta?: boolean },
): Promise<AdsOutcome> => {
  const credentials =
    options.rootPem === undefined
      ? grpc.credentials.createInsecure()
      : grpc.credentials.createSsl(
          Buffer.from(options.rootPem),
          options.identity ? Buffer.from(options.identity.keyPem) : null,
          options.identity ? Buffer.from(options.identity.certPem) : null,
        )
  const client = new AdsClient(address, credentials, {
    "grpc.ssl_target_name_override": SERVER_NAME,
    "grpc.default_authority": SERVER_NAME,
  })
  const metadata = new grpc.Metadata()
  if (options.token !== undefined) metadata.set("authorization", `Bearer ${options.token}`)
  const method = options.delta ? "DeltaAggregatedResources" : "StreamAggregatedResources"
  const stream = (client as unknown as Record<string, (m: grpc.Metadata) => grpc.ClientDuplexStream<unknown, unknown>>)[
    method
  ]!.call(client, metadata)
  return new Promise<AdsOutcome>((resolve) => {
    const timer = setTimeout(() => finish({ details: "no answer within 10s" }), 10_000)
    const finish = (outcome: AdsOutcome) => {
      clearTimeout(timer)
      stream.removeAllListeners()
      stream.on("error", () => {})
      stream.cancel()
      client.close()
      resolve(outcome)
    }
    stream.on("data", (response: { resources?: Array<unknown> }) =>
      finish({ resources: (response.resources ?? []).length }),
    )
    stream.on("error", (e: grpc.ServiceError) => finish({ code: e.code, details: e.details }))
    stream.write({ node: { id: options.nodeId }, type_url: CLUSTER, resource_names: [] })
  })
}

/** A workload certificate for `ns` from the daemon's CA. */
const issueIdentity = async (caPort: number, rootPem: string, ns: string): Promise<ClientIdentity> => {
  const { csrPem, keyPem } = await makeCsr([`spiffe://cluster.local/ns/${ns}/sa/app`])
  const result = await createCertificateCall(caPort, rootPem, { csr: csrPem }, { token: await tokenFor(ns) })
  if (result.error !== undefined) throw result.error
  return { certPem: result.chain!.join(""), keyPem }
}

const commonArgs = (dir: string) => discoveryArgs(join(dir, "mesh"))

const newDir = () => exampleMeshDir("secure-xds-")

let issuer: TestIssuer

beforeAll(async () => {
  issuer = await startIssuer()
})

afterAll(async () => {
  await issuer?.close()
})

describe("secure xDS with the built-in CA (PILOT_CERT_PROVIDER=meshd, XDS_AUTH)", () => {
  let daemon: Daemon
  let secure: string
  let plaintext: string
  let rootPem: string
  let port: number

  beforeAll(async () => {
    const dir = newDir()
    daemon = startDaemon("mesh-discovery", commonArgs(dir), { TOKEN_ISSUER: issuer.issuer }, dir)
    port = Number((await daemon.waitFor(/secure gRPC listener on [\d.]+:(\d+)/, 30_000))[1])
    secure = `127.0.0.1:${port}`
    plaintext = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!
    await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
    rootPem = readFileSync(join(dir, "var/lib/meshd/ca/ca-cert.pem"), "utf8")
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
  })

  it("serves ADS and CreateCertificate on one port, with a CA-issued certificate for meshd.<ns>.svc", async () => {
    const cert = await servingCertificate(port)
    expect(cert.subjectaltname).toBe(`DNS:${SERVER_NAME}`)
    const identity = await issueIdentity(port, rootPem, "default")
    expect(identity.certPem).toContain("BEGIN CERTIFICATE")
  })

  it("gives configuration to a client with a mesh certificate of its own namespace (SotW and delta)", async () => {
    const identity = await issueIdentity(port, rootPem, "default")
    const sotw = await adsCall(secure, { rootPem, identity, nodeId: nodeOf("default") })
    expect(sotw.code).toBeUndefined()
    expect(sotw.resources).toBeGreaterThan(0)
    const delta = await adsCall(secure, { rootPem, identity, nodeId: nodeOf("default"), delta: true })
    expect(delta.code).toBeUndefined()
    expect(delta.resources).toBeGreaterThan(0)
  })

  it("refuses an unauthenticated client with UNAUTHENTICATED (SotW and delta)", async () => {
    for (const delta of [false, true]) {
      const outcome = await adsCall(secure, { rootPem, nodeId: nodeOf("default"), delta })
      expect(outcome.code).toBe(grpc.status.UNAUTHENTICATED)
      expect(outcome.details).toMatch(/authentication failed: .*no verified client certificate.*no bearer token/)
    }
    await daemon.waitFor(/refusing xDS stream from .*authentication failed/)
  })

  it("refuses a certificate of namespace foo asking as a proxy of namespace bar with PERMISSION_DENIED", async () => {
    const identity = await issueIdentity(port, rootPem, "foo")
    const outcome = await adsCall(secure, { rootPem, identity, nodeId: nodeOf("bar") })
    expect(outcome.code).toBe(grpc.status.PERMISSION_DENIED)
    expect(outcome.details).toContain("namespace bar")
    expect(outcome.details).toContain("spiffe://cluster.local/ns/foo/sa/app is of namespace foo")
  })

  it("accepts a valid bearer token instead of a certificate, and checks its namespace too", async () => {
    const ok = await adsCall(secure, { rootPem, token: await tokenFor("default"), nodeId: nodeOf("default") })
    expect(ok.code).toBeUndefined()
    expect(ok.resources).toBeGreaterThan(0)
    const other = await adsCall(secure, { rootPem, token: await tokenFor("default"), nodeId: nodeOf("bar") })
    expect(other.code).toBe(grpc.status.PERMISSION_DENIED)
    const expired = await adsCall(secure, {
      rootPem,
      token: await issuer.token({
        sub: "system:serviceaccount:default:app",
        expiresIn: Math.floor(Date.now() / 1000) - 60,
      }),
      nodeId: nodeOf("default"),
    })
    expect(expired.code).toBe(grpc.status.UNAUTHENTICATED)
    expect(expired.details).toMatch(/the token expired/)
  })

  it("leaves the plaintext port open without XDS_AUTH_PLAINTEXT", async () => {
    const outcome = await adsCall(plaintext, { nodeId: nodeOf("default") })
    expect(outcome.code).toBeUndefined()
    expect(outcome.resources).toBeGreaterThan(0)
  })
})

/** A private CA and a server certificate for meshd.mesh-system.svc, made by openssl. */
const serverCert = (dir: string, name: string) =>
  opensslServerCert(dir, name, `DNS:${SERVER_NAME},URI:spiffe://cluster.local/ns/default/sa/app`)

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256

describe("secure xDS with --tlsCertFile/--tlsKeyFile/--caCertFile, ENABLE_CA_SERVER=false, XDS_AUTH_PLAINTEXT", () => {
  let daemon: Daemon
  let dir: string
  let port: number
  let plaintext: string
  let first: ReturnType<typeof opensslServerCert>

  beforeAll(async () => {
    dir = newDir()
    first = serverCert(dir, "first")
    daemon = startDaemon(
      "mesh-discovery",
      [
        ...commonArgs(dir),
        "--tlsCertFile",
        join(dir, "first.crt"),
        "--tlsKeyFile",
        join(dir, "first.key"),
        "--caCertFile",
        join(dir, "first-ca.crt"),
      ],
      { TOKEN_ISSUER: issuer.issuer, ENABLE_CA_SERVER: "false", XDS_AUTH_PLAINTEXT: "true" },
      dir,
    )
    port = Number((await daemon.waitFor(/secure gRPC listener on [\d.]+:(\d+)/, 30_000))[1])
    plaintext = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!
    await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
  })

  it("serves the certificate of --tlsCertFile (openssl s_client agrees)", async () => {
    const served = await servingCertificate(port)
    expect(served.fingerprint256).toBe(fingerprint(first.certPem))
    const out = opensslConnect(port, SERVER_NAME, ["-alpn", "h2", "-CAfile", join(dir, "first-ca.crt")])
    expect(out).toContain("Verify return code: 0 (ok)")
  })

  it("still serves secure ADS without the CA service; a client certificate from --caCertFile's CA authenticates", async () => {
    const outcome = await adsCall(`127.0.0.1:${port}`, {
      rootPem: first.caPem,
      identity: { certPem: first.certPem, keyPem: first.keyPem },
      nodeId: nodeOf("default"),
    })
    expect(outcome.code).toBeUndefined()
    expect(outcome.resources).toBeGreaterThan(0)
    const Client = caClientConstructor()
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(Buffer.from(first.caPem)), {
      "grpc.ssl_target_name_override": SERVER_NAME,
    })
    const code = await new Promise<number>((resolve) => {
      ;(client as unknown as Record<string, Function>).CreateCertificate!(
        { csr: "" },
        (error: grpc.ServiceError | null) => resolve(error?.code ?? 0),
      )
    })
    client.close()
    expect(code).toBe(grpc.status.UNIMPLEMENTED)
  })

  it("with XDS_AUTH_PLAINTEXT, the plaintext port wants a token", async () => {
    const refused = await adsCall(plaintext, { nodeId: nodeOf("default") })
    expect(refused.code).toBe(grpc.status.UNAUTHENTICATED)
    const ok = await adsCall(plaintext, { token: await tokenFor("default"), nodeId: nodeOf("default") })
    expect(ok.code).toBeUndefined()
  })

  it("reloads replaced certificate files without restarting the listener", async () => {
    const second = serverCert(dir, "second")
    // Atomic replacement, as secret mounts do.
    writeFileSync(join(dir, "next.key"), second.keyPem)
    writeFileSync(join(dir, "next.crt"), second.certPem)
    writeFileSync(join(dir, "next-ca.crt"), second.caPem)
    renameSync(join(dir, "next.key"), join(dir, "first.key"))
    renameSync(join(dir, "next.crt"), join(dir, "first.crt"))
    renameSync(join(dir, "next-ca.crt"), join(dir, "first-ca.crt"))
    await daemon.waitFor(/serving certificate reloaded/, 10_000)
    expect((await servingCertificate(port)).fingerprint256).toBe(fingerprint(second.certPem))
  })
})

describe("bad serving-certificate settings fail start-up naming the flag and file", () => {
  const attempt = async (extra: Array<string>, env: Record<string, string> = {}) => {
    const dir = newDir()
    const result = await run("mesh-discovery", [...commonArgs(dir), ...extra], env)
    return { ...result, dir }
  }

  it("a missing --tlsCertFile", async () => {
    const result = await attempt(["--tlsCertFile", "/nonexistent/tls.crt", "--tlsKeyFile", "/nonexistent/tls.key"])
    expect(result.code).toBe(1)
    expect(result.stdout + result.stderr).toContain("--tlsCertFile=/nonexistent/tls.crt: cannot read the file")
  })

  it("a key that does not match the certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "secure-xds-bad-"))
    serverCert(dir, "a")
    serverCert(dir, "b")
    const result = await attempt(["--tlsCertFile", join(dir, "a.crt"), "--tlsKeyFile", join(dir, "b.key")])
    expect(result.code).toBe(1)
    expect(result.stdout + result.stderr).toContain(
      `--tlsKeyFile=${join(dir, "b.key")} does not match the certificate of --tlsCertFile=${join(dir, "a.crt")}`,
    )
  })

  it("--tlsCertFile without --tlsKeyFile, and the orchestrator's signer", async () => {
    const half = await attempt(["--tlsCertFile", "/x/tls.crt"])
    expect(half.code).toBe(1)
    expect(half.stdout + half.stderr).toContain("--tlsCertFile=/x/tls.crt is given without --tlsKeyFile")
    const k8s = await attempt([], { PILOT_CERT_PROVIDER: "kubernetes" })
    expect(k8s.code).toBe(1)
    expect(k8s.stdout + k8s.stderr).toContain(
      "PILOT_CERT_PROVIDER=kubernetes needs the orchestrator's certificate signer",
    )
  })
})
