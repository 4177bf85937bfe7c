/**
 * The cluster's TLS Secrets and CA ConfigMaps as credentials, through the real client and
 * informers against the in-process orchestrator API server: Secrets with TLS material and
 * ConfigMaps with a CA bundle appear, change and go; others never make a change.
 */
import { Chunk, Effect, Fiber, Layer, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layerOrchestrator } from "../../../src/layers/credentials/orchestrator.js"
import { type Credential, CredentialSource } from "../../../src/services/credentials/credential.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ namespaces: ["default", "mesh-system"] })
})
afterAll(() => server.close())

const b64 = (text: string) => Buffer.from(text).toString("base64")
const putSecret = (namespace: string, name: string, type: string, data: Record<string, string>) =>
  server.put({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
    type,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  })

const putConfigMap = (namespace: string, name: string, data: Record<string, string>) =>
  server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data })

const names = (set: ReadonlyArray<Credential>) => set.map((c) => `${c.namespace}/${c.name}`)

type WaitFor = (check: (sets: ReadonlyArray<ReadonlyArray<Credential>>) => boolean) => Effect.Effect<void>

/**
 * Every set the source emits while `script` changes the cluster, up to the first empty set after
 * the first one (so the script ends by removing every credential it made).
 */
const follow = (script: (waitFor: WaitFor) => Effect.Effect<void>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const source = yield* CredentialSource
      const sets: Array<ReadonlyArray<Credential>> = []
      const fiber = yield* source.changes.pipe(
        Stream.tap((set) => Effect.sync(() => sets.push(set))),
        Stream.takeUntil((set) => set.length === 0 && sets.length > 1),
        Stream.runCollect,
        Effect.fork,
      )
      const waitFor: WaitFor = (check) =>
        Effect.gen(function* () {
          const deadline = Date.now() + 5000
          while (!check(sets)) {
            if (Date.now() > deadline) return yield* Effect.die(new Error(`not seen: ${JSON.stringify(sets)}`))
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
          }
        })
      yield* script(waitFor)
      return Chunk.toReadonlyArray(yield* Fiber.join(fiber))
    }).pipe(Effect.provide(layerOrchestrator().pipe(Layer.provide(orchestratorLayer(server)))), Effect.scoped),
  )

/** Each emitted set differs from the one before it. */
const expectEachChanged = (seen: ReadonlyArray<ReadonlyArray<Credential>>) => {
  for (let i = 1; i < seen.length; i++) expect(JSON.stringify(seen[i])).not.toBe(JSON.stringify(seen[i - 1]))
}

describe("credentials from the orchestrator's Secrets", () => {
  it("follows TLS Secrets as they are added, changed and removed, and ignores the rest", async () => {
    putSecret("mesh-system", "web", "kubernetes.io/tls", { "tls.crt": "CERT1", "tls.key": "KEY" })
    putSecret("default", "db-password", "Opaque", { password: "hunter2" })
    const seen = await follow((waitFor) =>
      Effect.gen(function* () {
        yield* waitFor((sets) => sets.some((s) => names(s).includes("mesh-system/web")))
        putSecret("default", "db-password", "Opaque", { password: "changed" }) // no change of credentials
        putSecret("default", "ca", "Opaque", { cacert: "CA" })
        yield* waitFor((sets) => sets.some((s) => names(s).includes("default/ca")))
        putSecret("mesh-system", "web", "kubernetes.io/tls", { "tls.crt": "CERT2", "tls.key": "KEY" })
        yield* waitFor((sets) => sets.some((s) => s.some((c) => c.certificateChain === "CERT2")))
        server.remove("v1", "Secret", "mesh-system", "web")
        server.remove("v1", "Secret", "default", "ca")
      }),
    )
    // The password Secret never shows.
    expectEachChanged(seen)
    expect(seen.flatMap(names)).not.toContain("default/db-password")
    expect(names(seen.at(-2)!)).toEqual(expect.arrayContaining(["default/ca"]))
    expect(seen.at(-1)).toEqual([])
  })
})

describe("credentials from the orchestrator's ConfigMaps", () => {
  it("follows ConfigMaps holding a CA bundle (as ConfigMap credentials, apart from a Secret of the same name), and ignores the rest", async () => {
    putSecret("default", "backend-ca", "Opaque", { cacert: "SECRET-CA" })
    putConfigMap("default", "backend-ca", { "ca.crt": "CA1" })
    putConfigMap("default", "settings", { "config.yaml": "a: 1" })
    const hasConfigMapCa = (ca: string) => (sets: ReadonlyArray<ReadonlyArray<Credential>>) =>
      sets.some((s) => s.some((c) => c.source === "ConfigMap" && c.caCertificates === ca))
    const seen = await follow((waitFor) =>
      Effect.gen(function* () {
        yield* waitFor(hasConfigMapCa("CA1"))
        putConfigMap("default", "settings", { "config.yaml": "a: 2" }) // no change of credentials
        putConfigMap("default", "backend-ca", { "ca.crt": "CA2", cacert: "GENERIC" })
        yield* waitFor(hasConfigMapCa("GENERIC"))
        server.remove("v1", "ConfigMap", "default", "backend-ca")
        server.remove("v1", "Secret", "default", "backend-ca")
      }),
    )
    expectEachChanged(seen)
    expect(seen.flatMap(names)).not.toContain("default/settings")
    const both = seen.find((s) => s.some((c) => c.caCertificates === "CA1"))!
    expect(both).toEqual([
      { namespace: "default", name: "backend-ca", caCertificates: "SECRET-CA" },
      { namespace: "default", name: "backend-ca", caCertificates: "CA1", source: "ConfigMap" },
    ])
    expect(seen.at(-1)).toEqual([])
  })
})
