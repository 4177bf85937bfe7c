/**
 * `/debug/ui`, the mesh page of the built mesh-discovery, in a real browser (chromium through
 * playwright-core), with real xDS clients (the mesh's own ADS client over gRPC):
 * - the page renders (screenshot under test-artifacts/ui/, weight and time to first render
 *   printed) and lists a connected proxy as SYNCED;
 * - a client that NACKs CDS shows as NACKED with its reason and since when within a second of
 *   the NACK, without reloading (and its reason, hostile markup, stays text);
 * - a refused config file shows with its file and field;
 * - the push chart's figures grow after a config change reaches the connected proxy;
 * - the proxy list pages.
 */
import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import type { AdsClientShape } from "../../src/services/xds-client/client.js"
import {
  browserUnavailable,
  openBrowser,
  type PageFigures,
  printFigures,
  screenshot,
  visit,
} from "../support/browser.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"

/** The page's globals, for the functions run in it (this project's types have no DOM). */
declare const document: {
  getElementById(id: string): { textContent: string | null; getAttribute(name: string): string | null } | null
}
declare const window: { __ranHostile?: number }

const unavailable = browserUnavailable()
const skip = unavailable !== undefined && process.env.CI !== "true"
if (skip) console.warn(`skipping the mesh page browser tests: ${unavailable}`)

const node = (name: string) => `sidecar~127.0.0.1~${name}.demo~demo.svc.cluster.local`
const REASON = `cluster refused by the test proxy <img src=x onerror="window.__ranHostile=1">`

let dir = ""
let daemon: Daemon
let base = ""
let ads = ""
let browser: Browser
let page: Page
const clients = Effect.runSync(Scope.make())
const figures: Array<PageFigures> = []

/** A SotW client of `name` watching CDS, NACKing every CDS response with `reject` when given. */
const connect = (name: string, reject?: string): Promise<AdsClientShape> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const client = yield* makeAdsClient({
        address: ads,
        mode: "sotw",
        node: { id: node(name), metadata: plainToStruct({ MESH_VERSION: "1.99.0-test", CLUSTER_ID: "Kubernetes" }) },
        ...(reject !== undefined ? { validate: (typeUrl) => (typeUrl === TypeUrl.Cluster ? reject : undefined) } : {}),
      })
      yield* client.subscribe(TypeUrl.Cluster)
      return client
    }).pipe(Scope.extend(clients)),
  )

const pushesShown = async (): Promise<number> => Number(await page.locator("#chart-pushes").getAttribute("data-total"))

