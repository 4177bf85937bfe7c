import type { AddressInfo } from "node:net"
import { connect, createServer, type Server } from "node:net"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { localForwarderLayer } from "../../../src/layers/dashboard/local-forwarder.js"
import { LocalForwarder } from "../../../src/services/dashboard/local-forwarder.js"

let upstream: Server
let upstreamPort: number

beforeAll(async () => {
  // Answers each line with the same line upper-cased, so a reply proves the pipe both ways.
  upstream = createServer((socket) => socket.on("data", (data) => socket.write(data.toString().toUpperCase())))
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
  upstreamPort = (upstream.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())))

const exchange = (host: string, port: number, text: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect({ host, port }, () => socket.write(text))
    socket.once("data", (data) => {
      socket.destroy()
      resolve(data.toString())
    })
    socket.once("error", reject)
  })

const open = async (hosts: ReadonlyArray<string>, port = 0) => {
  const scope = Effect.runSync(Scope.make())
  const forwarding = await Effect.runPromise(
    Effect.flatMap(LocalForwarder, (f) =>
      f.forward({ hosts, port, target: { host: "127.0.0.1", port: upstreamPort } }),
    ).pipe(Effect.provide(localForwarderLayer), Scope.extend(scope)),
  )
  return { forwarding, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

describe("LocalForwarder", () => {
  it("pipes connections to the target until the scope closes", async () => {
    const { forwarding, close } = await open(["127.0.0.1"])
    expect(forwarding.port).toBeGreaterThan(0)
    expect(await exchange("127.0.0.1", forwarding.port, "hello")).toBe("HELLO")
    await close()
    await expect(exchange("127.0.0.1", forwarding.port, "again")).rejects.toThrow(/ECONNREFUSED/)
  })

  it("drops open connections when the scope closes instead of waiting for them", async () => {
    const { forwarding, close } = await open(["127.0.0.1"])
    const socket = connect({ host: "127.0.0.1", port: forwarding.port })
    await new Promise((resolve) => socket.once("connect", resolve))
    const closed = new Promise((resolve) => socket.once("close", resolve))
    socket.on("error", () => {})
    await close()
    await closed
  })

  it("binds what it can of localhost's two loopbacks on one port", async () => {
    const { forwarding, close } = await open(["127.0.0.1", "::1"])
    expect(forwarding.hosts).toContain("127.0.0.1")
    for (const host of forwarding.hosts) expect(await exchange(host, forwarding.port, "x")).toBe("X")
    await close()
  })

  it("fails only when no host binds, naming the address", async () => {
    const { forwarding, close } = await open(["127.0.0.1"])
    // The port is taken on 127.0.0.1; a second forwarder there cannot bind anything.
    const exit = await Effect.runPromiseExit(
      Effect.scoped(
        Effect.flatMap(LocalForwarder, (f) =>
          f.forward({ hosts: ["127.0.0.1"], port: forwarding.port, target: { host: "127.0.0.1", port: upstreamPort } }),
        ),
      ).pipe(Effect.provide(localForwarderLayer)),
    )
    expect(Exit.isFailure(exit) && String(exit.cause)).toContain(
      `--address 127.0.0.1:${forwarding.port}: address already in use`,
    )
    await close()
  })
})
