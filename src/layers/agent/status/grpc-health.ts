/** The grpc.health.v1.Health service definition (proto/grpc/health/v1/health.proto) for the gRPC app probe. */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { protoRoot } from "../../ca/proto.js"

export const HEALTH_PROTO_FILE = "grpc/health/v1/health.proto"
export const HEALTH_SERVICE_NAME = "grpc.health.v1.Health"

let cached: grpc.ServiceDefinition | undefined

export const healthServiceDefinition = (): grpc.ServiceDefinition => {
  if (cached !== undefined) return cached
  const definition = protoLoader.loadSync(HEALTH_PROTO_FILE, {
    keepCase: true,
    enums: String,
    defaults: true,
    includeDirs: [protoRoot()],
  })
  const service = definition[HEALTH_SERVICE_NAME]
  if (service === undefined) throw new Error(`${HEALTH_SERVICE_NAME} is not defined in ${HEALTH_PROTO_FILE}`)
  cached = service as unknown as grpc.ServiceDefinition
  return cached
}

export const healthClientConstructor = (): grpc.ServiceClientConstructor =>
  grpc.makeGenericClientConstructor(healthServiceDefinition(), "Health")
