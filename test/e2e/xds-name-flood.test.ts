/**
 * Attack (issue 34, finding 1) against the built `mesh-discovery`: unauthenticated ADS streams on
 * the plaintext port send 1 MB DiscoveryRequests, each naming thousands of distinct resources,
 * as fast as flow control lets them (the attacker reads every answer). Before the bounds it grew
 * by about 1.5 GB a minute and kept it after the attackers left, and with a 384 MB heap (as the
 * probe ran it) died of the heap limit. It now runs with its defaults, as users run it: the name
 * bounds keep what it holds small, and MESH_HEAP_GROWTH_PERCENT (100) keeps V8 from letting the
 * heap grow to four times that before collecting (about 480 MB of RSS in this attack without it).
 *
 * Asserted: the server stays alive, its peak RSS (VmHWM) stays under a
 * bound, a second round of the same attack (after the first round's streams ended) does not
 * raise the peak much further (what the first round left was released or bounded), a
 * well-behaved watcher still gets a config change pushed while the attack runs, and requests
 * over the per-stream name bound are refused with RESOURCE_EXHAUSTED naming the setting, a
 * name over the length bound with INVALID_ARGUMENT.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import type * as http2 from "node:http2"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import type { AdsClientShape } from "../../src/services/xds-client/client.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { type AdsMethod, openRawStream, type RawOutcome, rawSession } from "../support/raw-ads.js"

const MB = 1024 * 1024
/** The route the watcher follows and the change touches. */
const LISTENER = "reviews.demo.svc.cluster.local:9080"
const node = (name: string) => ({
  id: `sidecar~127.0.0.1~${name}.demo~demo.svc.cluster.local`,
  metadata: plainToStruct({ GENERATOR: "grpc" }),
})
/**
 * Peak RSS the server may reach under the attack. Idle it holds about 140 MB; the four streams
 * may make it hold about 35 MB of names more (a heap snapshot mid-attack: 82 MB live); the rest
 * is garbage, which V8 lets grow to about twice the live heap during an allocation flood before
 * its marking catches up, and when it catches up depends on the machine: quiet runs peaked at
 * 300-450 MB, CI under load at 428 MB. Without the name bounds the same attack peaked at
 * 597-633 MB in a quiet run.
 */
const PEAK_BOUND_MB = 520
/**
 * What the attack may leave held once its streams ended, over the idle heap, measured after a
 * full collection (a heap snapshot makes V8 collect everything first): the names a stream made
 * the server hold must go with the stream (measured: 40 MB in use against an idle 47 MB).
 */
const HELD_AFTER_BOUND_MB = 40
const ATTACK_STREAMS = 4
const ROUND_MS = 7000

let dir = ""
let daemon: Daemon
let grpcPort = 0
let scope: Scope.CloseableScope | undefined
let monitoring = ""

const memory = () => {
  const status = readFileSync(`/proc/${daemon.process.pid}/status`, "utf8")
  const field = (name: string) =>
    Number(/(\d+) kB/.exec(status.split("\n").find((l) => l.startsWith(name)) ?? "")?.[1]) / 1024
  return { peakMb: field("VmHWM:"), nowMb: field("VmRSS:") }
}

/** 1 MB of distinct names: `count` names of about `MB / count` characters, unique to `tag`. */
const namesOf = (tag: string, count: number): Array<string> => {
  const pad = "n".repeat(Math.max(1, Math.floor(MB / count) - tag.length - 16))
  return Array.from({ length: count }, (_, i) => `${tag}-${i}-${pad}`)
}

interface RoundOutcome {
  readonly requests: number
  readonly statuses: Record<string, number>
  readonly messages: Array<string>
}

/**
 * One round: `ATTACK_STREAMS` streams each send distinct 1 MB requests (SotW over the four
 * types, delta subscriptions adding up), waiting for each write to drain; a stream the server
 * ends is replaced by a new one until the round's time is up.
 */
