/** Ports for tests that need a fixed address before they start a server. */
import { createServer, type Server } from "node:net"

const listen = (): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => resolve(server))
  })

const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()))

/** A port that was free a moment ago on 127.0.0.1. */
export const freePort = async (): Promise<number> => (await freePorts(1))[0]!

/**
 * `count` distinct ports that were free a moment ago on 127.0.0.1. All are held open until the
 * last one is bound: ports taken one after another can repeat, since the kernel may hand a port
 * just released straight back out.
 */
export const freePorts = async (count: number): Promise<Array<number>> => {
  const servers: Array<Server> = []
  for (let i = 0; i < count; i++) servers.push(await listen())
  const ports = servers.map((server) => (server.address() as { port: number }).port)
  await Promise.all(servers.map(close))
  return ports
}
