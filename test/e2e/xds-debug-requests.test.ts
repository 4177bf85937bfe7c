/**
 * Attacks (issue 34, findings 6 and 9) on the debug type URLs (`mesh.io/debug/<page>`) of the
 * built `mesh-discovery`'s plaintext xDS port:
 * - finding 6: a caller on another host read every debug page (configz, syncz, config dumps)
 *   over the plaintext port with no identity at all. It is now refused with PERMISSION_DENIED
 *   naming the rule, while a loopback caller (and meshctl `--plaintext` on the same host) is
 *   still answered;
 * - finding 9: a debug request with a 1 MB path or a 3 MB query got no gRPC status (its refusal
 *   repeated the path, too large for a trailer), so the caller waited out its deadline. It is
 *   now refused with INVALID_ARGUMENT at once.
 *
 * "Another host" is this machine's own non-loopback address: the server then sees that address
 * as the peer, as it would a remote caller's.
 */

import { rmSync } from "node:fs"
import * as http2 from "node:http2"
import { networkInterfaces } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, run, startDaemon } from "../support/processes.js"
import { openRawStream, type RawOutcome } from "../support/raw-ads.js"

const MB = 1024 * 1024
const NODE = { id: "sidecar~0.0.0.0~meshctl-test.mesh-system~mesh-system.svc.cluster.local" }
/** gRPC status codes as numbers. */
const INVALID_ARGUMENT = 3
const PERMISSION_DENIED = 7
/** A refusal comes at once; the deadline only tells a hang from a late answer. */
const ANSWER_WITHIN_MS = 5000

/** This machine's first non-loopback IPv4 address, as another host would reach the server. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address

let dir = ""
let daemon: Daemon
let port = 0

interface Asked extends RawOutcome {
  /** Milliseconds until the stream closed; undefined when it did not within `ANSWER_WITHIN_MS`. */
  readonly ms: number | undefined
  readonly body: string
}

/** One debug request from `host`; the stream's outcome, or a timeout. */
const ask = async (host: string, request: object): Promise<Asked> => {
  const session = http2.connect(`http://${host}:${port}`)
  session.on("error", () => undefined)
  const raw = openRawStream(session, "StreamAggregatedResources")
  const chunks: Array<Buffer> = []
  raw.stream.on("data", (chunk: Buffer) => chunks.push(chunk))
  const started = Date.now()
  void raw.send(request)
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ANSWER_WITHIN_MS)
  })
  // An answered request leaves its stream open (the answer is one-shot): the first message is it.
  const answered = new Promise<"answered">((resolve) =>
    raw.stream.once("data", () => setTimeout(() => resolve("answered"), 200)),
  )
  const outcome = await Promise.race([raw.closed, timedOut, answered])
  clearTimeout(timer)
  session.destroy()
  const body = Buffer.concat(chunks).toString("latin1")
  if (outcome === undefined)
    return { grpcStatus: undefined, message: "", bytes: body.length, rstCode: 0, ms: undefined, body }
  if (outcome === "answered")
    return { grpcStatus: 0, message: "", bytes: body.length, rstCode: 0, ms: Date.now() - started, body }
  return { ...outcome, ms: Date.now() - started, body }
}

beforeAll(async () => {
  dir = exampleMeshDir("xds-debug-requests-")
  daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh"), { "--grpcAddr": "0.0.0.0:0" }), {}, dir)
  port = Number((await daemon.waitFor(/ADS server listening on [\d.:[\]]+:(\d+)/, 30_000))[1])
  await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
  // Debug requests are answered once the debug interface is up, a moment after xDS.
  for (const limit = Date.now() + 20_000; ; ) {
    const answer = await ask("127.0.0.1", { node: NODE, type_url: "mesh.io/debug/syncz" })
    if (answer.grpcStatus === 0) break
    if (Date.now() > limit) throw new Error(`debug requests are never answered: ${JSON.stringify(answer)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}, 60_000)

afterAll(async () => {
  if (daemon !== undefined) await daemon.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("debug requests on the plaintext xDS port (finding 6)", () => {
  it("are answered to a loopback caller", async () => {
    const answer = await ask("127.0.0.1", { node: NODE, type_url: "mesh.io/debug/syncz" })
    expect(answer.grpcStatus, JSON.stringify(answer)).toBe(0)
    expect(answer.body).toContain("mesh.io/debug/syncz")
  })

  it("are refused with PERMISSION_DENIED to a caller on another host", async (context) => {
    if (externalAddress === undefined) {
      if (process.env.CI === "true") throw new Error("this machine has no non-loopback IPv4 address to call from")
      context.skip()
      return
    }
    for (const page of ["configz", "syncz", "config_dump"]) {
      const refused = await ask(externalAddress, { node: NODE, type_url: `mesh.io/debug/${page}` })
      expect(refused.grpcStatus, `${page}: ${JSON.stringify({ ...refused, body: refused.body.slice(0, 300) })}`).toBe(
        PERMISSION_DENIED,
      )
      expect(refused.message).toMatch(/plaintext xDS port.*loopback/)
      expect(refused.body).not.toContain("mesh.io/debug")
    }
    // The bare prefix with the page as the resource name is the same request.
    const bare = await ask(externalAddress, { node: NODE, type_url: "istio.io/debug", resource_names: ["syncz"] })
    expect(bare.grpcStatus).toBe(PERMISSION_DENIED)
  })

  it("meshctl --plaintext still reads them on the same host", async () => {
    const result = await run("meshctl", ["ps", "--xds-address", `127.0.0.1:${port}`, "--plaintext", "-o", "json"])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual(expect.any(Array))
  })
})

describe("oversized debug requests (finding 9)", () => {
  const cases: Record<string, object> = {
    "a 1 MB path in the type URL": { node: NODE, type_url: `mesh.io/debug/${"p".repeat(MB)}` },
    "a 3 MB query in the type URL": { node: NODE, type_url: `mesh.io/debug/syncz?q=${"q".repeat(3 * MB)}` },
    "a 3 MB query as the resource name": {
      node: NODE,
      type_url: "mesh.io/debug/config_dump",
      resource_names: [`proxyID=${"x".repeat(3 * MB)}`],
    },
    "a 1 MB path as the resource name": { node: NODE, type_url: "mesh.io/debug", resource_names: ["p".repeat(MB)] },
  }
  for (const [name, request] of Object.entries(cases))
    it(`${name} is refused with INVALID_ARGUMENT at once`, async () => {
      const refused = await ask("127.0.0.1", request)
      expect(refused.ms, `no status within ${ANSWER_WITHIN_MS} ms`).toBeDefined()
      expect(refused.grpcStatus, JSON.stringify({ ...refused, body: refused.body.slice(0, 200) })).toBe(
        INVALID_ARGUMENT,
      )
      expect(refused.message.length).toBeLessThan(1024)
      expect(refused.message).toMatch(/debug|name/)
    })

  it("the server still answers a proper debug request afterwards", async () => {
    const answer = await ask("127.0.0.1", { node: NODE, type_url: "mesh.io/debug/syncz" })
    expect(answer.grpcStatus).toBe(0)
  })
})
