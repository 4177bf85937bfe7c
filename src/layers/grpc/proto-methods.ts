/**
 * gRPC method definitions made from protobufjs message types as @grpc/proto-loader makes them
 * (object → message → bytes and back, with proto-loader's conversion options), without the
 * file descriptors, and with each type looked up at the method's first call. So a server adds a
 * service before its protos are loaded: proto-loader builds a definition and a descriptor for
 * every message of the files and their imports, which costs a start more than the few methods
 * served (issue 38), and nothing is encoded before the first call.
 */
import type { MethodDefinition } from "@grpc/grpc-js"
import type protobuf from "protobufjs"

/** A method of a service: its message types (full names, without the leading dot) and streams. */
export interface MethodShape {
  readonly request: string
  readonly response: string
  readonly requestStream: boolean
  readonly responseStream: boolean
}

/** The shapes of a service's methods as its protos declare them (to check a written-out table against). */
export const methodShapesOf = (service: protobuf.Service): Record<string, MethodShape> =>
  Object.fromEntries(
    service.methodsArray.map((method) => {
      method.resolve()
      return [
        method.name,
        {
          request: method.resolvedRequestType!.fullName.slice(1),
          response: method.resolvedResponseType!.fullName.slice(1),
          requestStream: method.requestStream === true,
          responseStream: method.responseStream === true,
        },
      ]
    }),
  )

/** `make()` at the first call, the same value after. */
export const once = <A>(make: () => A): (() => A) => {
  let made: { readonly value: A } | undefined
  return () => {
    made ??= { value: make() }
    return made.value
  }
}

/** The message type of this full name, looked up (absolute: no nested type of the same name) at first call. */
export const lazyType = (root: () => protobuf.Root, fullName: string): (() => protobuf.Type) =>
  once(() => root().lookupType(`.${fullName}`))

/** proto-loader's serializer of a message type: object → message → bytes. */
export const serializerOf = (type: () => protobuf.Type) => (value: object) => {
  const t = type()
  if (Array.isArray(value)) throw new Error(`Failed to serialize message: expected a ${t.name}, got an array`)
  return t.encode(t.fromObject(value)).finish() as Buffer
}

/** proto-loader's deserializer of a message type: bytes → message → object, per `options`. */
export const deserializerOf = (type: () => protobuf.Type, options: protobuf.IConversionOptions) => (bytes: Buffer) => {
  const t = type()
  return t.toObject(t.decode(bytes), options)
}

export type ProtoMethodDefinition = MethodDefinition<object, object> & { readonly originalName: string }

/** The definitions of a service's methods; `typeOf` gives each message type (see `lazyType`). */
export const methodDefinitions = <M extends Record<string, MethodShape>>(
  service: string,
  methods: M,
  typeOf: (fullName: string) => () => protobuf.Type,
  options: protobuf.IConversionOptions,
): { readonly [K in keyof M]: ProtoMethodDefinition } => {
  const definition = (name: string, shape: MethodShape): ProtoMethodDefinition => {
    const request = typeOf(shape.request)
    const response = typeOf(shape.response)
    return {
      path: `/${service}/${name}`,
      requestStream: shape.requestStream,
      responseStream: shape.responseStream,
      requestSerialize: serializerOf(request),
      requestDeserialize: deserializerOf(request, options),
      responseSerialize: serializerOf(response),
      responseDeserialize: deserializerOf(response, options),
      originalName: name.charAt(0).toLowerCase() + name.slice(1),
    }
  }
  return Object.fromEntries(Object.entries(methods).map(([name, shape]) => [name, definition(name, shape)])) as {
    readonly [K in keyof M]: ProtoMethodDefinition
  }
}
