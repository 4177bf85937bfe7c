/**
 * End-to-end: the CA's gRPC server on 127.0.0.1:0 with TLS, a real grpc-js client, tokens from a
 * local OIDC issuer, and the real openssl verifying what was issued.
 */
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Layer, ManagedRuntime } from "effect"
import type { Registry } from "prom-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildAuthenticators } from "../../../src/layers/ca/authenticators.js"
import { layerWith as certificateAuthorityLayer } from "../../../src/layers/ca/authority.js"
import { CaGrpcServer, layerServer as caGrpcServerLayer } from "../../../src/layers/ca/grpc-server.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { trustBundlePem } from "../../../src/services/ca/material.js"
import { x509 } from "../../../src/services/ca/x509.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import {
  counterValue,
  createCertificateCall,
  execFileAsync,
  makeCsr,
  opensslRsaCsr,
  opensslText,
  opensslVerify,
  servingCertificate,
  startIssuer,
  type TestIssuer,
  tempDir,
} from "./helpers.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"
const SUB = "system:serviceaccount:default:sleep"

let issuer: TestIssuer
let runtime: ManagedRuntime.ManagedRuntime<CaGrpcServer | CertificateAuthority | Metrics, unknown>
let port: number
let rootPem: string
let registry: Registry
let dir: string

beforeAll(async () => {
  issuer = await startIssuer()
  dir = await tempDir("e2e")
  const authenticators = buildAuthenticators({
    trustDomain: "cluster.local",
    tokenIssuer: issuer.issuer,
    jwtRule: "",
    tokenAudiences: "mesh-ca",
    audience: "",
  })
  if (authenticators._tag === "Left") throw new Error(authenticators.left)
  const ca = certificateAuthorityLayer({
    trustDomain: "cluster.local",
    rootCaDir: join(dir, "no-plugged-ca"),
    stateDir: join(dir, "state"),
    rsaKeySize: 2048,
    selfSignedTtl: Duration.hours(87600),
    rotation: { checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: true },
    policy: { defaultTtl: Duration.hours(24), maxTtl: Duration.hours(2160) },
  })
  const server = caGrpcServerLayer({
    address: { host: "127.0.0.1", port: 0 },
    dnsNames: ["meshd.mesh-system.svc", "ca.example.test"],
    authenticators: authenticators.right,
    nodeAuthorizer: undefined,
  })
  const layer = server.pipe(Layer.provideMerge(ca), Layer.provideMerge(metricsLayer("test")))
  runtime = ManagedRuntime.make(layer)
  const [srv, authority, metrics] = await runtime.runPromise(Effect.all([CaGrpcServer, CertificateAuthority, Metrics]))
  port = srv.port
  rootPem = trustBundlePem(await runtime.runPromise(authority.material))
  registry = metrics.registry
})

afterAll(async () => {
  await runtime?.dispose()
  await issuer?.close()
})

const parse = (pem: string) => new x509.X509Certificate(pem)

