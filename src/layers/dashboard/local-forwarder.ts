/**
 * LocalForwarder over node:net: one server per bound host, all on the same port (the first bind
 * picks it when `port` is 0). Each accepted socket is paired with a fresh connection to the
 * target; either side closing or failing closes the other. Closing the scope stops listening and
 * drops every open pair, so a stopped dashboard leaves nothing behind.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net"
import { Effect, Layer } from "effect"
import { type ForwardRequest, LocalForwarder } from "../../services/dashboard/local-forwarder.js"
import { type ListenError, listenError } from "../../services/net/listen-error.js"

const pipePair = (client: Socket, target: ForwardRequest["target"], open: Set<Socket>) => {
  const upstream = createConnection({ host: target.host, port: target.port })
  open.add(client)
  open.add(upstream)
  const closeBoth = () => {
    client.destroy()
    upstream.destroy()
    open.delete(client)
    open.delete(upstream)
  }
  client.on("error", closeBoth).on("close", closeBoth)
  upstream.on("error", closeBoth).on("close", closeBoth)
  client.pipe(upstream)
  upstream.pipe(client)
}

const listen = (host: string, port: number, request: ForwardRequest, open: Set<Socket>) =>
  Effect.async<Server, ListenError>((resume) => {
    const server = createServer((socket) => pipePair(socket, request.target, open))
    server.once("error", (error) => resume(Effect.fail(listenError("--address", { host, port }, error))))
    server.listen({ host, port, ipv6Only: host.includes(":") }, () => {
      resume(Effect.succeed(server))
    })
  })

/** Drops the open pairs first: a server only reports closed once its connections are gone. */
const close = (server: Server, open: Set<Socket>) =>
  Effect.async<void>((resume) => {
    for (const socket of open) socket.destroy()
    open.clear()
    server.close(() => {
      resume(Effect.void)
    })
  })

const forward = (request: ForwardRequest) =>
  Effect.gen(function* () {
    const open = new Set<Socket>()
    let port = request.port
    const bound: Array<string> = []
    let firstError: ListenError | undefined
    for (const host of request.hosts) {
      const result = yield* Effect.either(
        Effect.acquireRelease(listen(host, port, request, open), (server) => close(server, open)),
      )
      if (result._tag === "Left") {
        firstError ??= result.left
        continue
      }
      bound.push(host)
      const address = result.right.address()
      if (port === 0 && typeof address === "object" && address !== null) port = address.port
    }
    if (bound.length === 0 && firstError !== undefined) return yield* firstError
    return { port, hosts: bound }
  })

export const localForwarderLayer = Layer.succeed(LocalForwarder, { forward })
