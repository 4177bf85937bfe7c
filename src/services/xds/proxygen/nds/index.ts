/** NDS: the DNS name table of the agent's DNS proxy (proto/mesh/networking/nds/v1/nds.proto). */
export {
  buildNameTable,
  generateNameTable,
  NAME_TABLE_RESOURCE,
  NAME_TABLE_TYPE,
  type NameInfo,
  type NameTable,
  nameTableGenerator,
  wantsAutoAllocation,
} from "./name-table.js"
export { NDS_PROTO_FILE } from "./proto-file.js"
