// The example's gRPC service, `/demo.Echo/Echo`: the request is ignored and the answer is the
// backend's name, both as raw bytes, so neither side needs a .proto file. The tests' Echo
// service is the same shape at another path (`echoServiceAt`).
import * as grpc from "@grpc/grpc-js"

const identity = (bytes) => bytes

/** A unary raw-bytes service whose one method, `Echo`, is served at `path`. */
export const echoServiceAt = (path) => ({
  Echo: {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
})

export const echoService = echoServiceAt("/demo.Echo/Echo")

export const EchoClient = grpc.makeGenericClientConstructor(echoService, "Echo")
