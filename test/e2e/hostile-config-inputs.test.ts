/**
 * Issue 34, findings 5, 7 and 11 (second half), run as an attacker would against the built
 * binaries:
 * - mesh-discovery given 2 MB of nested flow collections in --configDir, live and at start-up:
 *   /ready keeps answering, xDS keeps serving, memory stays bounded, the file is refused with a
 *   line naming it and the limit; FIFOs, /dev/zero behind a link and file link loops are skipped
 *   with one line each; webhook bodies nested a million deep are refused at once.
 * - meshctl validate / analyze / orch-inject on a directory with two link loops, on /dev/zero, on
 *   a 100 MB file and on the nested file: they end quickly, with an exit code and a clear message,
 *   and a bounded peak RSS (VmHWM of the child, sampled from /proc).
 * Before the bounds (measured with the same inputs): /ready timed out for 9.6 s and the process
 * reached 1.2 GB; a restart took 8.8 s; validate on the nested file died out of memory (1.3 GB),
 * on the loop directory never ended, on /dev/zero reached 17 GB.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { request } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { binary, type Daemon, startDaemon } from "../support/processes.js"
import { openRawStream, rawSession } from "../support/raw-ads.js"

const NESTED_LEVELS = 1_000_000
/** 2 MB of `[[[...]]]`: the finding's file. */
const nestedText = () => `${"[".repeat(NESTED_LEVELS)}${"]".repeat(NESTED_LEVELS)}\n`
const NODE = { id: "sidecar~127.0.0.1~probe.demo~demo.svc.cluster.local", metadata: { fields: {} } }

/** Peak resident memory (VmHWM) of a running process in MiB, or undefined once it is gone. */
const vmHwmMiB = (pid: number): number | undefined => {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) / 1024
  } catch {
    return undefined
  }
}

interface Measured {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly millis: number
  /** Highest VmHWM sampled while it ran (every 5 ms). */
  readonly peakMiB: number
}

