import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Duration, Effect, Fiber, Layer, Logger, Option, Stream } from "effect"
import {
  makeOrchestratorMeshWatcher,
  layer as orchestratorMeshLayer,
} from "../../../src/layers/mesh-config/orchestrator.js"
import { MeshWatcher } from "../../../src/services/mesh-config/watcher.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const NAMESPACE = "mesh-system"

const server = Effect.acquireRelease(
  Effect.promise(() => startOrchestrator({ tls: false, namespaces: ["default", NAMESPACE] })),
  (s) => Effect.promise(() => s.close()),
)

/** The orchestrator layers, built into the test's scope (so informers outlive each step). */
const orchestrator = (s: Orchestrator) => Layer.build(orchestratorLayer(s))

const putConfigMap = (s: Orchestrator, name: string, data: Record<string, string>) =>
  s.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: NAMESPACE }, data })

const removeConfigMap = (s: Orchestrator, name: string) => s.remove("v1", "ConfigMap", NAMESPACE, name)

/** Waits (bounded) until a changes stream shows a value satisfying `predicate`. */
const until = <A>(changes: Stream.Stream<A>, predicate: (a: A) => boolean) =>
  changes.pipe(
    Stream.filter(predicate),
    Stream.runHead,
    Effect.map(Option.getOrThrow),
    Effect.timeout(Duration.seconds(15)),
  )

const networkNames = (n: { readonly networks?: Readonly<Record<string, unknown>> | undefined }) =>
  Object.keys(n.networks ?? {})

