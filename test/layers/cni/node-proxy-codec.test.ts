/**
 * The node proxy protocol's bytes: what our .proto encodes is what the reference's field numbers
 * give (the bytes written out by hand here from its zds.proto: WorkloadRequest add = 1, del = 2,
 * snapshot_sent = 3, keep = 5; AddWorkload uid = 1, workload_info = 2; DelWorkload uid = 2;
 * WorkloadInfo name = 1, namespace = 2, service_account = 3), and the node proxy's messages read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { makeZdsCodec } from "../../../src/layers/cni/node-proxy-codec.js"

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
const text = (s: string) => Buffer.from(s).toString("hex")
const len = (s: string) => Buffer.byteLength(s).toString(16).padStart(2, "0")

describe("ZDS codec", () => {
  it.effect("encodes requests with the reference's field numbers", () =>
    Effect.gen(function* () {
      const codec = yield* makeZdsCodec()
      // WorkloadInfo{name "a", namespace "ns", service_account "sa"}
      const info = `0a01${text("a")}1202${text("ns")}1a02${text("sa")}`
      const add = `0a03${text("u-1")}12${(info.length / 2).toString(16).padStart(2, "0")}${info}`
      expect(
        hex(
          codec.encodeRequest({
            _tag: "Add",
            uid: "u-1",
            workload: { name: "a", namespace: "ns", serviceAccount: "sa" },
          }),
        ),
      ).toBe(`0a${(add.length / 2).toString(16).padStart(2, "0")}${add}`)
      expect(hex(codec.encodeRequest({ _tag: "Del", uid: "u-1" }))).toBe(`12051203${text("u-1")}`)
      expect(hex(codec.encodeRequest({ _tag: "Keep", uid: "u-1" }))).toBe(`2a050a${len("u-1")}${text("u-1")}`)
      expect(hex(codec.encodeRequest({ _tag: "SnapshotSent" }))).toBe("1a00")
    }),
  )

  it.effect("reads the node proxy's hello and acknowledgements", () =>
    Effect.gen(function* () {
      const codec = yield* makeZdsCodec()
      expect(codec.decodeHello(new Uint8Array([0x08, 0x01]))).toEqual(Either.right(1))
      expect(codec.decodeResponse(new Uint8Array([0x0a, 0x00]))).toEqual(Either.right({ error: "" }))
      expect(codec.decodeResponse(Buffer.from(`0a050a03${text("bad")}`, "hex"))).toEqual(Either.right({ error: "bad" }))
      // An empty response is not an acknowledgement; garbage is refused, not thrown.
      expect(Either.isLeft(codec.decodeResponse(new Uint8Array([])))).toBe(true)
      expect(Either.isLeft(codec.decodeResponse(new Uint8Array([0x0a, 0x7f])))).toBe(true)
    }),
  )

  it.effect("round-trips every request", () =>
    Effect.gen(function* () {
      const codec = yield* makeZdsCodec()
      for (const request of [
        { _tag: "Add", uid: "u", workload: { name: "n", namespace: "ns", serviceAccount: "sa" } },
        { _tag: "Keep", uid: "k" },
        { _tag: "Del", uid: "d" },
        { _tag: "SnapshotSent" },
      ] as const)
        expect(codec.decodeRequest(codec.encodeRequest(request))).toEqual(Either.right(request))
    }),
  )
})
