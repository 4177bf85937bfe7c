import * as protoLoader from "@grpc/proto-loader"
import protobuf from "protobufjs"
import { expect, it, vi } from "vitest"
import {
  CA_METHODS,
  CA_PROTO_FILE,
  CA_PROTO_OPTIONS,
  CA_SERVICE_NAME,
  caServiceDefinition,
  parseCaProto,
  protoRoot,
} from "../../../src/layers/ca/proto.js"
import { methodShapesOf } from "../../../src/layers/grpc/proto-methods.js"

type Definition = Record<
  string,
  {
    path: string
    requestStream: boolean
    responseStream: boolean
    requestSerialize: (value: object) => Buffer
    requestDeserialize: (bytes: Buffer) => object
    responseSerialize: (value: object) => Buffer
    responseDeserialize: (bytes: Buffer) => object
  }
>

// First in this file: the process-wide definition is made here, so its first call happens here.
it("adds the service without parsing the file; the first call parses it", () => {
  const parsed = vi.spyOn(protobuf.Root.prototype, "loadSync")
  try {
    const definition = caServiceDefinition() as unknown as Definition
    expect(Object.keys(definition).sort()).toEqual(["CreateCertificate", "WatchTrustBundle"])
    expect(parsed).not.toHaveBeenCalled()
    expect(definition.WatchTrustBundle!.requestSerialize({ version: "1" }).length).toBeGreaterThan(0)
    expect(parsed).toHaveBeenCalledTimes(1)
  } finally {
    parsed.mockRestore()
  }
})

it("the methods written out are the file's", () => {
  const service = parseCaProto().lookupService(CA_SERVICE_NAME)
  const methods = methodShapesOf(service)
  expect(methods).toEqual(CA_METHODS)
})

it("encodes and decodes as proto-loader's definition of the file does", () => {
  const reference = protoLoader.loadSync(CA_PROTO_FILE, { ...CA_PROTO_OPTIONS, includeDirs: [protoRoot()] })[
    CA_SERVICE_NAME
  ] as unknown as Definition
  const ours = caServiceDefinition() as unknown as Definition
  const request = {
    csr: "-----BEGIN CERTIFICATE REQUEST-----\n...",
    validity_duration: 3600,
    metadata: { fields: { ImpersonatedIdentity: { stringValue: "spiffe://cluster.local/ns/a/sa/b" } } },
  }
  const samples: Record<string, [object, object]> = {
    CreateCertificate: [request, { cert_chain: ["leaf", "root"] }],
    WatchTrustBundle: [{ version: "7" }, { version: "7", root_certs: ["a", "b"] }],
  }
  for (const [name, [input, output]] of Object.entries(samples)) {
    const [mine, theirs] = [ours[name]!, reference[name]!]
    expect([mine.path, mine.requestStream, mine.responseStream]).toEqual([
      theirs.path,
      theirs.requestStream,
      theirs.responseStream,
    ])
    const requestBytes = theirs.requestSerialize(input)
    expect(mine.requestSerialize(input)).toEqual(requestBytes)
    expect(mine.requestDeserialize(requestBytes)).toEqual(theirs.requestDeserialize(requestBytes))
    const responseBytes = theirs.responseSerialize(output)
    expect(mine.responseSerialize(output)).toEqual(responseBytes)
    expect(mine.responseDeserialize(responseBytes)).toEqual(theirs.responseDeserialize(responseBytes))
  }
  // Defaults are filled in (defaults: true) and int64 comes back as a number (longs: Number).
  expect(ours.CreateCertificate!.requestDeserialize(ours.CreateCertificate!.requestSerialize({ csr: "x" }))).toEqual({
    csr: "x",
    validity_duration: 0,
    metadata: null,
  })
})