describe.skipIf(skip)("the mesh page in a browser", () => {
  beforeAll(async () => {
    browser = await openBrowser()
    dir = exampleMeshDir("mesh-ui-")
    daemon = startDaemon(
      "mesh-discovery",
      discoveryArgs(join(dir, "mesh")),
      { PILOT_DEBOUNCE_AFTER: "10ms", PILOT_DEBOUNCE_MAX: "1s" },
      dir,
    )
    ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!
    base = `http://${(await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/, 30_000))[1]!}`
    await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
    page = await browser.newPage()
  }, 90_000)

  afterAll(async () => {
    printFigures("mesh page", figures)
    await Effect.runPromise(Scope.close(clients, Exit.void))
    await browser?.close()
    if (daemon !== undefined) await daemon.stop("SIGKILL")
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  it("renders and lists a connected proxy as SYNCED", async () => {
    const client = await connect("steady")
    await Effect.runPromise(client.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.acks ?? 0) > 0, "20 seconds"))
    const f = await visit(page, `${base}/debug/ui`, "mesh-ui")
    figures.push(f)
    expect(f.status).toBe(200)
    expect(f.firstRenderMs).toBeGreaterThan(0)
    const row = page.locator(`#proxies tr[data-proxy="${node("steady")}"]`)
    await row.waitFor({ timeout: 10_000 })
    expect(await row.getAttribute("data-state")).toBe("SYNCED")
    expect(await row.textContent()).toContain("1.99.0-test")
    expect(await row.locator(`div[data-type="cds"]`).textContent()).toMatch(/^cds: SYNCED since /)
    expect(await page.locator("#orchestrator").textContent()).toContain("none (file mode)")
    expect(await page.locator("#certificates").textContent()).toContain("root expires")
  })

  it("shows a NACKing proxy as NACKED with its reason and since when within a second, without reloading", async () => {
    await visit(page, `${base}/debug/ui`)
    const connecting = Date.now()
    const client = await connect("nacker", REASON)
    await Effect.runPromise(client.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.nacks ?? 0) > 0, "20 seconds"))
    const nacked = Date.now()
    const cell = page.locator(`#proxies tr[data-proxy="${node("nacker")}"][data-state="NACKED"] div[data-type="cds"]`)
    await cell.waitFor({ timeout: 10_000 })
    const shownAfter = Date.now() - nacked
    console.log(`NACK shown on the page ${shownAfter} ms after the client sent it (loaded machine)`)
    expect(shownAfter).toBeLessThan(1000)
    expect(await cell.textContent()).toMatch(/^cds: NACKED since .* — cluster refused by the test proxy <img /)
    expect(await page.evaluate(() => window.__ranHostile)).toBeUndefined()
    expect(await page.locator("#proxies img").count()).toBe(0)
    // NACKED proxies are listed first, and the summary counts them.
    expect(await page.locator("#proxies tbody tr").first().getAttribute("data-proxy")).toBe(node("nacker"))
    expect(await page.locator("#summary").textContent()).toMatch(/1 NACKED/)
    // "since" is when the NACK reached the server (after the client connected), not when the page looked.
    const state = (await (await fetch(`${base}/debug/ui/state?state=NACKED`)).json()) as {
      proxies: { rows: Array<{ types: Array<{ type: string; since: string; reason: string }> }> }
    }
    const cds = state.proxies.rows[0]?.types.find((t) => t.type === "cds")
    expect(cds?.reason).toBe(REASON)
    expect(Date.parse(cds?.since ?? "")).toBeGreaterThanOrEqual(connecting)
    expect(Date.parse(cds?.since ?? "")).toBeLessThanOrEqual(nacked + shownAfter)
    await screenshot(page, "mesh-ui-nacked")
  })

  it("shows a refused config file with its file and field", async () => {
    await visit(page, `${base}/debug/ui`)
    const file = join(dir, "mesh", "zz-broken.yaml")
    writeFileSync(
      file,
      [
        "apiVersion: networking.mesh.io/v1",
        "kind: VirtualService",
        "metadata: { name: broken, namespace: demo }",
        "spec:",
        "  hosts: [reviews.demo.svc.cluster.local]",
        "  http:",
        "    - route:",
        "        - destination: { host: reviews.demo.svc.cluster.local }",
        '          weight: "heavy"',
        "",
      ].join("\n"),
    )
    const row = page.locator("#refused tbody tr", { hasText: "zz-broken.yaml" })
    await row.waitFor({ timeout: 15_000 })
    expect(await row.textContent()).toContain("spec.http[0].route[0].weight")
    expect(await row.textContent()).toContain("VirtualService")
    await screenshot(page, "mesh-ui-refused")
  })

  it("updates the push chart after a config change reaches the proxy", async () => {
    await visit(page, `${base}/debug/ui`)
    await page.locator("#chart-pushes").waitFor()
    const before = await pushesShown()
    expect(before).toBeGreaterThan(0)
    writeFileSync(
      join(dir, "mesh", "zz-extra.yaml"),
      [
        "apiVersion: networking.mesh.io/v1",
        "kind: ServiceEntry",
        "metadata: { name: extra, namespace: demo }",
        "spec:",
        "  hosts: [extra.demo.svc.cluster.local]",
        "  location: MESH_INTERNAL",
        "  resolution: STATIC",
        "  ports: [{ number: 9090, name: http, protocol: HTTP }]",
        "  endpoints: [{ address: 127.0.0.2 }]",
        "",
      ].join("\n"),
    )
    await page.waitForFunction(
      (was) => Number(document.getElementById("chart-pushes")?.getAttribute("data-total")) > was,
      before,
      { timeout: 15_000 },
    )
    expect(await pushesShown()).toBeGreaterThan(before)
    // The history line has more than one sample by now.
    expect(await page.locator("#chart-history polyline").count()).toBe(1)
    await screenshot(page, "mesh-ui-pushes")
  })

  it("pages the proxy list", async () => {
    await visit(page, `${base}/debug/ui?pageSize=1`)
    expect(await page.locator("#pageinfo").textContent()).toMatch(/^page 1 of [2-9]/)
    expect(await page.locator("#proxies tbody tr").count()).toBe(1)
    const first = await page.locator("#proxies tbody tr").getAttribute("data-proxy")
    await page.locator("#next").click()
    await page.locator("#pageinfo", { hasText: /^page 2 of / }).waitFor({ timeout: 10_000 })
    expect(await page.locator("#proxies tbody tr").getAttribute("data-proxy")).not.toBe(first)
    await screenshot(page, "mesh-ui-paged")
  })
})
