import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import protobuf from "protobufjs"
import { afterEach, describe, expect, it } from "vitest"
import {
  loadXdsRoot,
  parseXdsRoot,
  rootFromDescriptor,
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
import {
  edsCluster,
  endpoints,
  httpListener,
  passthroughCluster,
  reviews,
  routes9080,
  tcpListener,
  virtualInbound,
  virtualOutbound,
} from "../../support/proxygen/fixtures.js"

let dir = ""
afterEach(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
  dir = ""
})

const typeOf = (root: protobuf.Root, typeUrl: string): protobuf.Type =>
  root.lookupType(`.${typeUrl.slice(typeUrl.lastIndexOf("/") + 1)}`)

/**
 * Resources as the generators write them: the gRPC generator's, and sidecar-shaped ones whose
 * typed configs (HCM, router, fault, RBAC, TLS, TCP proxy, listener filters) are Anys of other types.
 */
const resources = (): Array<[string, object]> => {
  const push = makePushContext(weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 }))
  const out: Array<[string, object]> = []
  for (const typeUrl of [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route])
    for (const spec of generate(push, typeUrl, { wildcard: true, names: [] }).resources)
      out.push([typeUrl, spec.build()])
  out.push(
    [TypeUrl.Cluster, edsCluster(reviews("v1"))],
    [TypeUrl.Cluster, passthroughCluster],
    [TypeUrl.Endpoint, endpoints(reviews("v1"), "10.0.0.1", 9080)],
    [TypeUrl.Listener, httpListener],
    [TypeUrl.Listener, tcpListener],
    [TypeUrl.Listener, virtualOutbound("PassthroughCluster")],
    [TypeUrl.Listener, virtualInbound("PERMISSIVE")],
    [TypeUrl.Route, routes9080],
    // Repeated scalars: packed in proto3, so their encoding depends on the resolved features.
    [
      "type.googleapis.com/envoy.config.route.v3.RetryPolicy",
      { retriable_status_codes: [503, 504], retry_on: "5xx", num_retries: { value: 2 } },
    ],
  )
  return out
}

const encodeAll = (root: protobuf.Root): Array<Buffer> =>
  resources().map(([typeUrl, resource]) => {
    const type = typeOf(root, typeUrl)
    return Buffer.from(type.encode(type.fromObject(resource)).finish())
  })

/** Every field's resolved editions features and packedness, by full name. */
const featuresOf = (root: protobuf.Root): Map<string, string> => {
  const out = new Map<string, string>()
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Type)
        for (const field of nested.fieldsArray)
          out.set(
            field.fullName,
            JSON.stringify([(field as unknown as { _features: unknown })._features, field.repeated && field.packed]),
          )
      if (nested instanceof protobuf.Namespace) walk(nested)
    }
  }
  walk(root)
  return out
}

describe("xDS proto Root", () => {
  it("the build's descriptor (dist/) is the parsed Root of today's files and encodes byte for byte alike", () => {
    // The test setup builds dist/ first.
    const built = JSON.parse(readFileSync(join(ROOT, "dist", XDS_DESCRIPTOR_FILE), "utf8")) as XdsDescriptor
    expect(built.files).toEqual(xdsProtoFiles)
    expect(built.root).toEqual(JSON.parse(JSON.stringify(xdsDescriptor(xdsProtoFiles).root)))
    const parsed = parseXdsRoot(xdsProtoFiles)
    // The Root as a start reads it: fields resolved at their type's first use, not up front.
    const lazy = rootFromDescriptor(built.root)
    // Before any use, every field already has the features (packed or not) the full resolution gives it.
    const features = featuresOf(lazy)
    expect(features.size).toBeGreaterThan(1000)
    expect(features).toEqual(featuresOf(parsed))
    const bytes = encodeAll(parsed)
    expect(bytes.length).toBeGreaterThanOrEqual(17)
    expect(encodeAll(lazy)).toEqual(bytes)
    // The retry policy's status codes went out packed: field 7, length-delimited, 2 bytes.
    expect(bytes.at(-1)!.includes(Buffer.from([0x3a, 0x04, 0xf7, 0x03, 0xf8, 0x03]))).toBe(true)
    // ... and the fully resolved Root of the same descriptor agrees too.
    expect(encodeAll(protobuf.Root.fromJSON(built.root))).toEqual(bytes)
  })

  it("refuses a descriptor extending a type it does not hold, as a full resolution does", () => {
    const orphan = { nested: { probe: { nested: { x: { type: "string", id: 100, extend: "Missing" } } } } }
    expect(() => protobuf.Root.fromJSON(orphan)).toThrow(/unresolvable extensions/)
    expect(() => rootFromDescriptor(orphan)).toThrow(/unresolvable extensions: 'extend Missing'/)
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
