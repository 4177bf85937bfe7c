/**
 * Issue 36 group 2, InferencePool backends end to end: the built mesh-discovery in file mode
 * (ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true) reads a Gateway, an InferencePool and an
 * HTTPRoute to the pool; with no orchestrator to write the pool's shadow Service it synthesises
 * it, and serves a stand-in router (gateway-name label) the route to the shadow Service's first
 * port with the endpoint picker's per-route ext_proc override, the shadow Service's cluster, and
 * the listener's ext_proc filter — all accepted (no NACK) by the stand-in's protobuf check.
 */
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoveryArgs } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { startInferenceRouter } from "../support/proxygen/inference-router.js"
import { StandInType } from "../support/proxygen/stand-in-proxy.js"

const SHADOW_HOST = `llama-ip-${createHash("sha256").update("llama").digest("hex").slice(0, 8)}.demo.svc.cluster.local`
const SHADOW_CLUSTER = `outbound|54321||${SHADOW_HOST}`
const PICKER_CLUSTER = "outbound|9002||llama-epp.demo.svc.cluster.local"

const CONFIG = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: demo }
spec:
  gatewayClassName: mesh
  listeners:
  - { name: http, port: 8080, protocol: HTTP }
---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: { name: llama, namespace: demo }
spec:
  selector: { matchLabels: { app: vllm-llama } }
  targetPorts: [{ number: 8000 }]
  endpointPickerRef: { name: llama-epp, port: { number: 9002 } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: chat, namespace: demo }
spec:
  parentRefs: [{ name: edge }]
  rules:
  - matches: [{ path: { type: PathPrefix, value: /v1 } }]
    backendRefs: [{ group: inference.networking.k8s.io, kind: InferencePool, name: llama }]
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: llama-epp, namespace: demo }
spec:
  hosts: [llama-epp.demo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: 9002, name: grpc, protocol: GRPC }]
  endpoints: [{ address: 127.0.0.9 }]
`

let daemon: Daemon
let ads = ""

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "discovery-inference-"))
  writeFileSync(join(dir, "inference.yaml"), CONFIG)
  daemon = startDaemon("mesh-discovery", discoveryArgs(dir), {
    ENABLE_GATEWAY_API_INFERENCE_EXTENSION: "true",
    PILOT_DEBOUNCE_AFTER: "10ms",
    PILOT_DEBOUNCE_MAX: "1s",
  })
  ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 60_000))[1]!
  await daemon.waitFor(/first configuration received: serving xDS/, 60_000)
}, 90_000)

afterAll(async () => {
  await daemon?.stop()
})

type Route = {
  readonly route?: { readonly cluster?: string }
  readonly typed_per_filter_config?: Record<string, unknown>
}

describe("InferencePool backends through the built mesh-discovery (file mode)", () => {
  it("serves the route to the shadow Service with the picker's ext_proc override, and the listener filter", async () => {
    const { proxy, request } = startInferenceRouter(ads)
    try {
      await proxy
        .waitFor((p) => p.version(StandInType.route) !== "" && request("/v1/chat/completions").kind === "route", 30_000)
        .catch((e: unknown) => {
          throw new Error(`${String(e)}\nnacks: ${JSON.stringify(proxy.nacks)}\n${daemon.output().slice(-3000)}`)
        })
      expect(proxy.nacks).toEqual([])
      expect(request("/v1/chat/completions")).toMatchObject({ kind: "route", cluster: SHADOW_CLUSTER })
      expect(request("/other").kind).not.toBe("route")

      const routes = proxy
        .resources(StandInType.route)
        .flatMap((rc) =>
          ((rc.virtual_hosts ?? []) as ReadonlyArray<{ routes: ReadonlyArray<Route> }>).flatMap((v) => v.routes),
        )
      const chat = routes.find((r) => r.route?.cluster === SHADOW_CLUSTER)
      const extProc = chat?.typed_per_filter_config?.["envoy.filters.http.ext_proc"] as
        | { overrides?: { grpc_service?: unknown; processing_mode?: Record<string, unknown> } }
        | undefined
      expect(extProc?.overrides?.grpc_service).toMatchObject({ envoy_grpc: { cluster_name: PICKER_CLUSTER } })
      // FULL_DUPLEX_STREAMED (4) both ways; decoded by the stand-in's older API as the number.
      expect([4, "FULL_DUPLEX_STREAMED"]).toContain(extProc?.overrides?.processing_mode?.request_body_mode)
      expect([4, "FULL_DUPLEX_STREAMED"]).toContain(extProc?.overrides?.processing_mode?.response_body_mode)

      expect(proxy.names(StandInType.cluster)).toContain(SHADOW_CLUSTER)
      expect(proxy.names(StandInType.cluster)).toContain(PICKER_CLUSTER)
      expect(JSON.stringify(proxy.resources(StandInType.listener))).toContain("envoy.filters.http.ext_proc")
    } finally {
      proxy.close()
    }
  }, 60_000)
})
