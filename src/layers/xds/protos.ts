/**
 * The xDS protos (the `@grpc/grpc-js-xds` package's `deps/` folders: envoy-api, xds, googleapis,
 * protoc-gen-validate, and the project's NDS table): the ADS service definition for servers and
 * clients, and the codec that encodes resource objects to bytes and back. The Root comes from
 * proto-root.ts (the build's descriptor, or parsed); the definitions are made here for the ADS
 * methods only, as @grpc/proto-loader would make them: proto-loader builds a definition and a
 * file descriptor for every message of the tree, which cost more CPU at start than the parse.
 */
import type { ServiceDefinition } from "@grpc/grpc-js"
import type * as protoLoader from "@grpc/proto-loader"
import { Effect, Layer } from "effect"
import protobuf from "protobufjs"
import { WORKLOAD_API_PROTO_FILES } from "../../services/ambient/proto-files.js"
import { XdsCodec, type XdsCodecShape } from "../../services/xds/cache/resource-cache.js"
import type { ProtoObject } from "../../services/xds/cache/resource-spec.js"
import { sharingResourceEncoding } from "../../services/xds/cache/response-encoding.js"
import { XDS_API_PROTO_FILES } from "../../services/xds/protocol/proto-files.js"
import { NDS_PROTO_FILE } from "../../services/xds/proxygen/nds/proto-file.js"
import { deserializerOf, lazyType, methodDefinitions, once, serializerOf } from "../grpc/proto-methods.js"
import { loadXdsRoot, xdsProtoIncludeDirs } from "./proto-root.js"

export { xdsProtoIncludeDirs }

/** The protos the ADS server and its codec load (their imports come along). */
export const xdsProtoFiles = [
  ...XDS_API_PROTO_FILES,
  // NDS resources: the agent's DNS name table (proto/).
  NDS_PROTO_FILE,
  // The node proxy's workload API and L4 authorizations (proto/).
  ...WORKLOAD_API_PROTO_FILES,
]

/** How the xDS protos are loaded (field names as in the protos, 64-bit numbers as strings). */
export const xdsProtoLoaderOptions = (): protoLoader.Options => ({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [...xdsProtoIncludeDirs()],
})

/** How messages are decoded (proto-loader's options above); `json` also expands Any values. */
const DECODE_OPTIONS: protobuf.IConversionOptions = { longs: String, enums: String, defaults: false, oneofs: true }
const DECODE_JSON_OPTIONS: protobuf.IConversionOptions = { ...DECODE_OPTIONS, json: true }

/**
 * The methods of the AggregatedDiscoveryService (envoy/service/discovery/v3/ads.proto), both
 * bidirectional streams. Written out so that a server or client can be set up before the Root
 * exists (test/layers/xds/protos.test.ts checks them against the Root).
 */
export const ADS_SERVICE = "envoy.service.discovery.v3.AggregatedDiscoveryService"
export const ADS_METHODS = {
  StreamAggregatedResources: {
    request: "envoy.service.discovery.v3.DiscoveryRequest",
    response: "envoy.service.discovery.v3.DiscoveryResponse",
    requestStream: true,
    responseStream: true,
  },
  DeltaAggregatedResources: {
    request: "envoy.service.discovery.v3.DeltaDiscoveryRequest",
    response: "envoy.service.discovery.v3.DeltaDiscoveryResponse",
    requestStream: true,
    responseStream: true,
  },
} as const

export interface XdsProtos {
  /** AggregatedDiscoveryService: StreamAggregatedResources and DeltaAggregatedResources. */
  readonly ads: ServiceDefinition
  readonly codec: XdsCodecShape
  /**
   * Encodes, for each protocol's responses, resource entries they will carry: SotW `Any`
   * messages and delta `Resource` entries (see `SharingEncoder.encodeAhead`).
   */
  readonly encodeAhead: {
    readonly sotw: (resources: ReadonlyArray<object>) => void
    readonly delta: (resources: ReadonlyArray<object>) => void
  }
  /** About how many bytes each protocol's response will be once serialized (`SharingEncoder.size`). */
  readonly responseSize: {
    readonly sotw: (response: object) => number
    readonly delta: (response: object) => number
  }
}

let loaded: XdsProtos | undefined

/** Reads a protobuf varint at `offset`: [value, next offset]. */
const varint = (bytes: Uint8Array, offset: number): [number, number] => {
  let value = 0
  let shift = 0
  let i = offset
  for (;;) {
    const b = bytes[i++]!
    value += (b & 0x7f) * 2 ** shift
    if ((b & 0x80) === 0) return [value, i]
    shift += 7
  }
}

