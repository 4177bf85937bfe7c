/**
 * The mesh CA service definition (proto/mesh/v1/auth/ca.proto), as @grpc/proto-loader would make
 * it, with the file parsed at the first call rather than when the service is added (issue 38:
 * proto-loader and its descriptors cost mesh-discovery's start about 30 ms of CPU).
 */
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as grpc from "@grpc/grpc-js"
import type * as protoLoader from "@grpc/proto-loader"
import protobuf from "protobufjs"
import { lazyType, methodDefinitions, once } from "../grpc/proto-methods.js"

export const CA_PROTO_FILE = "mesh/v1/auth/ca.proto"
export const CA_SERVICE_NAME = "mesh.v1.auth.MeshCertificateService"

/** The package's proto/ directory, found upwards from this module (source tree or bundle). */
export const protoRoot = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, "proto")
    if (existsSync(join(candidate, CA_PROTO_FILE))) return candidate
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`cannot find proto/${CA_PROTO_FILE} above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
}

export const CA_PROTO_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
}

/**
 * The service's methods, written out so the service can be added before the file is parsed
 * (test/layers/ca/proto.test.ts checks them against the file).
 */
export const CA_METHODS = {
  CreateCertificate: {
    request: "mesh.v1.auth.MeshCertificateRequest",
    response: "mesh.v1.auth.MeshCertificateResponse",
    requestStream: false,
    responseStream: false,
  },
  WatchTrustBundle: {
    request: "mesh.v1.auth.TrustBundleAck",
    response: "mesh.v1.auth.TrustBundle",
    requestStream: true,
    responseStream: true,
  },
} as const

/** ca.proto parsed as proto-loader parses it (field names as written); struct.proto comes with protobufjs. */
export const parseCaProto = (): protobuf.Root => {
  const root = new protobuf.Root()
  const dir = protoRoot()
  root.resolvePath = (_origin, target) => join(dir, target)
  root.loadSync(CA_PROTO_FILE, { keepCase: true })
  root.resolveAll()
  return root
}

let cached: grpc.ServiceDefinition | undefined

/** The MeshCertificateService definition. */
export const caServiceDefinition = (): grpc.ServiceDefinition => {
  if (cached !== undefined) return cached
  const root = once(parseCaProto)
  cached = methodDefinitions(
    CA_SERVICE_NAME,
    CA_METHODS,
    (name) => lazyType(root, name),
    CA_PROTO_OPTIONS,
  ) as unknown as grpc.ServiceDefinition
  return cached
}

/** A client constructor for tests and tools. */
export const caClientConstructor = (): grpc.ServiceClientConstructor =>
  grpc.makeGenericClientConstructor(caServiceDefinition(), "MeshCertificateService")

export interface StructValue {
  readonly kind?: string
  readonly stringValue?: string
  readonly numberValue?: number
  readonly boolValue?: boolean
}

/** The string values of a decoded google.protobuf.Struct. */
export const structStrings = (struct: unknown): Record<string, string> => {
  const fields = (struct as { fields?: Record<string, StructValue> } | null | undefined)?.fields ?? {}
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value?.stringValue === "string") out[key] = value.stringValue
  }
  return out
}