/** Runs meshctl with `args`, killed after `limitMillis`, sampling its peak RSS. */
const meshctl = (args: ReadonlyArray<string>, cwd: string, limitMillis = 30_000): Promise<Measured> =>
  new Promise((resolve) => {
    const started = performance.now()
    const child = spawn(process.execPath, [binary("meshctl"), ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    let peak = 0
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const sample = setInterval(() => {
      peak = Math.max(peak, vmHwmMiB(child.pid ?? -1) ?? 0)
    }, 5)
    const kill = setTimeout(() => child.kill("SIGKILL"), limitMillis)
    child.on("exit", (code) => {
      clearInterval(sample)
      clearTimeout(kill)
      resolve({ code, stdout, stderr, millis: performance.now() - started, peakMiB: peak })
    })
  })

/** Milliseconds /ready takes to answer (a timeout counts as `timeoutMillis`). */
const readyLatency = async (port: number, timeoutMillis = 5_000): Promise<{ millis: number; status: number }> => {
  const started = performance.now()
  try {
    const response = await fetch(`http://127.0.0.1:${port}/ready`, { signal: AbortSignal.timeout(timeoutMillis) })
    await response.text()
    return { millis: performance.now() - started, status: response.status }
  } catch {
    return { millis: timeoutMillis, status: 0 }
  }
}

/** Milliseconds until an ADS stream asking for clusters gets its first response bytes. */
const xdsAnswer = async (port: number, timeoutMillis = 10_000): Promise<number> => {
  const session = rawSession(port, { reads: true })
  try {
    const started = performance.now()
    const raw = openRawStream(session, "StreamAggregatedResources")
    const answered = new Promise<number>((resolve, reject) => {
      raw.stream.once("data", () => resolve(performance.now() - started))
      setTimeout(() => reject(new Error("no xDS answer")), timeoutMillis)
    })
    await raw.send({ node: NODE, type_url: TypeUrl.Cluster })
    return await answered
  } finally {
    session.destroy()
  }
}

/** One HTTPS POST to the webhook listener (the certificate is not what is tested here). */
const postReview = (port: number, path: string, body: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        rejectUnauthorized: false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          text += chunk
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on("error", reject)
    req.end(body)
  })

const deepReview = (levels: number) =>
  `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"CREATE","object":{"apiVersion":"networking.mesh.io/v1","kind":"VirtualService","metadata":{"name":"a","namespace":"default"},"spec":{"hosts":["a"],"x":${"[".repeat(levels)}${"]".repeat(levels)}}}}}`

describe("mesh-discovery with hostile files in --configDir (issue 34 findings 5 and 11)", () => {
  let dir = ""
  let daemon: Daemon | undefined

  beforeAll(() => {
    dir = exampleMeshDir("hostile-config-")
    const mesh = join(dir, "mesh")
    execFileSync("mkfifo", [join(mesh, "pipe.yaml")])
    symlinkSync("/dev/zero", join(mesh, "zero.yaml"))
    symlinkSync("loop-b.yaml", join(mesh, "loop-a.yaml"))
    symlinkSync("loop-a.yaml", join(mesh, "loop-b.yaml"))
  })

  afterAll(async () => {
    if (daemon?.process.exitCode === null) await daemon.stop("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  })

  /** Start-up to serving without the nested file, to compare the restart with it against. */
  let plainStartMillis = 0

  it("keeps /ready and xDS answering while a nested file is refused, with bounded memory", async () => {
    const started = performance.now()
    daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh")), {}, dir)
    const http = Number((await daemon.waitFor(/\thttp listening on [\d.]+:(\d+)/, 30_000))[1])
    const ads = Number((await daemon.waitFor(/ADS server listening on [\d.]+:(\d+)/, 30_000))[1])
    const webhook = Number((await daemon.waitFor(/webhook HTTPS listener on [\d.]+:(\d+)/, 30_000))[1])
    await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
    plainStartMillis = performance.now() - started
    // Finding 11: each special entry is named once, with what it is; the load was not blocked.
    const output = daemon.output()
    for (const [name, reason] of [
      ["pipe.yaml", "a FIFO (named pipe)"],
      ["zero.yaml", "a character device"],
      ["loop-a.yaml", "symbolic link loop"],
      ["loop-b.yaml", "symbolic link loop"],
    ] as const) {
      const lines = output.split("\n").filter((line) => line.includes(`${name}: not read: `))
      expect(lines, output.slice(-3000)).toHaveLength(1)
      expect(lines[0]).toContain(reason)
    }
    const pid = daemon.process.pid ?? -1
    const before = vmHwmMiB(pid) ?? 0

    writeFileSync(join(dir, "mesh", "nested.yaml"), nestedText())
    const latencies: Array<number> = []
    const until = Date.now() + 4_000
    while (Date.now() < until) {
      const ready = await readyLatency(http)
      expect(ready.status).toBe(200)
      latencies.push(ready.millis)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const refused = await daemon.waitFor(/nested\.yaml document 0: YAML nested more than 100 levels deep[^\n]*/, 10_000)
    expect(refused[0]).toContain("over the limit of 100")
    // The last good configuration is still served.
    expect(await xdsAnswer(ads)).toBeLessThan(5_000)
    // Bounds with room for a loaded CI machine: before, /ready waited 9.6 s and RSS reached 1.2 GB.
    expect(Math.max(...latencies)).toBeLessThan(1_000)
    const after = vmHwmMiB(pid) ?? 0
    expect(after - before).toBeLessThan(150)
    console.log(
      `nested file live: worst /ready ${Math.max(...latencies).toFixed(0)} ms, VmHWM ${before.toFixed(0)} -> ${after.toFixed(0)} MiB`,
    )

    // Webhook bodies nested a million deep: refused at once, a clear reason, no stack overflow.
    for (const [path, check] of [
      ["/validate", (answer: { status: number; body: string }) => expect(answer.status).toBe(400)],
      [
        "/inject",
        (answer: { status: number; body: string }) =>
          expect(JSON.parse(answer.body)).toMatchObject({ response: { allowed: false } }),
      ],
    ] as const) {
      const started = performance.now()
      const answer = await postReview(webhook, path, deepReview(1_000_000))
      expect(performance.now() - started).toBeLessThan(2_000)
      check(answer)
      expect(answer.body).toContain("JSON nested more than 102 levels deep")
    }
    expect(daemon.process.exitCode).toBeNull()
  }, 90_000)

  it("starts with the nested file present about as fast as without it", async () => {
    await daemon?.stop("SIGKILL")
    const started = performance.now()
    daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh")), {}, dir)
    await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
    const millis = performance.now() - started
    const peak = vmHwmMiB(daemon.process.pid ?? -1) ?? 0
    console.log(
      `restart with the nested file: serving after ${millis.toFixed(0)} ms (${plainStartMillis.toFixed(0)} ms without it), VmHWM ${peak.toFixed(0)} MiB`,
    )
    // Before, the file added 7 s (41 s in the report) and 1 GB; now it costs milliseconds.
    // The margin is for a loaded machine: two start-ups of the same binary vary by a second or two.
    expect(millis).toBeLessThan(plainStartMillis + 4_000)
    expect(peak).toBeLessThan(400)
    expect(daemon.output()).toMatch(/nested\.yaml document 0: YAML nested more than 100 levels deep/)
  }, 60_000)
})

describe("meshctl on hostile inputs (issue 34 findings 5 and 7)", () => {
  let dir = ""

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "meshctl-hostile-"))
    const tree = join(dir, "tree")
    mkdirSync(join(tree, "sub"), { recursive: true })
    writeFileSync(
      join(tree, "sub", "se.yaml"),
      "apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: se, namespace: default}\nspec:\n  hosts: [a.example.com]\n  resolution: DNS\n  ports: [{number: 80, name: http, protocol: HTTP}]\n",
    )
    symlinkSync(".", join(tree, "loop"))
    symlinkSync("..", join(tree, "sub", "up"))
    execFileSync("mkfifo", [join(tree, "pipe.yaml")])
    writeFileSync(join(dir, "nested.yaml"), nestedText())
    // 100 MB, sparse: the size is what counts.
    writeFileSync(join(dir, "big.yaml"), "")
    execFileSync("truncate", ["-s", "100M", join(dir, "big.yaml")])
  })

  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const report = (what: string, m: Measured) =>
    console.log(`${what}: exit ${m.code} in ${m.millis.toFixed(0)} ms, VmHWM ${m.peakMiB.toFixed(0)} MiB`)

  it("validate -f on a directory with two link loops ends, validating each file once and naming the loops", async () => {
    const result = await meshctl(["validate", "-f", join(dir, "tree")], dir)
    report("validate loop dir", result)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(`"${join(dir, "tree", "sub", "se.yaml")}" is valid\n`)
    expect(result.stderr).toContain(`Warning: ${join(dir, "tree", "loop")}: symbolic link loops back to`)
    expect(result.stderr).toContain(`Warning: ${join(dir, "tree", "sub", "up")}: symbolic link loops back to`)
    expect(result.stderr).toContain(`Warning: ${join(dir, "tree", "pipe.yaml")}: skipped: a FIFO (named pipe)`)
    expect(result.millis).toBeLessThan(10_000)
  }, 40_000)

  it("analyze on the same directory ends at once instead of after its 30 s timeout", async () => {
    const result = await meshctl(["analyze", join(dir, "tree")], dir)
    report("analyze loop dir", result)
    expect(result.stderr).toContain("symbolic link loops back to")
    expect(result.stderr).not.toContain("timeout")
    expect(result.millis).toBeLessThan(10_000)
  }, 40_000)

  it("validate -f /dev/zero stops at the size limit with a clear error", async () => {
    const result = await meshctl(["validate", "-f", "/dev/zero"], dir)
    report("validate /dev/zero", result)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("/dev/zero: cannot read: input is over the limit of 4 MiB (4194304 bytes)")
    expect(result.millis).toBeLessThan(10_000)
    expect(result.peakMiB).toBeLessThan(300)
  }, 40_000)

  it("validate -f and orch-inject -f on a 100 MB file refuse it from its size", async () => {
    for (const args of [
      ["validate", "-f", join(dir, "big.yaml")],
      ["orch-inject", "-f", join(dir, "big.yaml")],
    ]) {
      const result = await meshctl(args, dir)
      report(`${args[0]} 100 MB`, result)
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(join(dir, "big.yaml"))
      expect(result.stderr).toContain("file is 100 MiB (104857600 bytes), over the limit of 4 MiB for one input file")
      expect(result.millis).toBeLessThan(10_000)
      expect(result.peakMiB).toBeLessThan(300)
    }
  }, 60_000)

  it("validate -f on the nested file names the document and the limit, quickly and in bounded memory", async () => {
    const result = await meshctl(["validate", "-f", join(dir, "nested.yaml")], dir)
    report("validate nested", result)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `${join(dir, "nested.yaml")} document 0: YAML nested more than 100 levels deep (collections inside collections), over the limit of 100`,
    )
    expect(result.millis).toBeLessThan(10_000)
    expect(result.peakMiB).toBeLessThan(300)
  }, 40_000)
})
