/**
 * A scripted discovery server for the xDS proxy's tests: it records every ADS stream the agent
 * opens and the requests on it (decoded), and sends whatever responses a test writes, so a test
 * controls exactly what comes down and sees exactly what the agent sends up.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"

// biome-ignore lint/suspicious/noExplicitAny: requests are decoded proto objects, read loosely
export type Message = any

export interface UpstreamStream {
  readonly mode: "sotw" | "delta"
  readonly requests: Array<Message>
  readonly send: (response: object) => void
  /** Ends the stream with UNAVAILABLE (a restart): the agent reconnects. */
  readonly drop: () => void
}

export const fakeUpstream = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly server: grpc.Server; readonly streams: Array<UpstreamStream> }>(
    (resume) => {
      const streams: Array<UpstreamStream> = []
      const handler = (mode: "sotw" | "delta") => (call: grpc.ServerDuplexStream<object, object>) => {
        const requests: Array<Message> = []
        call.on("data", (request: Message) => requests.push(request))
        call.on("error", () => undefined)
        streams.push({
          mode,
          requests,
          send: (response) => call.write(response),
          drop: () => call.emit("error", { code: grpc.status.UNAVAILABLE, details: "restarting" }),
        })
      }
      const server = new grpc.Server()
      server.addService(loadXdsProtos().ads, {
        StreamAggregatedResources: handler("sotw"),
        DeltaAggregatedResources: handler("delta"),
      })
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) => {
        if (error) resume(Effect.die(error))
        else resume(Effect.succeed({ port, server, streams }))
      })
    },
  ),
  ({ server }) => Effect.sync(() => server.forceShutdown()),
)
