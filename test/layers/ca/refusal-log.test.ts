/**
 * The CA server under a client retrying a refused CSR in a loop (issue 16 item 10): 520 refused
 * CreateCertificate calls over real gRPC/TLS are all counted in the metrics, while the log gets
 * the first refusal and summaries ("N more similar refusals in the last 10s"), not 520 lines.
 */
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Layer, Logger, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildAuthenticators } from "../../../src/layers/ca/authenticators.js"
import { certificateAuthorityLayer } from "../../../src/layers/ca/authority.js"
import { CaGrpcServer, caGrpcServerLayer } from "../../../src/layers/ca/grpc-server.js"
import { caClientConstructor } from "../../../src/layers/ca/proto.js"
import { metricsLayer } from "../../../src/layers/metrics.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { trustBundlePem } from "../../../src/services/ca/material.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { counterValue, makeCsr, startIssuer, type TestIssuer, tempDir } from "./helpers.js"

const CALLS = 520
const lines: Array<string> = []
const capture = Logger.make(({ message }) => {
  lines.push(Array.isArray(message) ? message.join(" ") : String(message))
})

let issuer: TestIssuer
let runtime: ManagedRuntime.ManagedRuntime<CaGrpcServer | CertificateAuthority | Metrics, unknown>

beforeAll(async () => {
  issuer = await startIssuer()
  const dir = await tempDir("refusal-log")
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
    dnsNames: ["meshd.mesh-system.svc"],
    authenticators: authenticators.right,
    nodeAuthorizer: undefined,
  })
  runtime = ManagedRuntime.make(
    server.pipe(
      Layer.provideMerge(ca),
      Layer.provideMerge(metricsLayer("test")),
      Layer.provide(Logger.replace(Logger.defaultLogger, capture)),
    ),
  )
  await runtime.runPromise(CaGrpcServer)
})

afterAll(async () => {
  await runtime?.dispose()
  await issuer?.close()
})

describe("CreateCertificate refusals", () => {
  it("counts every refusal in the metrics and logs a bounded number of lines", async () => {
    const [server, authority, metrics] = await runtime.runPromise(
      Effect.all([CaGrpcServer, CertificateAuthority, Metrics]),
    )
    const rootPem = trustBundlePem(await runtime.runPromise(authority.material))
    const { csrPem } = await makeCsr(["spiffe://cluster.local/ns/default/sa/sleep"], "P-256")
    // a client with no token, retrying in a loop on one connection
    const Client = caClientConstructor()
    const client = new Client(`127.0.0.1:${server.port}`, grpc.credentials.createSsl(Buffer.from(rootPem)), {
      "grpc.ssl_target_name_override": "meshd.mesh-system.svc",
      "grpc.default_authority": "meshd.mesh-system.svc",
    })
    const call = () =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        ;(client as unknown as Record<string, Function>).CreateCertificate!(
          { csr: csrPem, validity_duration: 0 },
          new grpc.Metadata(),
          (error: grpc.ServiceError | null) => resolve(error),
        )
      })
    try {
      for (let done = 0; done < CALLS; done += 20) {
        const errors = await Promise.all(Array.from({ length: Math.min(20, CALLS - done) }, call))
        for (const error of errors) expect(error?.code).toBe(grpc.status.UNAUTHENTICATED)
      }
    } finally {
      client.close()
    }
    expect(await counterValue(metrics.registry, "meshca_server_csr_count")).toBe(CALLS)
    expect(await counterValue(metrics.registry, "meshca_server_authentication_failure_count")).toBe(CALLS)

    await runtime.dispose()
    const refusals = lines.filter((l) => l.startsWith("CreateCertificate refused"))
    const firsts = refusals.filter((l) => l.startsWith("CreateCertificate refused ("))
    const summarised = refusals.reduce((n, l) => n + Number(l.match(/refused: (\d+) more similar/)?.[1] ?? 0), 0)
    // the first refusal in full; then a summary per 10 s at most, and one when the server stops
    expect(firsts).toHaveLength(1)
    expect(refusals.length).toBeLessThanOrEqual(4)
    expect(firsts.length + summarised).toBe(CALLS)
  })
})