/**
 * Loads (once per process) the ADS definition and the codec. The Root behind them is built at
 * their first use, not here: nothing is encoded or decoded before the first proxy connects, and a
 * start (spawn → /ready) is shorter by the Root's load (about a tenth of a second of CPU).
 */
export const loadXdsProtos = (): XdsProtos => {
  if (loaded !== undefined) return loaded
  const root = once(() => loadXdsRoot(xdsProtoFiles))
  const typeOf = (fullName: string) => lazyType(root, fullName)
  const methods = methodDefinitions(ADS_SERVICE, ADS_METHODS, typeOf, DECODE_OPTIONS)
  const sotw = methods.StreamAggregatedResources
  // Responses share the encoding of their resources across connections (response-encoding.ts).
  const encoders = new Map(
    Object.entries(methods).map(([name, method]) => [name, sharingResourceEncoding(method.responseSerialize)]),
  )
  const ads = Object.fromEntries(
    Object.entries(methods).map(([name, method]) => [
      name,
      { ...method, responseSerialize: encoders.get(name)!.serialize },
    ]),
  ) as unknown as ServiceDefinition
  const encodeAhead = {
    sotw: encoders.get("StreamAggregatedResources")!.encodeAhead,
    delta: encoders.get("DeltaAggregatedResources")!.encodeAhead,
  }
  const responseSize = {
    sotw: encoders.get("StreamAggregatedResources")!.size,
    delta: encoders.get("DeltaAggregatedResources")!.size,
  }
  /**
   * Each resource type's own serializer: going through the Any wrapper looks the type up by
   * name in the whole xDS tree on every encode, most of the cost of encoding a small resource
   * such as a ClusterLoadAssignment.
   */
  const serializers = new Map<string, ((value: object) => Buffer) | undefined>()
  const ownSerializer = (typeUrl: string) => {
    if (!serializers.has(typeUrl)) {
      // Absolute (leading dot): a relative name would also match a nested type of that name.
      const type = root().lookup(`.${typeUrl.slice(typeUrl.lastIndexOf("/") + 1)}`)
      serializers.set(typeUrl, type instanceof protobuf.Type ? serializerOf(() => type) : undefined)
    }
    return serializers.get(typeUrl)
  }
  // Decoding (debug pages, tests) expands Any values (the JSON flavour of toObject).
  const decodeResponse = deserializerOf(typeOf(ADS_METHODS.StreamAggregatedResources.response), DECODE_JSON_OPTIONS)

  const encode = (typeUrl: string, resource: ProtoObject): Uint8Array => {
    const own = ownSerializer(typeUrl)
    if (own !== undefined) return own(resource)
    // Any other type goes through the Any wrapper of a one-resource DiscoveryResponse, whose
    // bytes are field 2 (resources: Any) = { 1: type_url, 2: value }: the value is sliced out.
    const buf = sotw.responseSerialize({ resources: [{ ...resource, "@type": typeUrl }] })
    let offset = 0
    while (offset < buf.length) {
      const [tag, afterTag] = varint(buf, offset)
      const [length, start] = varint(buf, afterTag)
      if (tag >>> 3 === 2) {
        // inside Any
        let inner = start
        const end = start + length
        while (inner < end) {
          const [innerTag, afterInnerTag] = varint(buf, inner)
          const [innerLength, valueStart] = varint(buf, afterInnerTag)
          if (innerTag >>> 3 === 2) return buf.subarray(valueStart, valueStart + innerLength)
          inner = valueStart + innerLength
        }
        return new Uint8Array(0)
      }
      offset = start + length
    }
    throw new Error(`failed to encode ${typeUrl}`)
  }

  const decode = (typeUrl: string, bytes: Uint8Array): ProtoObject => {
    const buf = sotw.responseSerialize({ resources: [{ type_url: typeUrl, value: Buffer.from(bytes) }] })
    const decoded = decodeResponse(buf) as { resources?: ReadonlyArray<ProtoObject> }
    return decoded.resources?.[0] ?? {}
  }

  loaded = { ads, codec: { encode, decode }, encodeAhead, responseSize }
  return loaded
}

export const layer: Layer.Layer<XdsCodec> = Layer.effect(
  XdsCodec,
  Effect.sync(() => loadXdsProtos().codec),
)
