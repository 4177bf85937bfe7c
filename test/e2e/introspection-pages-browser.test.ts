/**
 * The introspection pages of the built mesh-discovery in a real browser (chromium through
 * playwright-core): every topic page renders (a screenshot of each under test-artifacts/ui/,
 * its weight and time to first render printed); a scope level changed from the scopes page is
 * what `/scopej/` then says and what the log says; the memory page refreshes by itself; the
 * metrics search narrows the rows; a hostile environment value is shown as text, not run.
 */
import { rmSync } from "node:fs"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browserUnavailable, openBrowser, type PageFigures, printFigures, visit } from "../support/browser.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"

/** The page's globals, for the functions run in it (this project's types have no DOM). */
declare const document: {
  getElementById(id: string): { textContent: string | null; getAttribute(name: string): string | null } | null
}
declare const window: { __ranHostile?: number }

const unavailable = browserUnavailable()
const skip = unavailable !== undefined && process.env.CI !== "true"
if (skip) console.warn(`skipping the introspection page browser tests: ${unavailable}`)

/** An environment value that would run script if a page put it in as markup. */
const HOSTILE = `<img src=x onerror="window.__ranHostile=1"><script>window.__ranHostile=2</script>`

let dir = ""
let daemon: Daemon
let base = ""
let browser: Browser
let page: Page

describe.skipIf(skip)("introspection pages in a browser", () => {
  beforeAll(async () => {
    browser = await openBrowser()
    dir = exampleMeshDir("ctrlz-pages-")
    daemon = startDaemon(
      "mesh-discovery",
      discoveryArgs(`${dir}/mesh`),
      { UI_TEST_HOSTILE: HOSTILE, UI_TEST_API_TOKEN: "do-not-show-me" },
      dir,
    )
    const address = (await daemon.waitFor(/introspection listening on ([\d.]+:\d+)/, 30_000))[1]!
    base = `http://${address}`
    page = await browser.newPage()
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    if (daemon !== undefined) await daemon.stop("SIGKILL")
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  it("renders every topic page, with a screenshot, its weight and its time to first render", async () => {
    const figures: Array<PageFigures> = []
    const pages: ReadonlyArray<readonly [string, string]> = [
      ["/", "introspection"],
      ["/scopez/", "logging scopes"],
      ["/memz/", "memory"],
      ["/envz/", "environment"],
      ["/procz/", "process"],
      ["/argsz/", "arguments"],
      ["/versionz/", "version"],
      ["/metricz/", "metrics"],
      ["/signalz/", "signals"],
    ]
    for (const [path, title] of pages) {
      const shot = `ctrlz${path === "/" ? "-home" : `-${path.replaceAll("/", "")}`}`
      const f = await visit(page, `${base}${path}`, shot)
      figures.push(f)
      expect(f.status, path).toBe(200)
      expect(await page.locator("header h1").textContent(), path).toContain(title)
      expect(f.firstRenderMs, path).toBeGreaterThan(0)
    }
    printFigures("introspection pages", figures)
    // No page loads anything but itself (no external asset).
    for (const f of figures) expect(f.bytes, f.path).toBeLessThan(64 * 1024)
  })

  it("changes a scope's level from the page: /scopej/ and the log say so", async () => {
    await visit(page, `${base}/scopez/`)
    const select = page.locator(`select[data-scope="ads"][data-field="output_level"]`)
    expect(await select.inputValue()).toBe("info")
    await select.selectOption("debug")
    await page.locator("#status", { hasText: "ads: output_level set to debug" }).waitFor({ timeout: 10_000 })
    const scope = (await (await fetch(`${base}/scopej/ads`)).json()) as { output_level: string }
    expect(scope.output_level).toBe("debug")
    await daemon.waitFor(/log scope ads changed: output debug/, 10_000)
    // The page read afresh shows the new level.
    await visit(page, `${base}/scopez/`)
    expect(await select.inputValue()).toBe("debug")
  })

  it("refreshes the memory figures by itself", async () => {
    await visit(page, `${base}/memz/`)
    const sampled = page.locator("#m-sampledAt")
    const first = await sampled.textContent()
    await page.waitForFunction((before) => document.getElementById("m-sampledAt")?.textContent !== before, first, {
      timeout: 10_000,
    })
    expect(await page.locator("#m-rss").textContent()).toMatch(/^\d+\.\d MiB$/)
    expect(await page.locator("#refresh").textContent()).toMatch(/^refreshed /)
  })

  it("narrows the metrics as the search is typed", async () => {
    await visit(page, `${base}/metricz/`)
    const rows = page.locator("#metrics tbody tr")
    const all = await rows.count()
    await page.locator("#search").fill("pilot_info")
    const visible = page.locator("#metrics tbody tr:not([hidden])")
    expect(await visible.count()).toBeGreaterThan(0)
    expect(await visible.count()).toBeLessThan(all)
    for (const text of await visible.allTextContents()) expect(text).toContain("pilot_info")
    expect(await page.locator("#count").textContent()).toMatch(/ of \d+ series shown/)
  })

  it("shows a hostile environment value as text without running it, and redacts secrets", async () => {
    await visit(page, `${base}/envz/`)
    const row = page.locator("#environment tr", { hasText: "UI_TEST_HOSTILE" })
    expect(await row.locator("code").textContent()).toBe(HOSTILE)
    expect(await page.evaluate(() => window.__ranHostile)).toBeUndefined()
    expect(await page.locator("#environment img").count()).toBe(0)
    const secret = page.locator("#environment tr", { hasText: "UI_TEST_API_TOKEN" })
    expect(await secret.locator("code").textContent()).toBe("<redacted>")
    expect(await page.content()).not.toContain("do-not-show-me")
  })
})
