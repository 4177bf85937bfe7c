/**
 * A real browser for the page tests: Debian's `chromium` (`.ci/run` installs it) driven by
 * playwright-core, which ships no browser of its own. One browser per test file (`openBrowser`
 * in `beforeAll`); each page visit can write a screenshot under the git-ignored
 * `test-artifacts/ui/` and report its weight (bytes the document and everything it fetched
 * while loading) and its time to first render (the browser's first-contentful-paint).
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { ROOT } from "./processes.js"

export const CHROMIUM = process.env.MESH_TEST_CHROMIUM ?? "/usr/bin/chromium"
export const ARTIFACTS = join(ROOT, "test-artifacts", "ui")

/** Why no browser can run here, or undefined. Under CI=true the caller fails with it instead of skipping. */
export const browserUnavailable = (): string | undefined =>
  existsSync(CHROMIUM)
    ? undefined
    : `no chromium at ${CHROMIUM} (apt-get install chromium; MESH_TEST_CHROMIUM names another)`

export const openBrowser = (): Promise<Browser> => {
  const reason = browserUnavailable()
  if (reason !== undefined) throw new Error(reason)
  // The tests run as root in CI, where chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"], timeout: 60_000 })
}

export interface PageFigures {
  readonly path: string
  readonly status: number
  /** Bytes of the document and every response it loaded until `load` (headers excluded). */
  readonly bytes: number
  /** Milliseconds from navigation start to the first contentful paint. */
  readonly firstRenderMs: number
}

/**
 * Opens `url` in `page` and waits for its first render; counts the bytes of what it loaded.
 * A screenshot goes to `ARTIFACTS/<shot>.png` when `shot` is given.
 */
export const visit = async (page: Page, url: string, shot?: string): Promise<PageFigures> => {
  let bytes = 0
  const counted: Array<Promise<void>> = []
  const onResponse = (response: { body: () => Promise<Buffer> }) => {
    counted.push(
      response.body().then(
        (body) => {
          bytes += body.length
        },
        () => undefined,
      ),
    )
  }
  page.on("response", onResponse)
  const response = await page.goto(url, { waitUntil: "load" })
  await Promise.all(counted)
  page.off("response", onResponse)
  // Run in the page (a string: this project's types have no DOM): the paint entry, once there.
  const firstRenderMs = Number(
    await page.evaluate(`new Promise((resolve) => {
      const now = performance.getEntriesByName("first-contentful-paint")[0]
      if (now !== undefined) return resolve(now.startTime)
      new PerformanceObserver((list) => resolve(list.getEntries()[0]?.startTime ?? -1))
        .observe({ type: "paint", buffered: true })
    })`),
  )
  if (shot !== undefined) await screenshot(page, shot)
  return { path: new URL(url).pathname, status: response?.status() ?? 0, bytes, firstRenderMs }
}

/** Writes the page as it is now to `ARTIFACTS/<name>.png`. */
export const screenshot = async (page: Page, name: string): Promise<void> => {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
}

/** Prints the figures of the pages a test visited, one line each (the page weights). */
export const printFigures = (title: string, figures: ReadonlyArray<PageFigures>): void => {
  const lines = figures.map(
    (f) => `  ${f.path.padEnd(18)} ${String(f.bytes).padStart(7)} bytes  first render ${f.firstRenderMs.toFixed(0)} ms`,
  )
  console.log(`${title} (measured on a loaded 2-core machine):\n${lines.join("\n")}`)
}
