/**
 * Where the workload API's messages are defined: files of the project's `proto/` directory,
 * loaded into the xDS codec beside the proxy's protos so that Address and Authorization
 * resources encode like any other type.
 */
export const WORKLOAD_API_PROTO_FILES: ReadonlyArray<string> = [
  "mesh/workload/workload.proto",
  "mesh/security/authorization.proto",
]
