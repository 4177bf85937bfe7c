/**
 * The xDS protos, loaded at run time from the `@grpc/grpc-js-xds` package's `deps/` folders
 * (envoy-api, xds, googleapis, protoc-gen-validate): the ADS service definition for servers and
 * clients, and the codec that encodes resource objects to bytes and back.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { ServiceDefinition } from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { Effect, Layer } from "effect"
import { XdsCodec, type XdsCodecShape } from "../../services/xds/cache/resource-cache.js"
import type { ProtoObject } from "../../services/xds/cache/resource-spec.js"
import { sharingResourceEncoding } from "../../services/xds/cache/response-encoding.js"
import { XDS_API_PROTO_FILES } from "../../services/xds/protocol/proto-files.js"
import { NDS_PROTO_FILE } from "../../services/xds/proxygen/nds/proto-file.js"
import { protoRoot } from "../ca/proto.js"

/** The protos the ADS server and its codec load (their imports come along). */
export const xdsProtoFiles = [
  ...XDS_API_PROTO_FILES,
  // NDS resources: the agent's DNS name table (proto/).
  NDS_PROTO_FILE,
]

export const xdsProtoIncludeDirs = (): ReadonlyArray<string> => {
  const root = dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json"))
  return [
    ...["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((d) => join(root, "deps", d)),
    // The project's own protos (the NDS name table), next to src/ and dist/ alike.
    protoRoot(),
  ]
}

/** How the xDS protos are loaded (field names as in the protos, 64-bit numbers as strings). */
export const xdsProtoLoaderOptions = (): protoLoader.Options => ({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [...xdsProtoIncludeDirs()],
})

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

const ADS = "envoy.service.discovery.v3.AggregatedDiscoveryService"

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

/** Loads (once per process) the ADS definition and the codec. */
export const loadXdsProtos = (): XdsProtos => {
  if (loaded !== undefined) return loaded
  const wire = protoLoader.loadSync(xdsProtoFiles, xdsProtoLoaderOptions())
  const methods = wire[ADS] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>
  const sotw = methods.StreamAggregatedResources!
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
  // Decoding (debug pages, tests) needs the JSON flavour, which expands Any values. Parsing the
  // protos costs hundreds of milliseconds, so the second parse waits for the first decode
  // instead of slowing every start-up.
  let sotwJson: protoLoader.MethodDefinition<object, object> | undefined
  const jsonMethod = () => {
    if (sotwJson === undefined) {
      const json = protoLoader.loadSync(xdsProtoFiles, { ...xdsProtoLoaderOptions(), json: true })
      sotwJson = (json[ADS] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>)
        .StreamAggregatedResources!
    }
    return sotwJson
  }

  /**
   * Each resource type's own serializer (proto-loader gives one per message type): going
   * through the Any wrapper looks the type up by name in the whole xDS tree on every encode,
   * most of the cost of encoding a small resource such as a ClusterLoadAssignment.
   */
  const serializers = new Map<string, ((value: object) => Buffer) | undefined>()
  const serializerOf = (typeUrl: string) => {
    if (!serializers.has(typeUrl)) {
      const definition = wire[typeUrl.slice(typeUrl.lastIndexOf("/") + 1)] as
        | { readonly serialize?: (value: object) => Buffer }
        | undefined
      serializers.set(typeUrl, typeof definition?.serialize === "function" ? definition.serialize : undefined)
    }
    return serializers.get(typeUrl)
  }

  const encode = (typeUrl: string, resource: ProtoObject): Uint8Array => {
    const own = serializerOf(typeUrl)
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
    const decoded = jsonMethod().responseDeserialize(buf) as { resources?: ReadonlyArray<ProtoObject> }
    return decoded.resources?.[0] ?? {}
  }

  loaded = { ads, codec: { encode, decode }, encodeAhead, responseSize }
  return loaded
}

export const layer: Layer.Layer<XdsCodec> = Layer.effect(
  XdsCodec,
  Effect.sync(() => loadXdsProtos().codec),
)
