/**
 * Start-up cost of the binaries against a bare `node -e 0`: median wall time over N runs of
 * each command, printed as JSON. Target (issue 2): `mesh-discovery version` within 3x of node.
 * Also the control plane's own start (issue 38): `mesh-discovery discovery` on a copy of
 * examples/mesh from spawn to the first 200 on `/ready` (median of M runs), with the process's
 * CPU time at that moment and the time to its first log line; target 1 s. Right after `/ready`, a
 * sidecar asks for its clusters over ADS: the time to that first response shows what a start
 * left for the first push (the xDS protos are loaded at their first use).
 *   node dist/scripts/bench-startup.mjs [runs] [discovery-runs]
 */
import { spawn, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { loadXdsProtos } from "../src/layers/xds/protos.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"

const runs = Number(process.argv[2] ?? 21)
const discoveryRuns = Number(process.argv[3] ?? 10)
const root = join(import.meta.dirname, "..", "..")
const DISCOVERY_TARGET_MS = 1000

const median = (values: Array<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
const round1 = (ms: number): number => Math.round(ms * 10) / 10

const time = (args: ReadonlyArray<string>): number => {
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint()
    const result = spawnSync(process.execPath, args, { cwd: root, stdio: "ignore" })
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${result.status}`)
    samples.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return round1(median(samples))
}

/** A port nothing listens on now (the kernel picks it; it is free again once closed). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const clockTicks = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim()) || 100

/** User+system CPU of a live process in ms, from /proc/<pid>/stat (fields 14 and 15, in clock ticks). */
const cpuMillis = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const ticks = Number(fields[11]) + Number(fields[12])
    return (ticks * 1000) / clockTicks
  } catch {
    return undefined
  }
}

interface DiscoveryStart {
  readonly ready_ms: number
  readonly first_log_ms: number
  readonly cpu_ms_at_ready: number | undefined
  /** From the request to the first CDS response of a sidecar that connects right after /ready. */
  readonly first_response_ms: number
}

// The client's side of the protos, loaded (and its codecs compiled) before any server starts.
const Ads = grpc.makeGenericClientConstructor(loadXdsProtos().ads, "AggregatedDiscoveryService")
loadXdsProtos().codec.encode(TypeUrl.Cluster, { name: "warm" })

/** Asks for a sidecar's clusters on a new connection; ms until the first response. */
const firstResponse = (address: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const client = new Ads(address, grpc.credentials.createInsecure())
    const call = (
      client as unknown as { StreamAggregatedResources: () => grpc.ClientDuplexStream<object, object> }
    ).StreamAggregatedResources()
    call.on("data", () => {
      resolve(performance.now() - start)
      call.cancel()
      client.close()
    })
    call.on("error", (error: grpc.ServiceError) => {
      if (error.code !== grpc.status.CANCELLED) reject(error)
    })
    call.write({
      node: {
        id: "sidecar~10.1.0.5~productpage-v1-1.default~default.svc.cluster.local",
        metadata: { fields: { NAMESPACE: { stringValue: "default" } } },
      },
      type_url: TypeUrl.Cluster,
    })
  })

/** One start of `mesh-discovery discovery --registries Mock` on a private copy of the example mesh. */
const discoveryStart = async (): Promise<DiscoveryStart> => {
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-"))
  cpSync(join(root, "examples/mesh"), join(dir, "mesh"), { recursive: true })
  const [http, grpcPort, secure, https, monitoring] = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()))
  const address = (port: number | undefined) => `127.0.0.1:${port}`
  const args = [
    join(root, "bin/mesh-discovery.cjs"),
    "discovery",
    ...["--configDir", join(dir, "mesh"), "--registries", "Mock"],
    ...["--httpAddr", address(http), "--grpcAddr", address(grpcPort), "--secureGRPCAddr", address(secure)],
    ...["--httpsAddr", address(https), "--monitoringAddr", address(monitoring)],
    ...["--ctrlz_address", "127.0.0.1", "--ctrlz_port", "0"],
  ]
  const start = performance.now()
  const child = spawn(process.execPath, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
  let firstLog: number | undefined
  let output = ""
  const onOutput = (chunk: Buffer) => {
    firstLog ??= performance.now() - start
    output = (output + chunk.toString()).slice(-4000)
  }
  child.stdout.on("data", onOutput)
  child.stderr.on("data", onOutput)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`mesh-discovery exited with ${child.exitCode}: ${output}`)
      if (performance.now() - start > 60_000) throw new Error(`mesh-discovery not ready after 60 s: ${output}`)
      const ok = await fetch(`http://${address(http)}/ready`).then(
        (response) => response.status === 200,
        () => false,
      )
      if (ok) {
        const ready = performance.now() - start
        const cpu = child.pid === undefined ? undefined : cpuMillis(child.pid)
        const first = await firstResponse(address(grpcPort))
        return { ready_ms: ready, first_log_ms: firstLog ?? ready, cpu_ms_at_ready: cpu, first_response_ms: first }
      }
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  } finally {
    child.kill("SIGKILL")
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
}

const node = time(["-e", "0"])
const commands = {
  "mesh-discovery version": ["bin/mesh-discovery.cjs", "version"],
  "mesh-agent version": ["bin/mesh-agent.cjs", "version"],
  "install-cni version": ["bin/install-cni.cjs", "version"],
  "meshctl --help": ["bin/meshctl.cjs", "--help"],
  "meshctl version --remote=false": ["bin/meshctl.cjs", "version", "--remote=false"],
}
const results = Object.fromEntries(
  Object.entries(commands).map(([name, args]) => {
    const ms = time(args)
    return [name, { median_ms: ms, ratio_to_node: Math.round((ms / node) * 100) / 100 }]
  }),
)
const starts: Array<DiscoveryStart> = []
for (let i = 0; i < discoveryRuns; i++) starts.push(await discoveryStart())
const cpu = starts.flatMap((s) => (s.cpu_ms_at_ready === undefined ? [] : [s.cpu_ms_at_ready]))
const discovery = {
  runs: discoveryRuns,
  ready_median_ms: round1(median(starts.map((s) => s.ready_ms))),
  first_log_median_ms: round1(median(starts.map((s) => s.first_log_ms))),
  cpu_ms_at_ready_median: cpu.length === 0 ? null : round1(median(cpu)),
  first_response_after_ready_median_ms: round1(median(starts.map((s) => s.first_response_ms))),
  target_ms: DISCOVERY_TARGET_MS,
}
const target = results["mesh-discovery version"]!.ratio_to_node
console.log(
  JSON.stringify(
    {
      runs,
      node_e_0_median_ms: node,
      commands: results,
      target_ratio: 3,
      target_met: target <= 3,
      "mesh-discovery discovery on examples/mesh: spawn → /ready": {
        ...discovery,
        target_met: discovery.ready_median_ms <= DISCOVERY_TARGET_MS,
      },
    },
    null,
    2,
  ),
)
