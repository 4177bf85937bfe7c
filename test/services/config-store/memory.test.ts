import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream } from "effect"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import { ConfigStore } from "../../../src/services/config-store/config-store.js"
import { awaitEvent, layerMemory, MemoryConfigStore } from "../../../src/services/config-store/memory.js"

const res = (kind: string, name: string, spec: unknown = {}): ConfigResource => ({
  group: "networking.mesh.io",
  version: "v1",
  kind,
  meta: { name, namespace: "default", labels: {}, annotations: {} },
  spec,
})

describe("layerMemory", () => {
  it.scoped("serves the initial resources and publishes changes to subscribers", () =>
    Effect.gen(function* () {
      const store = yield* ConfigStore
      const memory = yield* MemoryConfigStore
      yield* store.awaitSynced
      expect(Option.isSome(yield* store.get("Gateway", "default", "g"))).toBe(true)
      const { snapshot, events } = yield* store.subscribe
      expect(snapshot.size).toBe(1)
      yield* memory.upsert(res("ServiceEntry", "s"))
      yield* memory.upsert(res("ServiceEntry", "s")) // no change: no event
      yield* memory.upsert(res("ServiceEntry", "s", { x: 1 }))
      yield* memory.remove("Gateway", "default", "g")
      const e1 = yield* awaitEvent(events, () => true)
      expect(e1.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["added ServiceEntry/default/s"])
      expect(e1.kinds).toEqual(["ServiceEntry"])
      const e2 = yield* awaitEvent(events, () => true)
      expect(e2.changes.map((c) => c.type)).toEqual(["updated"])
      const e3 = yield* awaitEvent(events, () => true)
      expect(e3.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["removed Gateway/default/g"])
      expect(e3.snapshot.kinds).toEqual(["ServiceEntry"])
      expect((yield* store.list("ServiceEntry")).map((r) => r.spec)).toEqual([{ x: 1 }])
    }).pipe(Effect.provide(layerMemory([res("Gateway", "g")]))),
  )

  it.scoped("watch starts with a full event of the current snapshot", () =>
    Effect.gen(function* () {
      const store = yield* ConfigStore
      const first = yield* store.watch.pipe(Stream.take(1), Stream.runCollect)
      const event = Chunk.unsafeHead(first)
      expect(event.full).toBe(true)
      expect(event.changes.map((c) => c.key)).toEqual(["Gateway/default/g"])
    }).pipe(Effect.provide(layerMemory([res("Gateway", "g")]))),
  )
})
