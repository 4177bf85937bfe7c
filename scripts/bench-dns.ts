/**
 * DNS proxy benchmark. Prints JSON.
 *
 *   node dist/scripts/bench-dns.mjs [--names 1000] [--seconds 10] [--outstanding 100] [--queries 20000]
 *                                   [--client in-process]
 *
 * Starts the agent's DNS proxy in this process on an ephemeral loopback port, with a name table
 * of `--names` orchestrator services (one VIP each, spread over 10 namespaces) and a stand-in
 * upstream server (answers NXDOMAIN), then measures the mesh names answered from the table:
 * with `dnsperf` (UDP, `--outstanding` queries in flight, for `--seconds`), queries per second
 * and p50/p99 latency from its per-query report (`-v`); the query file asks A for every name in
 * turn. Without dnsperf, a bounded client in this
 * process sends `--queries` queries, `--outstanding` at a time (it shares the event loop with the
 * proxy, so its rate is a floor). With that many queries in flight, latency is mostly queueing
 * (about outstanding / rate).
 */
import { execFile } from "node:child_process"
import { createSocket } from "node:dgram"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import dnsPacket from "dns-packet"
import { Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { makeDnsProxy } from "../src/layers/agent/dns/dns-proxy.js"
import { layer as metricsLayer } from "../src/layers/metrics.js"
import { ORCHESTRATOR_REGISTRY } from "../src/services/registry/orchestrator/service.js"
import type { NameInfo, NameTable } from "../src/services/xds/proxygen/nds/name-table.js"
import { arg, now, percentile, serverLogsToStderr } from "./bench-support.js"

const NAMES = Number(arg("names", "1000"))
const SECONDS = Number(arg("seconds", "10"))
const OUTSTANDING = Number(arg("outstanding", "100"))
const QUERIES = Number(arg("queries", "20000"))
/** `in-process` forces the fallback client. */
const CLIENT = arg("client", "auto")
const run = promisify(execFile)

const hostOf = (i: number) => `svc-${i}.ns-${i % 10}.svc.cluster.local`

const nameTable = (): NameTable => {
  const table: Record<string, NameInfo> = {}
  for (let i = 0; i < NAMES; i++) {
    table[hostOf(i)] = {
      ips: [`10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`],
      registry: ORCHESTRATOR_REGISTRY,
      shortname: `svc-${i}`,
      namespace: `ns-${i % 10}`,
      alt_hosts: [`svc-${i}.ns-${i % 10}`, `svc-${i}.ns-${i % 10}.svc`],
    }
  }
  return { table }
}

/** A UDP server answering NXDOMAIN to everything: the proxy's upstream (unused by mesh names). */
const standInUpstream = Effect.acquireRelease(
  Effect.async<{ port: number; close: () => void }>((resume) => {
    const socket = createSocket("udp4")
    socket.on("message", (bytes, from) => {
      const query = dnsPacket.decode(bytes)
      const reply = dnsPacket.encode({ id: query.id, type: "response", flags: 3, questions: query.questions })
      socket.send(reply, from.port, from.address)
    })
    socket.bind(0, "127.0.0.1", () =>
      resume(Effect.succeed({ port: socket.address().port, close: () => socket.close() })),
    )
  }),
  (upstream) => Effect.sync(upstream.close),
)

const hasDnsperf = () =>
  run("dnsperf", ["-h"]).then(
    () => true,
    (e: { code?: string; stderr?: string }) => e.code !== "ENOENT" && (e.stderr ?? "").includes("Usage"),
  )

const round3 = (ms: number) => Math.round(ms * 1000) / 1000

/** dnsperf's summary and, from `-v`, every query's latency. */
const withDnsperf = async (port: number, dir: string) => {
  const file = join(dir, "queries.txt")
  writeFileSync(file, `${Array.from({ length: NAMES }, (_, i) => `${hostOf(i)} A`).join("\n")}\n`)
  const { stdout } = await run(
    "dnsperf",
    ["-s", "127.0.0.1", "-p", String(port), "-d", file, "-l", String(SECONDS), "-q", String(OUTSTANDING), "-v"],
    { maxBuffer: 1 << 30 },
  )
  const latencies: Array<number> = []
  let errors = 0
  for (const line of stdout.split("\n")) {
    const m = /^> (\S+) \S+ \S+ ([\d.]+)$/.exec(line)
    if (m === null) continue
    if (m[1] !== "NOERROR") errors++
    latencies.push(Number(m[2]) * 1000)
  }
  const number = (label: RegExp) => Number(label.exec(stdout)?.[1] ?? Number.NaN)
  return {
    client: "dnsperf",
    queriesSent: number(/Queries sent:\s+(\d+)/),
    queriesCompleted: number(/Queries completed:\s+(\d+)/),
    queriesLost: number(/Queries lost:\s+(\d+)/),
    notNoerror: errors,
    queriesPerSecond: Math.round(number(/Queries per second:\s+([\d.]+)/)),
    latencyMs: { p50: round3(percentile(latencies, 50)), p99: round3(percentile(latencies, 99)) },
  }
}

/** A bounded client in this process: `QUERIES` queries, `OUTSTANDING` in flight, 2 s timeout each. */
const inProcess = (port: number) =>
  new Promise<object>((resolve) => {
    const socket = createSocket("udp4")
    const sentAt = new Map<number, number>()
    const latencies: Array<number> = []
    let sent = 0
    let lost = 0
    const start = now()
    const finishIfDone = () => {
      if (latencies.length + lost < QUERIES) return
      const seconds = (now() - start) / 1000
      socket.close()
      resolve({
        client: "in-process",
        queriesSent: sent,
        queriesCompleted: latencies.length,
        queriesLost: lost,
        queriesPerSecond: Math.round(latencies.length / seconds),
        latencyMs: { p50: round3(percentile(latencies, 50)), p99: round3(percentile(latencies, 99)) },
      })
    }
    const sendNext = () => {
      if (sent >= QUERIES) return
      const id = sent & 0xffff
      const name = hostOf(sent % NAMES)
      sent++
      sentAt.set(id, now())
      socket.send(
        dnsPacket.encode({ id, type: "query", flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: "A" }] }),
        port,
        "127.0.0.1",
      )
      setTimeout(() => {
        if (sentAt.delete(id)) {
          lost++
          finishIfDone()
          sendNext()
        }
      }, 2000).unref()
    }
    socket.on("message", (reply) => {
      const id = reply.readUInt16BE(0)
      const at = sentAt.get(id)
      if (at === undefined) return
      sentAt.delete(id)
      latencies.push(now() - at)
      finishIfDone()
      sendNext()
    })
    socket.bind(0, "127.0.0.1", () => {
      for (let i = 0; i < Math.min(OUTSTANDING, QUERIES); i++) sendNext()
    })
  })

