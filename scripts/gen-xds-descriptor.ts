/**
 * Writes the xDS protos' parsed Root as JSON (src/layers/xds/proto-root.ts): the build runs it
 * so that mesh-discovery and mesh-agent read the JSON at start instead of parsing the `.proto` files.
 *   node dist/scripts/gen-xds-descriptor.mjs <output file>
 */
import { writeFileSync } from "node:fs"
import { xdsDescriptor } from "../src/layers/xds/proto-root.js"
import { xdsProtoFiles } from "../src/layers/xds/protos.js"

const output = process.argv[2]
if (output === undefined) throw new Error("usage: gen-xds-descriptor <output file>")
writeFileSync(output, JSON.stringify(xdsDescriptor(xdsProtoFiles)))