const attackRound = async (round: number): Promise<RoundOutcome> => {
  const until = Date.now() + ROUND_MS
  let requests = 0
  const statuses: Record<string, number> = {}
  const messages = new Set<string>()
  const types = [TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route, TypeUrl.Cluster]
  const one = async (k: number) => {
    const session: http2.ClientHttp2Session = rawSession(grpcPort, { reads: true })
    for (let opened = 0; Date.now() < until && opened < 200 && !session.destroyed; opened++) {
      const method: AdsMethod = k % 2 === 0 ? "StreamAggregatedResources" : "DeltaAggregatedResources"
      const raw = openRawStream(session, method)
      let ended = false
      void raw.closed.then(() => {
        ended = true
      })
      for (let i = 0; Date.now() < until && !ended; i++) {
        const tag = `r${round}-s${k}-o${opened}-q${i}`
        const typeUrl = types[i % types.length]!
        // Many short names or fewer long ones: both are 1 MB.
        const names = namesOf(tag, i % 2 === 0 ? 20_000 : 2000)
        const request =
          method === "StreamAggregatedResources"
            ? { node: node(`flood-${k}`), type_url: typeUrl, resource_names: names }
            : { node: node(`flood-${k}`), type_url: typeUrl, resource_names_subscribe: names }
        if (!(await raw.send(request))) break
        requests++
      }
      if (!raw.stream.closed) raw.stream.close()
      const outcome: RawOutcome = await raw.closed
      const code = String(outcome.grpcStatus ?? "none")
      statuses[code] = (statuses[code] ?? 0) + 1
      if (outcome.message !== "") messages.add(outcome.message.slice(0, 300))
    }
    session.destroy()
  }
  await Promise.all(Array.from({ length: ATTACK_STREAMS }, (_, k) => one(k)))
  return { requests, statuses, messages: [...messages] }
}

/** The size of the heap snapshot in the test's directory (-1: none yet). */
const snapshotBytes = (): number => {
  const file = readdirSync(dir).find((f) => f.endsWith(".heapsnapshot"))
  return file === undefined ? -1 : statSync(join(dir, file)).size
}

