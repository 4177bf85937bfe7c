/**
 * The CA server under a client retrying a refused CSR in a loop (issue 16 item 10): 520 refused
 * CreateCertificate calls over real gRPC/TLS are all counted in the metrics, while the log gets
 * the first refusal and summaries ("N more similar refusals in the last 10s"), not 520 lines.
 */
import * as grpc from "@grpc/grpc-js"
import { Logger } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { caClientConstructor } from "../../../src/layers/ca/proto.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { startTestCa, type TestCa } from "../../fixtures/agent/control-plane.js"
import { counterValue, makeCsr } from "./helpers.js"

const CALLS = 520
const lines: Array<string> = []
const capture = Logger.make(({ message }) => {
  lines.push(Array.isArray(message) ? message.join(" ") : String(message))
})

let ca: TestCa

beforeAll(async () => {
  ca = await startTestCa({ logger: capture })
})

afterAll(async () => {
  await ca?.close()
})

describe("CreateCertificate refusals", () => {
  it("counts every refusal in the metrics and logs a bounded number of lines", async () => {
    const metrics = await ca.runtime.runPromise(Metrics)
    const { csrPem } = await makeCsr(["spiffe://cluster.local/ns/default/sa/sleep"], "P-256")
    // a client with no token, retrying in a loop on one connection
    const Client = caClientConstructor()
    const client = new Client(`127.0.0.1:${ca.caPort}`, grpc.credentials.createSsl(Buffer.from(ca.rootPem)), {
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

    await ca.runtime.dispose()
    const refusals = lines.filter((l) => l.startsWith("CreateCertificate refused"))
    const firsts = refusals.filter((l) => l.startsWith("CreateCertificate refused ("))
    const summarised = refusals.reduce((n, l) => n + Number(l.match(/refused: (\d+) more similar/)?.[1] ?? 0), 0)
    // the first refusal in full; then a summary per 10 s at most, and one when the server stops
    expect(firsts).toHaveLength(1)
    expect(refusals.length).toBeLessThanOrEqual(4)
    expect(firsts.length + summarised).toBe(CALLS)
  })
})
