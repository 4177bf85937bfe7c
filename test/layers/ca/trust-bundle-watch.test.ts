/**
 * `WatchTrustBundle` on the real CA server with a real grpc-js client: a caller without
 * credentials is refused with UNAUTHENTICATED; an agent with a token gets the bundle now and again
 * when a key rotation publishes a new root, and its acknowledgements are what the CA counts.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { caClientConstructor } from "../../../src/layers/ca/proto.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { startTestCa, type TestCa } from "../../fixtures/agent/control-plane.js"

interface Bundle {
  readonly version: string
  readonly root_certs: ReadonlyArray<string>
}

let ca: TestCa

beforeAll(async () => {
  ca = await startTestCa()
}, 60_000)

afterAll(async () => {
  await ca?.close()
})

const open = (token?: string) => {
  const Client = caClientConstructor()
  const client = new Client(`127.0.0.1:${ca.caPort}`, grpc.credentials.createSsl(Buffer.from(ca.rootPem)), {
    "grpc.ssl_target_name_override": "meshd.mesh-system.svc",
    "grpc.default_authority": "meshd.mesh-system.svc",
  })
  const metadata = new grpc.Metadata()
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`)
  const call = (
    client as unknown as { WatchTrustBundle: (m: grpc.Metadata) => grpc.ClientDuplexStream<unknown, Bundle> }
  ).WatchTrustBundle(metadata)
  // The end of a cancelled stream is an "error" event; the outcome is read from "status".
  call.on("error", () => {})
  const received: Array<Bundle> = []
  const waiters: Array<() => void> = []
  call.on("data", (b: Bundle) => {
    received.push(b)
    for (const w of waiters.splice(0)) w()
  })
  const next = (n: number) =>
    new Promise<Bundle>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no bundle #${n} within 10 s`)), 10_000)
      const check = () => {
        if (received.length >= n) {
          clearTimeout(timer)
          resolve(received[n - 1]!)
        } else waiters.push(check)
      }
      check()
    })
  const status = () =>
    new Promise<grpc.StatusObject>((resolve) => {
      call.on("status", resolve)
    })
  return { call, next, status, close: () => client.close() }
}

const rotation = () => ca.runtime.runPromise(Effect.map(CertificateAuthority, (c) => c.keyRotation!))

/** Polls the CA's status until `done` holds (bounded). */
const statusUntil = async (done: (s: Awaited<ReturnType<typeof currentStatus>>) => boolean) => {
  const limit = Date.now() + 10_000
  for (;;) {
    const s = await currentStatus()
    if (done(s)) return s
    if (Date.now() > limit) throw new Error(`status never matched: ${JSON.stringify(s)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
const currentStatus = async () => ca.runtime.runPromise((await rotation()).status)

describe("WatchTrustBundle", () => {
  it("refuses a caller without credentials", async () => {
    const stream = open()
    const status = await stream.status()
    stream.close()
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED)
    expect(status.details).toMatch(/authentication failed/)
  })

  it("sends the bundle, counts the acknowledgement, and sends the two-root bundle of a key rotation", async () => {
    const stream = open(await ca.issuer.token({ sub: "system:serviceaccount:default:sleep" }))
    const first = await stream.next(1)
    expect(first.root_certs).toHaveLength(1)
    expect(first.root_certs[0]!.trim()).toBe(ca.rootPem.trim())
    const before = await statusUntil((s) => s.watchers.total === 1)
    expect(before.watchers.current).toBe(0)
    expect(before.watchers.lagging[0]!.identity).toBe("spiffe://cluster.local/ns/default/sa/sleep")
    stream.call.write({ version: first.version })
    await statusUntil((s) => s.watchers.current === 1)

    await ca.runtime.runPromise((await rotation()).rotate)
    const second = await stream.next(2)
    expect(second.root_certs).toHaveLength(2)
    expect(second.version).not.toBe(first.version)
    expect((await currentStatus()).watchers.current).toBe(0)
    stream.call.write({ version: second.version })
    await statusUntil((s) => s.watchers.current === 1 && s.bundle.version === second.version)

    stream.call.cancel()
    await statusUntil((s) => s.watchers.total === 0)
    stream.close()
  })
})
