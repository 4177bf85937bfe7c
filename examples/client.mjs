// A proxyless gRPC client of the example mesh: @grpc/grpc-js-xds gets its routes, clusters and
// endpoints from `npm start` (ADS on 127.0.0.1:15010 unless GRPC_XDS_BOOTSTRAP or
// GRPC_XDS_BOOTSTRAP_CONFIG says otherwise), then calls the Echo service of
// examples/backends.mjs through them and prints which backend answered each call.
//
//   node examples/client.mjs [target] [calls]   (default: reviews.demo.svc.cluster.local:9080, 10)
import * as grpc from "@grpc/grpc-js"
import * as xds from "@grpc/grpc-js-xds"
import { EchoClient } from "./echo-service.mjs"

const target = process.argv[2] ?? "reviews.demo.svc.cluster.local:9080"
const calls = Number(process.argv[3] ?? 10)
if (process.env.GRPC_XDS_BOOTSTRAP === undefined && process.env.GRPC_XDS_BOOTSTRAP_CONFIG === undefined) {
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [
      { server_uri: "127.0.0.1:15010", channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] },
    ],
    node: { id: "sidecar~127.0.0.1~client.demo~demo.svc.cluster.local", locality: {}, metadata: { GENERATOR: "grpc" } },
  })
}

xds.register()
const client = new EchoClient(`xds:///${target}`, grpc.credentials.createInsecure())
let failed = 0
for (let i = 0; i < calls; i++) {
  const answer = await new Promise((resolve) =>
    client.Echo(Buffer.alloc(0), { deadline: Date.now() + 10_000 }, (error, response) =>
      resolve(error ? `error: ${error.details || error.message}` : response.toString()),
    ),
  )
  if (answer.startsWith("error")) failed++
  console.log(`${target} -> ${answer}`)
}
client.close()
process.exit(failed === 0 ? 0 : 1)
