/**
 * What mesh-discovery tells a user whose config or client asks for something that is not
 * there, through the built binary on a copy of the example mesh:
 * - a real @grpc/grpc-js-xds client dialling a host:port the mesh does not know only sees
 *   DEADLINE_EXCEEDED; the server shows "requested listener ... not found" for that proxy in
 *   /debug/syncz and says it at debug in the `ads` scope;
 * - a VirtualService routing to a subset no DestinationRule defines is logged as a warning
 *   (scope `analysis`) and shown at /debug/config_warnings;
 * - the example DestinationRule's fields proxyless clients ignore are logged once, at info.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { proxylessBootstrap } from "../support/discovery.js"
import { type Daemon, ROOT, startDaemon } from "../support/processes.js"

const UNKNOWN = "nowhere.demo.svc.cluster.local:80"
const NODE_ID = "sidecar~127.0.0.1~lost.demo~demo.svc.cluster.local"

let dir = ""
let daemon: Daemon
let monitoring = ""
let ads = ""
let client: ChildProcessWithoutNullStreams | undefined
let clientOutput = ""
const answers: Array<(counts: Record<string, number>) => void> = []

/** Polls `check` until it returns a value (not undefined), within a time limit. */
const until = async <A>(what: string, check: () => Promise<A | undefined>, ms = 20_000): Promise<A> => {
  const limit = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > limit)
      throw new Error(`timed out waiting for ${what}\n${daemon.output().slice(-3000)}\nclient: ${clientOutput}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "discovery-diagnostics-"))
  cpSync(join(ROOT, "examples/mesh"), join(dir, "mesh"), { recursive: true })
  // The canary's second destination names a subset the DestinationRule does not define.
  const routing = join(dir, "mesh/routing.yaml")
  const before = readFileSync(routing, "utf8")
  const broken = before.replace(/subset: v2\n(\s+)weight: 20/, "subset: v3\n$1weight: 20")
  if (broken === before) throw new Error("examples/mesh/routing.yaml changed: update this test's edit")
  writeFileSync(routing, broken)
  daemon = startDaemon(
    "mesh-discovery",
    [
      "discovery",
      "--configDir",
      join(dir, "mesh"),
      "--registries",
      "Mock",
      "--grpcAddr",
      "127.0.0.1:0",
      "--httpAddr",
      "127.0.0.1:0",
      "--monitoringAddr",
      "127.0.0.1:0",
      "--secureGRPCAddr",
      "127.0.0.1:0",
      "--httpsAddr",
      "127.0.0.1:0",
      "--ctrlz_address",
      "127.0.0.1",
      "--ctrlz_port",
      "0",
      "--log_output_level",
      "ads:debug,default:info",
    ],
    { PILOT_DEBOUNCE_AFTER: "10ms", PILOT_DEBOUNCE_MAX: "1s" },
    dir,
  )
  ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!
  monitoring = (await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/, 30_000))[1]!
  await daemon.waitFor(/first configuration received: serving xDS/, 30_000)

  const bootstrap = join(dir, "grpc-bootstrap.json")
  writeFileSync(bootstrap, proxylessBootstrap(ads, NODE_ID))
  client = spawn(process.execPath, [join(ROOT, "test/fixtures/xds/echo-client-repl.mjs"), UNKNOWN], {
    cwd: ROOT,
    env: { ...process.env, GRPC_XDS_BOOTSTRAP: bootstrap },
    stdio: ["pipe", "pipe", "pipe"],
  })
  createInterface({ input: client.stdout }).on("line", (line) => {
    clientOutput += `${line}\n`
    answers.shift()?.((JSON.parse(line) as { counts: Record<string, number> }).counts)
  })
  client.stderr.on("data", (chunk: Buffer) => {
    clientOutput += chunk.toString()
  })
}, 60_000)

afterAll(async () => {
  if (client !== undefined && client.exitCode === null) client.kill("SIGKILL")
  if (daemon !== undefined) await daemon.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

const getJson = async (path: string): Promise<unknown> => (await fetch(`http://${monitoring}${path}`)).json()

describe("mesh-discovery diagnostics", () => {
  it("a client dialling an unknown host:port gets DEADLINE_EXCEEDED; syncz and the ads debug log say why", async () => {
    const counts = new Promise<Record<string, number>>((resolve) => answers.push(resolve))
    client!.stdin.write(`${JSON.stringify({ id: 0, count: 1 })}\n`)
    const expected = `requested listener ${UNKNOWN} not found: no service has host nowhere.demo.svc.cluster.local`
    const row = await until("the proxy's LDS warning in syncz", async () => {
      const rows = (await getJson("/debug/syncz")) as Array<{ proxy: string; type: string; warnings: Array<string> }>
      return rows.find((r) => r.proxy === NODE_ID && r.type === "lds" && r.warnings.length > 0)
    })
    expect(row.warnings).toEqual([expected])
    expect(await counts, clientOutput).toEqual({ "code:4": 1 })
    expect(daemon.output()).toContain(expected)
    expect(daemon.output()).toMatch(/\tdebug\tads\trequested listener nowhere\.demo\.svc\.cluster\.local:80 not found/)
  })

  it("warns about a route destination whose subset no DestinationRule defines, and shows it at /debug/config_warnings", async () => {
    await daemon.waitFor(
      /\twarn\tanalysis\t.*VirtualService demo\/reviews: field spec\.http\[1\]\.route\[1\]\.destination\.subset: referenced host\+subset not found/,
    )
    expect(await getJson("/debug/config_warnings")).toEqual([
      {
        kind: "VirtualService",
        namespace: "demo",
        name: "reviews",
        file: join(dir, "mesh/routing.yaml"),
        documentIndex: 0,
        path: "spec.http[1].route[1].destination.subset",
        message:
          'referenced host+subset not found: the DestinationRules for host reviews.demo.svc.cluster.local define no subset "v3" (subsets: v1, v2; requests routed there fail)',
      },
    ])
  })

  it("says once, at info, which fields of the example DestinationRule proxyless clients ignore", async () => {
    // Two connections each get the example's clusters: the notice is per resource, not per push.
    for (const id of ["cds-a", "cds-b"])
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const c = yield* makeAdsClient({
              address: ads,
              mode: "sotw",
              node: {
                id: `sidecar~127.0.0.1~${id}.demo~demo.svc.cluster.local`,
                metadata: plainToStruct({ GENERATOR: "grpc" }),
              },
            })
            yield* c.subscribe(TypeUrl.Cluster)
            yield* c.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.resources.size ?? 0) > 0, "20 seconds")
          }),
        ),
      )
    const line = /DestinationRule demo\/reviews: proxyless gRPC clients ignore .*connectTimeout.*LEAST_REQUEST/
    await until("the grpcgen notice", async () => (line.test(daemon.output()) ? true : undefined))
    const lines = daemon
      .output()
      .split("\n")
      .filter((l) => line.test(l))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/\tinfo\tgrpcgen\tDestinationRule/)
  })
})
