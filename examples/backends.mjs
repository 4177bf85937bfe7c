// The example mesh's backends: one small gRPC server per endpoint of the ServiceEntries in
// examples/mesh (reviews v1 and v2, ratings, frontend), on the address and port the mesh
// assigns it. Each answers `/demo.Echo/Echo` with its name (`reviews-v1`, ...) and the standard
// health service, so a proxyless client routed by `npm start` shows which backend it reached.
//
//   node examples/backends.mjs [configDir]     (default: examples/mesh; Ctrl-C stops them)
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { parseAllDocuments } from "yaml"
import { echoService, echoServiceAt } from "./echo-service.mjs"

const dir = process.argv[2] ?? join(import.meta.dirname, "mesh")

/** Every STATIC endpoint of every ServiceEntry under `dir`: its name, address and ports. */
const endpoints = readdirSync(dir)
  .filter((file) => /\.ya?ml$/.test(file))
  .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), "utf8")).map((doc) => doc.toJS()))
  .filter((resource) => resource?.kind === "ServiceEntry")
  .flatMap((entry) =>
    (entry.spec.endpoints ?? []).flatMap((endpoint) =>
      Object.values(endpoint.ports ?? {}).map((port) => ({
        name: `${entry.metadata.name}-${endpoint.labels?.version ?? "v1"}`,
        address: endpoint.address,
        port,
      })),
    ),
  )

// grpc.health.v1.Health/Check with hand-written protobuf: the answer is always SERVING (status 1).
const healthService = { Check: echoServiceAt("/grpc.health.v1.Health/Check").Echo }
const SERVING = Buffer.from([0x08, 0x01])

const servers = await Promise.all(
  endpoints.map(
    ({ name, address, port }) =>
      new Promise((resolve, reject) => {
        const server = new grpc.Server()
        server.addService(echoService, { Echo: (_call, callback) => callback(null, Buffer.from(name)) })
        server.addService(healthService, { Check: (_call, callback) => callback(null, SERVING) })
        const target = `${address.includes(":") ? `[${address}]` : address}:${port}`
        server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (error) => {
          if (error !== null) return reject(new Error(`${name} on ${target}: ${error.message}`))
          console.log(`${name} listening on ${target}`)
          resolve(server)
        })
      }),
  ),
).catch((error) => {
  console.error(`Error: ${error.message}`)
  process.exit(1)
})

const stop = () => {
  for (const server of servers) server.forceShutdown()
  process.exit(0)
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
