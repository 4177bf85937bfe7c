/**
 * `meshctl analyze` on a directory of generated resources (default 5,000: per app a Namespace
 * share, Service, Deployment, Pod, VirtualService and DestinationRule, some with findings), run
 * as a process through the built binary. Prints JSON: resources, files, messages found and the
 * wall time of each run (median and max). Target: under 3 s for 5,000 resources.
 *
 *   npm run build && node dist/scripts/bench-analyze.mjs [--resources 5000] [--runs 5]
 */
import { execFile, execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { arg, now, percentile, round1 } from "./bench-support.js"

const ROOT = join(import.meta.dirname, "..", "..")
const resources = Number(arg("resources", "5000"))
const runs = Number(arg("runs", "5"))
const PER_APP = 5
const APPS_PER_FILE = 10
const NAMESPACES = 20

const app = (i: number): string => {
  const ns = `ns-${i % NAMESPACES}`
  const name = `app-${i}`
  // Every 50th app routes to a host and subset that do not exist: the analyzers have work to report.
  const target = i % 50 === 0 ? `missing-${i}` : name
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {app: ${name}}
  ports: [{name: http-web, port: 8080, targetPort: 8080}, {name: grpc, port: 9090}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}, version: v1}}
    spec: {containers: [{name: app, image: example/app:1}]}
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}-0, namespace: ${ns}, labels: {app: ${name}, version: v1}}
spec: {containers: [{name: app, image: example/app:1}, {name: mesh-proxy, image: mesh/proxy:1}]}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: ${name}, namespace: ${ns}}
spec:
  hosts: [${name}]
  http:
  - match: [{uri: {prefix: /v2}}]
    route: [{destination: {host: ${target}, subset: v2, port: {number: 8080}}}]
  - route: [{destination: {host: ${name}, subset: v1, port: {number: 8080}}}]
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: ${name}, namespace: ${ns}}
spec:
  host: ${name}
  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]
`
}

const dir = mkdtempSync(join(tmpdir(), "bench-analyze-"))
const apps = Math.ceil(resources / PER_APP)
let files = 0
for (let first = 0; first < apps; first += APPS_PER_FILE) {
  const docs: Array<string> = []
  for (let i = first; i < Math.min(apps, first + APPS_PER_FILE); i++) docs.push(app(i))
  writeFileSync(join(dir, `apps-${String(files).padStart(4, "0")}.yaml`), docs.join("---\n"))
  files++
}
writeFileSync(
  join(dir, "namespaces.yaml"),
  Array.from(
    { length: NAMESPACES },
    (_, i) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ns-${i}, labels: {mesh-injection: enabled}}\n`,
  ).join("---\n"),
)

const runOnce = (): Promise<{ ms: number; code: number; messages: number }> =>
  new Promise((resolve, reject) => {
    const start = now()
    execFile(
      process.execPath,
      [join(ROOT, "bin", "meshctl.cjs"), "analyze", "-o", "json", dir],
      { maxBuffer: 256 * 1024 * 1024, timeout: 120_000 },
      (error, stdout) => {
        const ms = now() - start
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        try {
          resolve({ ms, code, messages: (JSON.parse(stdout) as Array<unknown>).length })
        } catch {
          reject(new Error(`meshctl analyze exited ${code} without JSON output`))
        }
      },
    )
  })

/** hyperfine's figures (user and system CPU too: wall time on a loaded machine says little). */
const viaHyperfine = (): { medianMs: number; meanMs: number; userMs: number; systemMs: number } | undefined => {
  const out = join(dir, "hyperfine.json")
  try {
    execFileSync(
      "hyperfine",
      [
        "-N",
        "-i",
        "--warmup",
        "1",
        "--runs",
        String(runs),
        "--export-json",
        out,
        `${process.execPath} ${join(ROOT, "bin", "meshctl.cjs")} analyze -o json ${dir}`,
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    )
  } catch {
    return undefined
  }
  const [result] = (JSON.parse(readFileSync(out, "utf8")) as { results: Array<Record<string, number>> }).results
  if (result === undefined) return undefined
  return {
    medianMs: round1(result.median! * 1000),
    meanMs: round1(result.mean! * 1000),
    userMs: round1(result.user! * 1000),
    systemMs: round1(result.system! * 1000),
  }
}

try {
  const times: Array<number> = []
  let last = { ms: 0, code: 0, messages: 0 }
  for (let i = 0; i < runs; i++) {
    last = await runOnce()
    times.push(last.ms)
  }
  process.stdout.write(
    `${JSON.stringify({
      benchmark: "meshctl analyze <dir>",
      resources: apps * PER_APP + NAMESPACES,
      files: files + 1,
      runs,
      messages: last.messages,
      exitCode: last.code,
      medianMs: round1(percentile(times, 50)),
      maxMs: round1(Math.max(...times)),
      hyperfine: viaHyperfine() ?? "not installed",
      targetMs: 3000,
    })}\n`,
  )
} finally {
  if (process.env.KEEP_DIR !== undefined) process.stderr.write(`${dir}\n`)
  else rmSync(dir, { recursive: true, force: true })
}
