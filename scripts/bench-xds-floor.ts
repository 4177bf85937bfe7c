/**
 * The transport floor for `bench-xds`: a bare @grpc/grpc-js server with the same ADS service
 * definition, whose responses are pre-serialized DiscoveryResponse / DeltaDiscoveryResponse
 * bytes (the response serializer is the identity), written as is. No push context, no
 * generators, no cache, no protocol state: what is left of a push is gRPC and HTTP/2 writing
 * the same bytes to the same streams. Imported by bench-xds.ts (running this file does nothing).
 */
import * as grpc from "@grpc/grpc-js"

export interface FloorResponses {
  /** The pre-serialized answer to a client's first request for a type. */
  readonly initial: (client: number, typeUrl: string) => Buffer | undefined
  /** The pre-serialized push of the change to an affected client. */
  readonly change: (client: number) => Buffer | undefined
}

export interface FloorServer {
  readonly port: number
  /** Writes the change to the given clients' streams; resolves when every write was handed to HTTP/2. */
  readonly push: (clients: ReadonlyArray<number>) => Promise<void>
  readonly close: () => Promise<void>
}

interface AnyRequest {
  readonly node?: { readonly id?: string } | null
  readonly type_url?: string
  readonly response_nonce?: string
  readonly resource_names_subscribe?: ReadonlyArray<string>
}

const clientOf = (request: AnyRequest): number | undefined => {
  const match = /^sidecar~[^~]*~bench-(\d+)\./.exec(request.node?.id ?? "")
  return match === null ? undefined : Number(match[1])
}

/** Binds the floor server on 127.0.0.1 (a free port). */
export const startFloorServer = async (
  definition: grpc.ServiceDefinition,
  responses: FloorResponses,
): Promise<FloorServer> => {
  // The same service definition; only the response serializer differs (bytes pass through).
  const identity: grpc.ServiceDefinition = Object.fromEntries(
    Object.entries(definition).map(([name, method]) => [
      name,
      { ...method, responseSerialize: (bytes: Buffer) => bytes },
    ]),
  )

  const streams = new Map<number, grpc.ServerDuplexStream<AnyRequest, Buffer>>()
  const serve = (call: grpc.ServerDuplexStream<AnyRequest, Buffer>) => {
    let client: number | undefined
    const answered = new Set<string>()
    call.on("data", (request: AnyRequest) => {
      client ??= clientOf(request)
      if (client === undefined) return
      streams.set(client, call)
      const typeUrl = request.type_url ?? ""
      // The first request of each type is a subscription; everything later is an ACK.
      if (answered.has(typeUrl)) return
      answered.add(typeUrl)
      const bytes = responses.initial(client, typeUrl)
      if (bytes !== undefined) call.write(bytes)
    })
    const forget = () => {
      if (client !== undefined && streams.get(client) === call) streams.delete(client)
    }
    call.on("error", forget)
    call.on("cancelled", forget)
    call.on("end", () => {
      forget()
      call.end()
    })
  }
  const server = new grpc.Server()
  server.addService(identity, { StreamAggregatedResources: serve, DeltaAggregatedResources: serve })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    ),
  )
  return {
    port,
    push: (clients) =>
      Promise.all(
        clients.map(
          (client) =>
            new Promise<void>((resolve) => {
              const call = streams.get(client)
              const bytes = responses.change(client)
              if (call === undefined || bytes === undefined) return resolve()
              call.write(bytes, () => resolve())
            }),
        ),
      ).then(() => undefined),
    close: () =>
      new Promise<void>((resolve) => {
        for (const call of streams.values()) call.end()
        server.tryShutdown(() => resolve())
        setTimeout(() => {
          server.forceShutdown()
          resolve()
        }, 2000).unref()
      }),
  }
}
