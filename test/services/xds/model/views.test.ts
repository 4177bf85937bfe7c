/**
 * Views of the decoded specs: what the generators need, normalised once (durations in
 * nanoseconds, matches without a value dropped, percentages only when finite).
 */
import { describe, expect, it } from "@effect/vitest"
import type { PeerAuthenticationSpec } from "../../../../src/services/config-model/schemas/peer-authentication.js"
import type { VirtualServiceSpec } from "../../../../src/services/config-model/schemas/virtual-service.js"
import { peerAuthenticationView, virtualServiceView } from "../../../../src/services/xds/model/views.js"

const meta = { name: "vs", namespace: "default" }

describe("views of decoded specs", () => {
  it("VirtualService: durations, empty matches, faults and retries", () => {
    const spec: VirtualServiceSpec = {
      hosts: ["echo"],
      http: [
        {
          name: "r",
          match: [{ uri: {}, headers: { a: { exact: "1" }, b: {} } }],
          route: [{ destination: { host: "echo", subset: "v1", port: { number: 80 } }, weight: 100 }],
          timeout: "1.5s",
          retries: { attempts: 2, perTryTimeout: "100ms" },
          fault: {
            delay: { fixedDelay: "5s", percentage: { value: Number.NaN }, percent: 10 },
            abort: { http2Error: "x", percentage: { value: 50 } },
          },
        },
      ],
    }
    expect(virtualServiceView(meta, spec)).toEqual({
      name: "vs",
      namespace: "default",
      hosts: ["echo"],
      http: [
        {
          name: "r",
          match: [{ headers: { a: { exact: "1" } }, queryParams: {} }],
          route: [{ destination: { host: "echo", subset: "v1", port: 80 }, weight: 100 }],
          timeoutNanos: 1_500_000_000n,
          retries: { attempts: 2, perTryTimeoutNanos: 100_000_000n },
          // A NaN percentage counts as absent (the older `percent` then applies); an abort with
          // no status gRPC clients can return is left out.
          fault: { delay: { fixedDelayNanos: 5_000_000_000n, percentage: { value: 10 } } },
        },
      ],
    })
  })

  it("PeerAuthentication: an empty selector is namespace-wide; port modes as given", () => {
    const spec: PeerAuthenticationSpec = {
      selector: { matchLabels: {} },
      mtls: { mode: "STRICT" },
      portLevelMtls: { "8080": { mode: "DISABLE" }, "9090": {} },
    }
    expect(peerAuthenticationView(meta, spec)).toEqual({
      name: "vs",
      namespace: "default",
      mode: "STRICT",
      portLevel: { "8080": "DISABLE" },
    })
  })
})