const main = Effect.gen(function* () {
  const dir = mkdtempSync(join(tmpdir(), "bench-dns-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  const resolvConf = join(dir, "resolv.conf")
  writeFileSync(resolvConf, "search ns-0.svc.cluster.local svc.cluster.local cluster.local\nnameserver 127.0.0.1\n")
  const upstream = yield* standInUpstream
  const proxy = yield* makeDnsProxy({
    address: "127.0.0.1:0",
    forwardParallel: false,
    namespace: "ns-0",
    domain: "",
    resolvConfPath: resolvConf,
    upstreams: [`127.0.0.1:${upstream.port}`],
  })
  const built = now()
  yield* proxy.sink.update(nameTable())
  const tableBuildMs = now() - built
  const result =
    CLIENT !== "in-process" && (yield* Effect.promise(hasDnsperf))
      ? yield* Effect.promise(() => withDnsperf(proxy.port, dir))
      : yield* Effect.promise(() => inProcess(proxy.port))
  return {
    benchmark: "dns-proxy",
    names: NAMES,
    outstanding: OUTSTANDING,
    ...(result as object),
    tableBuildMs: round3(tableBuildMs),
    node: process.version,
  }
})

const scope = Effect.runSync(Scope.make())
const exit = await Effect.runPromiseExit(
  main.pipe(
    Scope.extend(scope),
    Effect.provide(Layer.mergeAll(metricsLayer("mesh-agent"), serverLogsToStderr)),
    Logger.withMinimumLogLevel(LogLevel.Warning),
  ),
)
await Effect.runPromise(Scope.close(scope, exit))
if (Exit.isSuccess(exit)) console.log(JSON.stringify(exit.value, null, 2))
else {
  console.error(exit.cause)
  process.exitCode = 1
}
