/**
 * `meshctl proxy-status` with many connected proxies (default 2,000): a built mesh-discovery
 * on loopback, that many ADS clients (the agent's client, light: no decoding) each watching CDS
 * and LDS, then the built meshctl run as a process, asking over xDS (the debug type on the
 * plaintext ADS port, the default path) and over the monitoring listener's HTTP. Prints JSON:
 * proxies connected, rows printed and the wall time of each run (median and max) per path.
 * Target: under 2 s for 2,000 proxies.
 *
 *   npm run build && node dist/scripts/bench-proxy-status.mjs [--proxies 2000] [--runs 5]
 */
import { execFile, spawn } from "node:child_process"
import { cpSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import { arg, now, percentile, round1 } from "./bench-support.js"

const ROOT = join(import.meta.dirname, "..", "..")
const proxies = Number(arg("proxies", "2000"))
const runs = Number(arg("runs", "5"))

const dir = mkdtempSync(join(tmpdir(), "bench-ps-"))
cpSync(join(ROOT, "examples/mesh"), join(dir, "mesh"), { recursive: true })
const flags = {
  "--configDir": join(dir, "mesh"),
  "--registries": "Mock",
  "--grpcAddr": "127.0.0.1:0",
  "--secureGRPCAddr": "127.0.0.1:0",
  "--httpAddr": "127.0.0.1:0",
  "--monitoringAddr": "127.0.0.1:0",
  "--httpsAddr": "127.0.0.1:0",
  "--ctrlz_address": "127.0.0.1",
  "--ctrlz_port": "0",
}
const server = spawn(
  process.execPath,
  [join(ROOT, "bin/mesh-discovery.cjs"), "discovery", ...Object.entries(flags).flat()],
  {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  },
)
let output = ""
const logged = (pattern: RegExp): Promise<string> =>
  new Promise((resolve) => {
    const check = () => {
      const match = output.match(pattern)
      if (match !== null) resolve(match[1]!)
      else setTimeout(check, 50)
    }
    check()
  })
server.stdout.on("data", (c: Buffer) => (output += c.toString()))
server.stderr.on("data", (c: Buffer) => (output += c.toString()))

const ads = await logged(/ADS server listening on ([\d.]+:\d+)/)
const monitoring = await logged(/monitoring listening on ([\d.]+:\d+)/)

const scope = Effect.runSync(Scope.make())
const connectStarted = now()
await Effect.runPromise(
  Effect.forEach(
    Array.from({ length: proxies }, (_, i) => i),
    (i) =>
      Effect.gen(function* () {
        const client = yield* makeAdsClient({
          address: ads,
          mode: "sotw",
          decode: false,
          node: {
            id: `sidecar~10.1.${i >> 8}.${i & 255}~app-${i}.bench~bench.svc.cluster.local`,
            metadata: plainToStruct({ CLUSTER_ID: "bench", MESH_VERSION: "1.0.0" }),
          },
        })
        yield* client.subscribe(TypeUrl.Cluster)
        yield* client.subscribe(TypeUrl.Listener)
      }),
    { concurrency: 200, discard: true },
  ).pipe(Scope.extend(scope)),
)

/** How meshctl asks: over xDS (the debug type on the plaintext ADS port) or the monitoring listener's HTTP. */
const ASK = {
  xds: ["--xds-address", ads, "--plaintext"],
  http: ["--xds-address", `http://${monitoring}`],
} as const

const meshctl = (via: keyof typeof ASK = "xds"): Promise<{ ms: number; stdout: string }> =>
  new Promise((resolve, reject) => {
    const started = now()
    execFile(
      process.execPath,
      [join(ROOT, "bin/meshctl.cjs"), "proxy-status", ...ASK[via]],
      { maxBuffer: 256 * 1024 * 1024 },
      (error, stdout) => (error === null ? resolve({ ms: now() - started, stdout }) : reject(error)),
    )
  })

// Wait until every proxy is listed and synced (ACKs arrive asynchronously). While the proxies'
// streams still queue for admission, meshctl's own stream is refused by the rate limit: retry.
const settleStarted = now()
const settling = () => meshctl().catch(() => ({ ms: 0, stdout: "" }))
let last = await settling()
while ((last.stdout.match(/SYNCED\s+SYNCED/g) ?? []).length < proxies && now() - settleStarted < 120_000)
  last = await settling()
const connectMs = now() - connectStarted

const times: Array<number> = []
const httpTimes: Array<number> = []
let rows = 0
let httpRows = 0
for (let i = 0; i < runs; i++) {
  const run = await meshctl("xds")
  times.push(run.ms)
  rows = run.stdout.trim().split("\n").length - 1
  const http = await meshctl("http")
  httpTimes.push(http.ms)
  httpRows = http.stdout.trim().split("\n").length - 1
}

await Effect.runPromise(Scope.close(scope, Exit.void))
server.kill("SIGTERM")

console.log(
  JSON.stringify(
    {
      proxies,
      rows,
      synced: (last.stdout.match(/SYNCED\s+SYNCED/g) ?? []).length,
      connectAndSyncMs: round1(connectMs),
      runs,
      medianMs: round1(percentile(times, 50)),
      maxMs: round1(Math.max(...times)),
      http: { rows: httpRows, medianMs: round1(percentile(httpTimes, 50)), maxMs: round1(Math.max(...httpTimes)) },
      targetMs: 2000,
    },
    null,
    2,
  ),
)
process.exit(0)
