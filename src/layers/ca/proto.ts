/** Loads the mesh CA service definition (proto/mesh/v1/auth/ca.proto) with @grpc/proto-loader. */
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"

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

let cached: grpc.ServiceDefinition | undefined

/** The MeshCertificateService definition (google/protobuf/struct.proto comes with protobufjs). */
export const caServiceDefinition = (): grpc.ServiceDefinition => {
  if (cached !== undefined) return cached
  const root = protoRoot()
  const definition = protoLoader.loadSync(CA_PROTO_FILE, { ...CA_PROTO_OPTIONS, includeDirs: [root] })
  const service = definition[CA_SERVICE_NAME]
  if (service === undefined) throw new Error(`${CA_SERVICE_NAME} is not defined in ${CA_PROTO_FILE}`)
  cached = service as unknown as grpc.ServiceDefinition
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