describe("CreateCertificate over TLS", () => {
  it("serves with a certificate issued by the CA for the discovery DNS names and MESHD_CUSTOM_HOST", async () => {
    const cert = await servingCertificate(port)
    expect(cert.subjectaltname).toBe("DNS:meshd.mesh-system.svc, DNS:ca.example.test")
    const pem = `-----BEGIN CERTIFICATE-----\n${cert.raw.toString("base64")}\n-----END CERTIFICATE-----\n`
    expect(await opensslVerify(dir, [pem, rootPem], rootPem)).toContain("OK")
  })

  it("issues for an ECDSA P-256 CSR with a valid token; openssl verifies the chain and the SPIFFE SAN", async () => {
    const before = await counterValue(registry, "meshca_server_success_cert_issuance_count")
    const { csrPem } = await makeCsr([ID], "P-256")
    const token = await issuer.token({ sub: SUB })
    const result = await createCertificateCall(port, rootPem, { csr: csrPem, validity_duration: 3600 }, { token })
    expect(result.error).toBeUndefined()
    const chain = result.chain!
    expect(chain).toHaveLength(2)
    expect(chain[chain.length - 1]!.trim()).toBe(rootPem.trim())
    expect(await opensslVerify(dir, chain, rootPem)).toContain("leaf.pem: OK")
    const text = await opensslText(dir, chain[0]!)
    expect(text).toContain(`URI:${ID}`)
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/)
    expect(text).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/)
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/)
    expect(text).toMatch(/X509v3 Subject Alternative Name: critical/)
    const leaf = parse(chain[0]!)
    expect((leaf.notAfter.getTime() - leaf.notBefore.getTime()) / 1000).toBe(3600)
    expect(await counterValue(registry, "meshca_server_success_cert_issuance_count")).toBe(before + 1)
  })

  it("issues for an RSA-2048 CSR made by openssl, with the default TTL for validity_duration 0", async () => {
    const { csrPem } = await opensslRsaCsr(dir, ID)
    const token = await issuer.token({ sub: SUB })
    const result = await createCertificateCall(port, rootPem, { csr: csrPem, validity_duration: 0 }, { token })
    expect(result.error).toBeUndefined()
    expect(await opensslVerify(dir, result.chain!, rootPem)).toContain("leaf.pem: OK")
    const text = await opensslText(dir, result.chain![0]!)
    expect(text).toContain("Public-Key: (2048 bit)")
    expect(text).toContain(`URI:${ID}`)
    const leaf = parse(result.chain![0]!)
    expect((leaf.notAfter.getTime() - leaf.notBefore.getTime()) / 1000).toBe(24 * 3600)
  })

  it("takes the identity from orchestrator token claims when sub is not a service account", async () => {
    const { csrPem } = await makeCsr(["spiffe://cluster.local/ns/shop/sa/cart"], "P-384")
    const token = await issuer.token({
      sub: "some-user",
      extra: { "kubernetes.io": { namespace: "shop", serviceaccount: { name: "cart" } } },
    })
    const result = await createCertificateCall(port, rootPem, { csr: csrPem }, { token })
    expect(result.error).toBeUndefined()
    expect(await opensslVerify(dir, result.chain!, rootPem)).toContain("OK")
  })

  it("renews with the client certificate (SPIFFE identity) and no token", async () => {
    const first = await makeCsr([ID], "P-256")
    const issued = await createCertificateCall(
      port,
      rootPem,
      { csr: first.csrPem },
      { token: await issuer.token({ sub: SUB }) },
    )
    expect(issued.error).toBeUndefined()
    const renewal = await makeCsr([ID], "P-256")
    const result = await createCertificateCall(
      port,
      rootPem,
      { csr: renewal.csrPem },
      { clientCert: { certPem: issued.chain!.join(""), keyPem: first.keyPem } },
    )
    expect(result.error).toBeUndefined()
    expect(await opensslVerify(dir, result.chain!, rootPem)).toContain("OK")
  })

  const refusal = async (
    call: Promise<{ error?: grpc.ServiceError }>,
    code: grpc.status,
    message: RegExp,
    metric: string,
    labels: Record<string, string> = {},
  ) => {
    const before = await counterValue(registry, metric, labels)
    const result = await call
    expect(result.error?.code).toBe(code)
    expect(result.error?.details).toMatch(message)
    expect(await counterValue(registry, metric, labels)).toBe(before + 1)
  }

  it("refuses a request without a token", async () => {
    const { csrPem } = await makeCsr([ID])
    await refusal(
      createCertificateCall(port, rootPem, { csr: csrPem }),
      grpc.status.UNAUTHENTICATED,
      /no verified client certificate.*no bearer token/,
      "meshca_server_authentication_failure_count",
    )
  })

  it("refuses a token with the wrong audience", async () => {
    const { csrPem } = await makeCsr([ID])
    const token = await issuer.token({ sub: SUB, aud: "someone-else" })
    await refusal(
      createCertificateCall(port, rootPem, { csr: csrPem }, { token }),
      grpc.status.UNAUTHENTICATED,
      /token audience \[someone-else\] is not one of the accepted audiences \[mesh-ca\]/,
      "meshca_server_authentication_failure_count",
    )
  })

  it("refuses an expired token", async () => {
    const { csrPem } = await makeCsr([ID])
    const token = await issuer.token({ sub: SUB, expiresIn: Math.floor(Date.now() / 1000) - 60 })
    await refusal(
      createCertificateCall(port, rootPem, { csr: csrPem }, { token }),
      grpc.status.UNAUTHENTICATED,
      /the token expired at/,
      "meshca_server_authentication_failure_count",
    )
  })

  it("refuses a token signed by an unknown key and a token of another issuer", async () => {
    const { csrPem } = await makeCsr([ID])
    await refusal(
      createCertificateCall(
        port,
        rootPem,
        { csr: csrPem },
        { token: await issuer.token({ sub: SUB, otherKey: true }) },
      ),
      grpc.status.UNAUTHENTICATED,
      /the token signature is invalid/,
      "meshca_server_authentication_failure_count",
    )
    await refusal(
      createCertificateCall(
        port,
        rootPem,
        { csr: csrPem },
        { token: await issuer.token({ sub: SUB, issuer: "https://elsewhere.example" }) },
      ),
      grpc.status.UNAUTHENTICATED,
      /token issuer "https:\/\/elsewhere.example" is not/,
      "meshca_server_authentication_failure_count",
    )
  })

  it("refuses a CSR for another identity", async () => {
    const { csrPem } = await makeCsr(["spiffe://cluster.local/ns/kube-system/sa/admin"])
    const token = await issuer.token({ sub: SUB })
    await refusal(
      createCertificateCall(port, rootPem, { csr: csrPem }, { token }),
      grpc.status.PERMISSION_DENIED,
      /CSR identity error: the CSR asks for identity \[spiffe:\/\/cluster.local\/ns\/kube-system\/sa\/admin\] but the caller is \[spiffe:\/\/cluster.local\/ns\/default\/sa\/sleep\]/,
      "meshca_server_id_extraction_err_count",
    )
  })

  it("refuses impersonation when CA_TRUSTED_NODE_ACCOUNTS is not set", async () => {
    const { csrPem } = await makeCsr(["spiffe://cluster.local/ns/shop/sa/cart"])
    const token = await issuer.token({ sub: "system:serviceaccount:mesh-system:node-proxy" })
    await refusal(
      createCertificateCall(
        port,
        rootPem,
        { csr: csrPem, metadata: { ImpersonatedIdentity: "spiffe://cluster.local/ns/shop/sa/cart" } },
        { token },
      ),
      grpc.status.UNAUTHENTICATED,
      /^request impersonation authentication failure$/,
      "meshca_server_authentication_failure_count",
    )
  })

  it("refuses a malformed CSR", async () => {
    const token = await issuer.token({ sub: SUB })
    await refusal(
      createCertificateCall(
        port,
        rootPem,
        { csr: "-----BEGIN CERTIFICATE REQUEST-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE REQUEST-----\n" },
        { token },
      ),
      grpc.status.INVALID_ARGUMENT,
      /CSR parsing error: failed to parse the CSR/,
      "meshca_server_csr_parsing_err_count",
    )
    await refusal(
      createCertificateCall(port, rootPem, { csr: "not a csr" }, { token }),
      grpc.status.INVALID_ARGUMENT,
      /CSR parsing error: failed to decode the CSR/,
      "meshca_server_csr_parsing_err_count",
    )
  })

  it("refuses a CSR whose signature does not verify", async () => {
    const { csrPem } = await makeCsr([ID])
    const der = Buffer.from(csrPem.replace(/-----[A-Z ]+-----|\s/g, ""), "base64")
    // Flip a bit inside the SAN value: the structure stays valid, the signature does not.
    const at = der.indexOf(Buffer.from("sleep"))
    der[at] = der[at]! ^ 0x01
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`
    await refusal(
      createCertificateCall(port, rootPem, { csr: tampered }, { token: await issuer.token({ sub: SUB }) }),
      grpc.status.INVALID_ARGUMENT,
      /^CSR parsing error: the CSR signature is invalid$/,
      "meshca_server_csr_parsing_err_count",
    )
  })

  it("refuses a TTL above MAX_WORKLOAD_CERT_TTL", async () => {
    const { csrPem } = await makeCsr([ID])
    const token = await issuer.token({ sub: SUB })
    await refusal(
      createCertificateCall(port, rootPem, { csr: csrPem, validity_duration: 2161 * 3600 }, { token }),
      grpc.status.INVALID_ARGUMENT,
      /^CSR signing error \(requested TTL 2161h0m0s is greater than the max allowed TTL 2160h0m0s\)$/,
      "meshca_server_csr_sign_err_count",
      { error_type: "TTL_ERROR" },
    )
  })

  it("exposes the meshca_server_* metrics in a text format promtool accepts", async () => {
    const text = await registry.metrics()
    for (const name of [
      "meshca_server_csr_count",
      "meshca_server_success_cert_issuance_count",
      "meshca_server_authentication_failure_count",
      "meshca_server_csr_parsing_err_count",
      "meshca_server_id_extraction_err_count",
      "meshca_server_csr_sign_err_count",
      "meshca_server_root_cert_expiry_seconds",
      "meshca_server_root_cert_expiry_timestamp",
      "meshca_server_cert_chain_expiry_seconds",
      "meshca_server_cert_chain_expiry_timestamp",
    ]) {
      expect(text).toContain(`# TYPE ${name} `)
    }
    expect(text).toMatch(/meshca_server_csr_sign_err_count\{error_type="TTL_ERROR"\} 1/)
    const file = join(dir, "metrics.txt")
    await writeFile(file, text)
    const check = await execFileAsync("sh", ["-c", `promtool check metrics < ${file}; echo "exit=$?"`])
    // promtool only lints names here (e.g. counters without _total); it must parse the text.
    expect(check.stdout + check.stderr).not.toMatch(/error while linting|text format parsing error/)
  })
})