interface LogLine {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

const captureLogs = () => {
  const logs: Array<LogLine> = []
  const logger = Logger.make(({ logLevel, message, annotations }) => {
    const record: Record<string, unknown> = {}
    for (const [k, v] of annotations) record[k] = v
    logs.push({
      level: logLevel.label,
      message: String(Array.isArray(message) ? message.join(" ") : message),
      annotations: record,
    })
  })
  return { logs, layer: Logger.replace(Logger.defaultLogger, logger) }
}

const NETWORK_N1 = "networks:\n  n1:\n    endpoints: [{fromCidr: 10.0.0.0/8}]\n"
const NETWORK_N2 = "networks:\n  n2:\n    endpoints: [{fromRegistry: remote}]\n"

describe("orchestrator mesh watcher", () => {
  it.scopedLive("reads the ConfigMap at start, hot-reloads, keeps the last good config on a bad value", () =>
    Effect.gen(function* () {
      const s = yield* server
      putConfigMap(s, "mesh", {
        mesh: "trustDomain: first.org\ndefaultConfig: {concurrency: 5}\n",
        meshNetworks: NETWORK_N1,
      })
      const context = yield* orchestrator(s)
      const { logs, layer: logLayer } = captureLogs()
      const control = yield* makeOrchestratorMeshWatcher({ namespace: NAMESPACE }).pipe(
        Effect.provide(context),
        Effect.provide(logLayer),
      )
      const watcher = control.watcher
      // Read at start: no default is published first.
      const first = yield* watcher.config
      expect(first.trustDomain).toBe("first.org")
      expect(first.defaultConfig.concurrency).toBe(5)
      expect(first.defaultConfig.drainDuration).toBe("45s")
      expect(networkNames(yield* watcher.networks)).toEqual(["n1"])
      expect(yield* watcher.issues).toEqual([])

      // Every published config, to check that nothing is published when nothing changed.
      const published = yield* Effect.forkScoped(
        watcher.configChanges.pipe(
          Stream.map((c) => c.trustDomain),
          Stream.takeUntil((t) => t === "fixed.org"),
          Stream.runCollect,
        ),
      )
      yield* Effect.yieldNow()

      putConfigMap(s, "mesh", { mesh: "trustDomain: second.org\n", meshNetworks: NETWORK_N1 })
      yield* until(watcher.configChanges, (c) => c.trustDomain === "second.org")
      // A key the mesh does not read changes nothing.
      putConfigMap(s, "mesh", { mesh: "trustDomain: second.org\n", meshNetworks: NETWORK_N1, other: "x" })

      putConfigMap(s, "mesh", { mesh: "trustDomain: third.org\nproxyListenPort: notaport\n", meshNetworks: NETWORK_N1 })
      const issues = yield* until(watcher.issuesChanges, (i) => i.length > 0)
      expect(issues.map((i) => `${i.file} ${i.path}`)).toEqual(["configmap mesh-system/mesh key mesh proxyListenPort"])
      expect((yield* watcher.config).trustDomain).toBe("second.org")
      const logged = logs.find((l) => l.annotations.field === "proxyListenPort")
      expect(logged?.annotations.file).toBe("configmap mesh-system/mesh key mesh")
      expect(logged?.level).toBe("ERROR")

      putConfigMap(s, "mesh", { mesh: "trustDomain: fixed.org\n", meshNetworks: NETWORK_N2 })
      yield* until(watcher.configChanges, (c) => c.trustDomain === "fixed.org")
      yield* until(watcher.issuesChanges, (i) => i.length === 0)
      expect(networkNames(yield* until(watcher.networksChanges, (n) => networkNames(n).includes("n2")))).toEqual(["n2"])
      expect(Chunk.toArray(yield* Fiber.join(published))).toEqual(["first.org", "second.org", "fixed.org"])
    }),
  )

  it.scopedLive("a deleted ConfigMap reverts to the defaults; a created one is read", () =>
    Effect.gen(function* () {
      const s = yield* server
      const context = yield* orchestrator(s)
      const { logs, layer: logLayer } = captureLogs()
      const built = yield* Layer.build(
        orchestratorMeshLayer({ namespace: NAMESPACE, revision: "canary" }).pipe(
          Layer.provide(Layer.succeedContext(context)),
        ),
      ).pipe(Effect.provide(logLayer))
      const watcher = Context.get(built, MeshWatcher)
      // Absent at start: the defaults.
      expect((yield* watcher.config).trustDomain).toBe("cluster.local")
      expect(logs.some((l) => l.message.includes("built-in defaults"))).toBe(true)

      // The revision names the ConfigMap; the default one is not read.
      putConfigMap(s, "mesh", { mesh: "trustDomain: wrong.org\n" })
      putConfigMap(s, "mesh-canary", { mesh: "trustDomain: canary.org\n", meshNetworks: NETWORK_N1 })
      yield* until(watcher.configChanges, (c) => c.trustDomain === "canary.org")
      yield* until(watcher.networksChanges, (n) => networkNames(n).includes("n1"))

      removeConfigMap(s, "mesh-canary")
      yield* until(watcher.configChanges, (c) => c.trustDomain === "cluster.local")
      yield* until(watcher.networksChanges, (n) => networkNames(n).length === 0)
      expect(logs.some((l) => l.level === "WARN" && l.message.includes("mesh-system/mesh-canary was deleted"))).toBe(
        true,
      )
    }),
  )

  it.scopedLive("the shared ConfigMap applies under the standard one and is followed too", () =>
    Effect.gen(function* () {
      const s = yield* server
      putConfigMap(s, "mesh", { mesh: "trustDomain: standard.org\n" })
      putConfigMap(s, "shared", {
        mesh: "trustDomain: shared.org\ningressClass: shared\n",
        meshNetworks: NETWORK_N2,
      })
      const context = yield* orchestrator(s)
      const control = yield* makeOrchestratorMeshWatcher({ namespace: NAMESPACE, sharedConfigMapName: "shared" }).pipe(
        Effect.provide(context),
      )
      const watcher = control.watcher
      const config = yield* watcher.config
      expect(config.trustDomain).toBe("standard.org")
      expect(config.ingressClass).toBe("shared")
      // The standard ConfigMap has no networks: the shared ones apply.
      expect(networkNames(yield* watcher.networks)).toEqual(["n2"])

      putConfigMap(s, "shared", { mesh: "trustDomain: shared.org\ningressClass: shared2\n", meshNetworks: NETWORK_N2 })
      yield* until(watcher.configChanges, (c) => c.ingressClass === "shared2")
      expect((yield* watcher.config).trustDomain).toBe("standard.org")

      // The standard networks win over the shared ones.
      putConfigMap(s, "mesh", { mesh: "trustDomain: standard.org\n", meshNetworks: NETWORK_N1 })
      yield* until(watcher.networksChanges, (n) => networkNames(n).join() === "n1")

      // A bad shared config keeps the last good one and names the shared ConfigMap.
      putConfigMap(s, "shared", { mesh: "ingressClass: [\n", meshNetworks: NETWORK_N2 })
      const issues = yield* until(watcher.issuesChanges, (i) => i.length > 0)
      expect(issues.map((i) => i.file)).toEqual(["configmap mesh-system/shared key mesh"])
      expect((yield* watcher.config).ingressClass).toBe("shared2")

      // Deleting the shared ConfigMap leaves the standard config alone.
      removeConfigMap(s, "shared")
      yield* until(watcher.configChanges, (c) => c.ingressClass === "mesh")
      yield* until(watcher.issuesChanges, (i) => i.length === 0)
      expect((yield* watcher.config).trustDomain).toBe("standard.org")
    }),
  )
})
