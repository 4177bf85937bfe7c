/**
 * Issue 36 end to end: the built `mesh-discovery` on the in-process orchestrator (Gateway-API
 * CRDs installed), no `--configDir`.
 * - Group 3 in the served config: an HTTPS listener whose certificate Secret does not exist, or
 *   holds no usable key pair, is not a server of the generated Gateway; once a sound Secret is
 *   written it is served (the push path reads Secrets after its informers synced).
 * - `/debug/gateway-api` shows the generated Gateway and VirtualService with the Gateway-API
 *   objects they came from, to loopback callers only (like every debug page).
 */
import { networkInterfaces } from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { selfSigned } from "../services/gateway-api/tls-fixtures.js"
import { discoveryArgs } from "../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { gatewayApiCustomResources, meshCustomResources } from "../support/orchestrator/mesh-crds.js"
import { type Daemon, startDaemon } from "../support/processes.js"

const NS = "edge"
let server: Orchestrator
let discovery: Daemon
let httpAddr = ""

interface Generated {
  readonly kind: string
  readonly metadata: { readonly namespace: string; readonly name: string }
  readonly sources: ReadonlyArray<string>
  readonly spec: {
    readonly servers?: ReadonlyArray<{ readonly port: { readonly name: string } }>
    readonly hosts?: ReadonlyArray<string>
  }
}
interface GatewayApiPage {
  readonly gateways: ReadonlyArray<Generated>
  readonly virtualServices: ReadonlyArray<Generated>
}

const page = async (): Promise<GatewayApiPage> => {
  const response = await fetch(`http://${httpAddr}/debug/gateway-api`)
  expect(response.status).toBe(200)
  return (await response.json()) as GatewayApiPage
}

/** Polls the page until `check` holds; the last page on failure. */
const pageUntil = async (what: string, check: (p: GatewayApiPage) => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms
  let last: GatewayApiPage | undefined
  while (Date.now() < deadline) {
    last = await page()
    if (check(last)) return last
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}\n${discovery.output().slice(-3000)}`)
}

const servers = (p: GatewayApiPage) => p.gateways.flatMap((g) => (g.spec.servers ?? []).map((s) => s.port.name))

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")
const secret = (name: string, data: Record<string, string>) =>
  server.put({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: NS },
    type: "kubernetes.io/tls",
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  })

beforeAll(async () => {
  server = await startOrchestrator({ customResources: [...meshCustomResources(), ...gatewayApiCustomResources()] })
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } })
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } })
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "shop", namespace: NS },
    spec: { clusterIP: "10.96.0.20", selector: { app: "shop" }, ports: [{ name: "http", port: 8080 }] },
  })
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "front", namespace: NS },
    spec: {
      gatewayClassName: "mesh",
      listeners: [
        { name: "http", port: 80, protocol: "HTTP", hostname: "shop.example.com" },
        {
          name: "https",
          port: 443,
          protocol: "HTTPS",
          hostname: "shop.example.com",
          tls: { mode: "Terminate", certificateRefs: [{ name: "shop-cert" }] },
        },
      ],
    },
  })
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "shop", namespace: NS },
    spec: {
      parentRefs: [{ name: "front" }],
      hostnames: ["shop.example.com"],
      rules: [{ backendRefs: [{ name: "shop", port: 8080 }] }],
    },
  })
  // Every address, so that a non-loopback caller can be refused.
  const args = discoveryArgs("", {
    "--registries": "Orchestrator",
    "--orchconfig": server.kubeconfig(),
    "--httpAddr": "0.0.0.0:0",
  }).filter((a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir")
  discovery = startDaemon("mesh-discovery", args, { POD_NAME: "meshd-gw" })
  httpAddr = `127.0.0.1:${(await discovery.waitFor(/http listening on [\d.]+:(\d+)/, 30_000))[1]!}`
}, 60_000)

afterAll(async () => {
  await discovery?.stop()
  await server?.close()
})

describe("Gateway-API on the orchestrator, through the built mesh-discovery", () => {
  it("does not serve an HTTPS listener whose certificate Secret is missing, then serves it once the Secret is sound", async () => {
    // Both informers synced and the HTTP listener served: the HTTPS one stays out.
    const first = await pageUntil("the generated Gateway", (p) => servers(p).includes("http"))
    expect(servers(first)).toEqual(["http"])
    // A Secret that holds no key pair: still not served.
    secret("shop-cert", { "tls.crt": "not a certificate", "tls.key": "not a key" })
    await new Promise((r) => setTimeout(r, 500))
    expect(servers(await page())).toEqual(["http"])
    const pair = await selfSigned("shop.example.com")
    secret("shop-cert", { "tls.crt": pair.cert, "tls.key": pair.key })
    const served = await pageUntil("the HTTPS listener served", (p) => servers(p).includes("https"))
    expect(servers(served)).toEqual(["http", "https"])
  })

  it("/debug/gateway-api lists the generated Gateway and VirtualService with their sources", async () => {
    const p = await pageUntil("the generated VirtualService", (q) => q.virtualServices.length > 0)
    expect(p.gateways.map((g) => [g.kind, g.metadata.namespace, g.metadata.name, g.sources])).toEqual([
      ["Gateway", NS, "front-mesh-autogenerated-k8s-gateway", [`Gateway/${NS}/front`]],
    ])
    expect(p.virtualServices.map((v) => [v.kind, v.metadata.namespace, v.sources, v.spec.hosts])).toEqual([
      ["VirtualService", NS, [`HTTPRoute/${NS}/shop`], ["shop.example.com"]],
    ])
    expect(JSON.stringify(p.virtualServices[0]!.spec)).toContain("shop.edge.svc.cluster.local")
    // Named in /debug/list.
    const list = (await (await fetch(`http://${httpAddr}/debug/list`)).json()) as Array<{ name: string }>
    expect(list.map((e) => e.name)).toContain("/debug/gateway-api")
  })

  it("/debug/gateway-api answers loopback callers only", async (context) => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)
    if (external === undefined) {
      if (process.env.CI === "true") throw new Error("no non-loopback IPv4 address to call from")
      context.skip()
    }
    const port = httpAddr.split(":")[1]
    expect((await fetch(`http://${external!.address}:${port}/debug/gateway-api`)).status).toBe(403)
  })
})
