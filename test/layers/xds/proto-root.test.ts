import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import protobuf from "protobufjs"
import { afterEach, describe, expect, it } from "vitest"
import {
  loadXdsRoot,
  parseXdsRoot,
  XDS_DESCRIPTOR_FILE,
  type XdsDescriptor,
  xdsDescriptor,
} from "../../../src/layers/xds/proto-root.js"
import { xdsProtoFiles } from "../../../src/layers/xds/protos.js"
import { generate } from "../../../src/services/xds/grpcgen/grpc-gen.js"
import { makePushContext } from "../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { weightedMesh } from "../../fixtures/xds/mesh.js"
import { ROOT } from "../../support/processes.js"

let dir = ""
afterEach(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
  dir = ""
})

const encodeAll = (root: protobuf.Root): Array<Buffer> => {
  const push = makePushContext(weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 }))
  const out: Array<Buffer> = []
  for (const typeUrl of [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route]) {
    const type = root.lookupType(`.${typeUrl.slice(typeUrl.lastIndexOf("/") + 1)}`)
    for (const spec of generate(push, typeUrl, { wildcard: true, names: [] }).resources)
      out.push(Buffer.from(type.encode(type.fromObject(spec.build())).finish()))
  }
  return out
}

describe("xDS proto Root", () => {
  it("the build's descriptor (dist/) is the parsed Root of today's files and encodes byte for byte alike", () => {
    // The test setup builds dist/ first.
    const built = JSON.parse(readFileSync(join(ROOT, "dist", XDS_DESCRIPTOR_FILE), "utf8")) as XdsDescriptor
    expect(built.files).toEqual(xdsProtoFiles)
    expect(built.root).toEqual(JSON.parse(JSON.stringify(xdsDescriptor(xdsProtoFiles).root)))
    const fromJson = protobuf.Root.fromJSON(built.root)
    fromJson.resolveAll()
    const parsed = encodeAll(parseXdsRoot(xdsProtoFiles))
    expect(parsed.length).toBeGreaterThanOrEqual(8)
    expect(encodeAll(fromJson)).toEqual(parsed)
  })

  it("uses a descriptor only when it was made from the same files, and parses them otherwise", () => {
    dir = mkdtempSync(join(tmpdir(), "proto-root-"))
    const path = join(dir, XDS_DESCRIPTOR_FILE)
    // A stand-in descriptor holding one message: recognisable when used.
    const tiny = { nested: { probe: { nested: { Only: { fields: { a: { type: "string", id: 1 } } } } } } }
    writeFileSync(path, JSON.stringify({ files: xdsProtoFiles, root: tiny }))
    const used = loadXdsRoot(xdsProtoFiles, path)
    expect(used.lookup(".probe.Only")).toBeInstanceOf(protobuf.Type)
    expect(used.lookup(".envoy.config.cluster.v3.Cluster")).toBeNull()

    writeFileSync(path, JSON.stringify({ files: xdsProtoFiles.slice(1), root: tiny }))
    const parsed = loadXdsRoot(xdsProtoFiles, path)
    expect(parsed.lookup(".probe.Only")).toBeNull()
    expect(parsed.lookup(".envoy.config.cluster.v3.Cluster")).toBeInstanceOf(protobuf.Type)

    expect(
      loadXdsRoot(xdsProtoFiles, join(dir, "missing.json")).lookup(".envoy.config.cluster.v3.Cluster"),
    ).toBeInstanceOf(protobuf.Type)
  })
})
