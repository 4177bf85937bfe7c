/**
 * Encoding of the node proxy protocol's messages with protobufjs from the project's own
 * proto/mesh/workload/zds/zds.proto (field numbers are the reference's, so the bytes are what
 * its node proxy reads).
 */
import { join } from "node:path"
import { Effect, Either } from "effect"
import protobuf from "protobufjs"
import {
  type WorkloadAck,
  type WorkloadRequest,
  ZDS_PACKAGE,
  ZDS_PROTO_FILE,
  ZdsDecodeError,
} from "../../services/cni/node-proxy-protocol.js"
import { protoRoot } from "../ca/proto.js"

export interface ZdsCodec {
  readonly encodeRequest: (request: WorkloadRequest) => Uint8Array
  /** The version the node proxy's hello names. */
  readonly decodeHello: (bytes: Uint8Array) => Either.Either<number, ZdsDecodeError>
  readonly decodeResponse: (bytes: Uint8Array) => Either.Either<WorkloadAck, ZdsDecodeError>
  /** For stand-ins and tests: the other direction. */
  readonly encodeHello: (version: number) => Uint8Array
  readonly encodeAck: (error: string) => Uint8Array
  readonly decodeRequest: (bytes: Uint8Array) => Either.Either<WorkloadRequest, ZdsDecodeError>
}

const decoding = <A>(what: string, run: () => A): Either.Either<A, ZdsDecodeError> => {
  try {
    return Either.right(run())
  } catch (error) {
    return Either.left(new ZdsDecodeError({ message: `${what}: ${(error as Error).message}` }))
  }
}

/** Loads the .proto once per codec (the codec belongs to the server that made it). */
export const makeZdsCodec = (root = protoRoot()): Effect.Effect<ZdsCodec, ZdsDecodeError> =>
  Effect.try({
    try: () => {
      const types = new protobuf.Root().loadSync(join(root, ZDS_PROTO_FILE), { keepCase: true })
      const type = (name: string) => types.lookupType(`${ZDS_PACKAGE}.${name}`)
      const hello = type("ZdsHello")
      const request = type("WorkloadRequest")
      const response = type("WorkloadResponse")
      const toObject = { oneofs: true, defaults: true, longs: Number, enums: Number } as const
      const codec: ZdsCodec = {
        encodeRequest: (r) => {
          const payload =
            r._tag === "Add"
              ? {
                  add: {
                    uid: r.uid,
                    workload_info: {
                      name: r.workload.name,
                      namespace: r.workload.namespace,
                      service_account: r.workload.serviceAccount,
                    },
                  },
                }
              : r._tag === "Keep"
                ? { keep: { uid: r.uid } }
                : r._tag === "Del"
                  ? { del: { uid: r.uid } }
                  : { snapshot_sent: {} }
          return request.encode(request.fromObject(payload)).finish()
        },
        decodeHello: (bytes) =>
          decoding("hello", () =>
            Number((hello.toObject(hello.decode(bytes), toObject) as { version: number }).version),
          ),
        decodeResponse: (bytes) =>
          decoding("response", () => {
            const object = response.toObject(response.decode(bytes), toObject) as {
              payload?: string
              ack?: { error?: string }
            }
            if (object.payload !== "ack") throw new Error("not an acknowledgement")
            return { error: object.ack?.error ?? "" }
          }),
        encodeHello: (version) => hello.encode(hello.fromObject({ version })).finish(),
        encodeAck: (error) => response.encode(response.fromObject({ ack: { error } })).finish(),
        decodeRequest: (bytes) =>
          decoding("request", () => {
            const o = request.toObject(request.decode(bytes), toObject) as {
              payload?: string
              add?: { uid: string; workload_info?: { name: string; namespace: string; service_account: string } }
              keep?: { uid: string }
              del?: { uid: string }
            }
            switch (o.payload) {
              case "add":
                return {
                  _tag: "Add",
                  uid: o.add!.uid,
                  workload: {
                    name: o.add!.workload_info?.name ?? "",
                    namespace: o.add!.workload_info?.namespace ?? "",
                    serviceAccount: o.add!.workload_info?.service_account ?? "",
                  },
                } satisfies WorkloadRequest
              case "keep":
                return { _tag: "Keep", uid: o.keep!.uid } satisfies WorkloadRequest
              case "del":
                return { _tag: "Del", uid: o.del!.uid } satisfies WorkloadRequest
              case "snapshot_sent":
                return { _tag: "SnapshotSent" } satisfies WorkloadRequest
              default:
                throw new Error("no payload")
            }
          }),
      }
      return codec
    },
    catch: (error) => new ZdsDecodeError({ message: `cannot load ${ZDS_PROTO_FILE}: ${(error as Error).message}` }),
  })