/** The heap in use once the snapshot SIGUSR2 asked for is written (its size held for 1 s). */
const heapUsedAfterSnapshot = async (): Promise<number> => {
  const deadline = Date.now() + 60_000
  let last = -1
  let stillSince = Date.now()
  for (;;) {
    if (Date.now() > deadline) throw new Error(`the server wrote no whole heap snapshot on SIGUSR2 (${last} bytes)`)
    const size = snapshotBytes()
    if (size !== last) {
      last = size
      stillSince = Date.now()
    } else if (size > 0 && Date.now() - stillSince >= 1000) {
      try {
        return await heapUsedMb()
      } catch {
        // Closed by the server while its event loop was blocked: ask again.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The server's V8 heap in use (MB), from its own metrics. */
const heapUsedMb = async (): Promise<number> => {
  const text = await (await fetch(`http://${monitoring}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith("nodejs_heap_size_used_bytes "))
  return Number(line?.split(" ")[1]) / MB
}

const routeVersion = async (client: AdsClientShape) =>
  (await Effect.runPromise(client.snapshot)).types.get(TypeUrl.Route)?.resources.get(LISTENER)?.version

beforeAll(async () => {
  dir = exampleMeshDir("xds-name-flood-")
  daemon = startDaemon(
    "mesh-discovery",
    discoveryArgs(join(dir, "mesh")),
    {
      PILOT_DEBOUNCE_AFTER: "10ms",
      PILOT_DEBOUNCE_MAX: "1s",
      // SIGUSR2 writes a heap snapshot (into the test's directory), after a full collection.
      NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}`,
    },
    dir,
  )
  grpcPort = Number((await daemon.waitFor(/ADS server listening on [\d.]+:(\d+)/, 30_000))[1])
  monitoring = (await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/, 30_000))[1]!
  await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
}, 60_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (daemon !== undefined) await daemon.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("mesh-discovery under a flood of distinct resource names (finding 1)", () => {
  it("stays under its memory bound, refuses streams over the name bounds, and keeps pushing to a watcher", async () => {
    scope = Effect.runSync(Scope.make())
    const watcher = await Effect.runPromise(
      makeAdsClient({ address: `127.0.0.1:${grpcPort}`, mode: "sotw", node: node("watcher") as never }).pipe(
        Scope.extend(scope),
      ),
    )
    await Effect.runPromise(watcher.subscribe(TypeUrl.Listener, [LISTENER]))
    await Effect.runPromise(watcher.subscribe(TypeUrl.Route, [LISTENER]))
    await Effect.runPromise(
      watcher.waitFor((s) => s.types.get(TypeUrl.Route)?.resources.has(LISTENER) === true, "20 seconds"),
    )
    const idle = { ...memory(), heapMb: await heapUsedMb() }

    // Round 1, with a config change in the middle of it that the watcher must receive.
    const before = await routeVersion(watcher)
    const first = attackRound(1)
    await new Promise((resolve) => setTimeout(resolve, ROUND_MS / 2))
    const routing = join(dir, "mesh/routing.yaml")
    const text = readFileSync(routing, "utf8")
    expect(text).toContain("timeout: 2s")
    writeFileSync(routing, text.replace("timeout: 2s", "timeout: 7s"))
    const pushed = await Effect.runPromise(
      watcher
        .waitFor((s) => {
          const v = s.types.get(TypeUrl.Route)?.resources.get(LISTENER)?.version
          return v !== undefined && v !== before
        }, "15 seconds")
        .pipe(Effect.either),
    )
    const round1 = await first
    const afterFirst = memory()
    // Round 2: the same attack again, after every stream of the first ended.
    const round2 = await attackRound(2)
    const afterSecond = memory()
    // The heap in use once the attackers left, for the report (garbage is collected when V8
    // chooses; test/layers/xds/ads-name-release.test.ts asserts the release after a full GC).
    const heapAfterMb = await heapUsedMb()
    // What is still held: the snapshot is written on the server's main thread after a full
    // collection. Its file grows while it is written; once its size holds still, the heap in use
    // is asked for (a connection the blocked server closed meanwhile is asked again).
    daemon.process.kill("SIGUSR2")
    const liveAfterMb = await heapUsedAfterSnapshot()
    const report = JSON.stringify({ idle, afterFirst, afterSecond, heapAfterMb, liveAfterMb, round1, round2 })
    // The figures the issue asks for (peak RSS before and after the attack), in the test output.
    console.info(`xds-name-flood: ${report}`)

    const alive = daemon.process.exitCode === null && daemon.process.signalCode === null
    expect(alive, `the server died: ${report}\n${daemon.output().slice(-2000)}`).toBe(true)
    expect(pushed._tag, `the watcher got no push during the attack: ${report}`).toBe("Right")
    expect(round1.requests, report).toBeGreaterThan(0)
    expect(afterFirst.peakMb, report).toBeLessThan(PEAK_BOUND_MB)
    expect(afterSecond.peakMb, report).toBeLessThan(PEAK_BOUND_MB)
    // No bound on how far round 2's peak exceeds round 1's: when V8's marking catches up decides
    // both (CI: 316 then 406 MB, holding nothing more). What a round leaves held is the check below.
    expect(liveAfterMb - idle.heapMb, report).toBeLessThan(HELD_AFTER_BOUND_MB)
    // Whatever the rounds were refused with says which bound (how far the delta streams got
    // before their names added up past it depends on the machine's speed).
    for (const message of [...round1.messages, ...round2.messages])
      expect(message, report).toMatch(/resource names.*MESH_XDS_MAX_|characters long/)
    // The watcher still follows the route, and the server still answers it.
    expect(await routeVersion(watcher)).not.toBe(before)

    // The bounds as a caller meets them, one request each: more names than a stream may hold,
    // and one name over the length bound.
    const refusal = async (request: object) => {
      const session = rawSession(grpcPort, { reads: true })
      const raw = openRawStream(session, "StreamAggregatedResources")
      await raw.send(request)
      const outcome = await raw.closed
      session.destroy()
      return outcome
    }
    const many = await refusal({
      node: node("many"),
      type_url: TypeUrl.Endpoint,
      resource_names: Array.from({ length: 100_001 }, (_, i) => `n${i}`),
    })
    expect(many.grpcStatus).toBe(8) // RESOURCE_EXHAUSTED
    expect(many.message).toBe(
      "the request names 100001 resources; a stream may watch at most 100000 (MESH_XDS_MAX_STREAM_NAMES)",
    )
    const long = await refusal({ node: node("long"), type_url: TypeUrl.Listener, resource_names: ["l".repeat(3000)] })
    expect(long.grpcStatus).toBe(3) // INVALID_ARGUMENT
    expect(long.message).toBe("a name in resource_names is 3000 characters long; at most 2048 are accepted")
  }, 40_000)
})
