/**
 * A TCP relay in front of a server whose open connections a test can cut at once (as a load
 * balancer or network blip would), without stopping the server: clients see their streams end and
 * reconnect through the relay, which goes on accepting.
 */
import { createConnection, createServer, type Socket } from "node:net"

export interface CutProxy {
  readonly port: number
  /** Destroys every relayed connection (both sides); returns how many there were. */
  readonly cut: () => number
  readonly close: () => Promise<void>
}

export const startCutProxy = (targetPort: number, targetHost = "127.0.0.1"): Promise<CutProxy> =>
  new Promise((resolve, reject) => {
    const pairs = new Set<readonly [Socket, Socket]>()
    const server = createServer((client) => {
      const upstream = createConnection({ port: targetPort, host: targetHost })
      const pair = [client, upstream] as const
      pairs.add(pair)
      const end = () => {
        pairs.delete(pair)
        client.destroy()
        upstream.destroy()
      }
      client.on("error", end).on("close", end)
      upstream.on("error", end).on("close", end)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (address === null || typeof address === "string") return reject(new Error("no port"))
      resolve({
        port: address.port,
        cut: () => {
          const n = pairs.size
          for (const [a, b] of [...pairs]) {
            a.destroy()
            b.destroy()
          }
          pairs.clear()
          return n
        },
        close: () =>
          new Promise((done) => {
            for (const [a, b] of pairs) {
              a.destroy()
              b.destroy()
            }
            server.close(() => done())
          }),
      })
    })
  })
