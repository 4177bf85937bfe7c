/**
 * Where the NameTable message is defined: a file of the project's `proto/` directory (its include
 * dir, `protoRoot()` in src/layers/ca/proto.ts), loaded into the xDS codec beside the proxy's own
 * protos so that NDS resources encode like any other type.
 */
export const NDS_PROTO_FILE = "mesh/networking/nds/v1/nds.proto"
