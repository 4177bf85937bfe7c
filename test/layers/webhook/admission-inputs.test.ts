/**
 * What the `/inject` handler reads, kept current: on an orchestrator (the test API server, through
 * the real client), the injector ConfigMap's `config`/`values` (hot-reloaded, last good kept on a
 * bad value, defaults once deleted) and namespace labels from the Namespace informer; mounted
 * files win over the ConfigMap and are re-read when they change; with neither, the defaults.
 */
import { mkdirSync, mkdtempSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Logger, Option } from "effect"
import { makeAdmissionInputs } from "../../../src/layers/webhook/admission-inputs.js"
import type { AdmissionInputs } from "../../../src/services/injection/admission.js"
import { defaultInjectionConfig } from "../../../src/services/injection/index.js"
import { InjectionWebhookConfig } from "../../../src/services/injection/webhook-config.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { layerMemory, MeshWatcherWriter } from "../../../src/services/mesh-config/watcher.js"
import { OrchestratorClient } from "../../../src/services/orchestrator/client.js"
import { Informers } from "../../../src/services/orchestrator/informer.js"
import { LocalCluster, noCluster } from "../../../src/services/orchestrator/local-cluster.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const NAMESPACE = "mesh-system"

const server = Effect.acquireRelease(
  Effect.promise(() => startOrchestrator({ tls: false, namespaces: ["default", NAMESPACE] })),
  (s) => Effect.promise(() => s.close()),
)

const putInjector = (s: Orchestrator, data: Record<string, string>, name = "mesh-sidecar-injector") =>
  s.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: NAMESPACE }, data })

/** The cluster's client and informers, built into the test's scope, as LocalCluster. */
const cluster = (s: Orchestrator) =>
  Effect.map(Layer.build(orchestratorLayer(s)), (context) =>
    Layer.succeed(
      LocalCluster,
      Option.some({ client: Context.get(context, OrchestratorClient), informers: Context.get(context, Informers) }),
    ),
  )

const emptyDir = () => mkdtempSync(join(tmpdir(), "inject-inputs-"))

const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Waits (bounded) until the inputs satisfy `check`; polls memory, the sources update in the background. */
const until = (inputs: () => AdmissionInputs, check: (i: AdmissionInputs) => boolean) =>
  Effect.gen(function* () {
    while (!check(inputs())) yield* Effect.sleep(Duration.millis(20))
  }).pipe(Effect.timeout(Duration.seconds(10)))

const build = (
  options: { namespace?: string; injectDir: string; revision?: string; native?: string },
  local: Layer.Layer<LocalCluster>,
) =>
  Effect.gen(function* () {
    const logs = captureLogs()
    const mesh = layerMemory()
    const context = yield* Layer.build(
      Layer.mergeAll(
        InjectionWebhookConfig.layer({
          namespace: options.namespace ?? NAMESPACE,
          injectDir: options.injectDir,
          REVISION: options.revision ?? "",
          ENABLE_NATIVE_SIDECARS: options.native ?? "true",
        }),
        mesh,
        local,
      ),
    )
    const inputs = yield* makeAdmissionInputs.pipe(Effect.provide(context), Effect.provide(logs.layer))
    return { inputs, logs: logs.lines, mesh: Context.get(context, MeshWatcherWriter) }
  })

describe("admission inputs", () => {
  it.scopedLive("follow the injector ConfigMap and namespace labels on the orchestrator", () =>
    Effect.gen(function* () {
      const s = yield* server
      s.put({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "shop", labels: { "mesh-injection": "enabled" } },
      })
      putInjector(s, {
        config: "injectedAnnotations: {team: platform}\n",
        values: "global: {hub: registry.example.com/mesh}\n",
      })
      // Another revision's ConfigMap is not ours.
      putInjector(s, { config: "policy: disabled\n" }, "mesh-sidecar-injector-canary")
      const { inputs, logs, mesh } = yield* build({ injectDir: emptyDir() }, yield* cluster(s))

      // Read before start-up returns: no request is injected with defaults first.
      const first = inputs()
      expect(first.config.injectedAnnotations).toEqual({ team: "platform" })
      expect(first.config.policy).toBe("enabled")
      expect((first.values.global as { hub: string }).hub).toBe("registry.example.com/mesh")
      expect(first.nativeSidecars("")).toBe(true)
      expect(first.revision).toBe("")

      yield* until(inputs, (i) => i.namespaceLabels("shop")["mesh-injection"] === "enabled")
      expect(inputs().namespaceLabels("nowhere")).toEqual({})
      s.put({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "shop", labels: { "mesh-injection": "disabled" } },
      })
      yield* until(inputs, (i) => i.namespaceLabels("shop")["mesh-injection"] === "disabled")

      putInjector(s, { config: "injectedAnnotations: {team: payments}\n" })
      yield* until(inputs, (i) => i.config.injectedAnnotations.team === "payments")
      // `values` is gone from the ConfigMap: its defaults apply.
      expect((inputs().values.global as { hub: string }).hub).not.toBe("registry.example.com/mesh")

      putInjector(s, { config: "policy: sometimes\n" })
      yield* until(
        () => inputs(),
        () => logs.some((l) => l.includes("is invalid; keeping ConfigMap mesh-system/mesh-sidecar-injector")),
      )
      expect(logs.some((l) => l.startsWith("ERROR") && l.includes('policy must be "enabled" or "disabled"'))).toBe(true)
      expect(inputs().config.injectedAnnotations.team).toBe("payments")

      s.remove("v1", "ConfigMap", NAMESPACE, "mesh-sidecar-injector")
      yield* until(inputs, (i) => i.config.injectedAnnotations.team === undefined)
      expect(inputs().config).toEqual(defaultInjectionConfig)

      // The mesh config follows the MeshWatcher.
      yield* mesh.setConfig({ ...defaultMeshConfig(), trustDomain: "changed.example" })
      yield* until(inputs, (i) => i.meshConfig.trustDomain === "changed.example")
    }),
  )

  it.scopedLive("read a revision's own ConfigMap", () =>
    Effect.gen(function* () {
      const s = yield* server
      putInjector(s, { config: "policy: enabled\n" })
      putInjector(s, { config: "policy: disabled\n" }, "mesh-sidecar-injector-canary")
      const { inputs } = yield* build({ injectDir: emptyDir(), revision: "canary" }, yield* cluster(s))
      expect(inputs().config.policy).toBe("disabled")
      expect(inputs().revision).toBe("canary")
    }),
  )

  it.scopedLive("prefer mounted files to the ConfigMap, and re-read them when they change", () =>
    Effect.gen(function* () {
      const s = yield* server
      putInjector(s, { config: "injectedAnnotations: {from: configmap}\n" })
      const dir = emptyDir()
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, "config"), "injectedAnnotations: {from: file}\n")
      writeFileSync(join(dir, "values"), "global: {tag: 7.7.7}\n")
      const { inputs, logs } = yield* build({ injectDir: dir }, yield* cluster(s))
      expect(inputs().config.injectedAnnotations).toEqual({ from: "file" })
      expect((inputs().values.global as { tag: string }).tag).toBe("7.7.7")

      const replace = (name: string, text: string) => {
        writeFileSync(join(dir, `${name}.new`), text)
        renameSync(join(dir, `${name}.new`), join(dir, name))
      }
      replace("config", "injectedAnnotations: {from: file-2}\n")
      yield* until(inputs, (i) => i.config.injectedAnnotations.from === "file-2")

      replace("values", "global: {tag: [not, a, string]}\n")
      yield* until(inputs, () => logs.some((l) => l.includes("global.tag must be a string")))
      expect((inputs().values.global as { tag: string }).tag).toBe("7.7.7")
    }),
  )

  it.scopedLive("use the defaults and no namespace labels without files or an orchestrator", () =>
    Effect.gen(function* () {
      const { inputs } = yield* build({ injectDir: emptyDir(), native: "auto" }, Layer.succeed(LocalCluster, noCluster))
      expect(inputs().config).toEqual(defaultInjectionConfig)
      expect(inputs().namespaceLabels("shop")).toEqual({})
      // auto without an orchestrator to ask: off.
      expect(inputs().nativeSidecars("")).toBe(false)
    }),
  )

  it.scopedLive("ENABLE_NATIVE_SIDECARS=auto follows the kubelet versions of the nodes", () =>
    Effect.gen(function* () {
      const s = yield* server
      const node = (name: string, kubeletVersion: string) =>
        s.put({ apiVersion: "v1", kind: "Node", metadata: { name }, status: { nodeInfo: { kubeletVersion } } })
      const { inputs } = yield* build({ injectDir: emptyDir(), native: "auto" }, yield* cluster(s))
      node("new-1", "v1.33.1")
      node("new-2", "v1.34.0-eks-1")
      yield* until(inputs, (i) => i.nativeSidecars(""))
      expect(inputs().nativeSidecars("new-2")).toBe(true)
      node("old", "v1.32.4")
      // An unscheduled pod may land on the old node: off; a pod on a new node keeps it.
      yield* until(inputs, (i) => !i.nativeSidecars(""))
      expect(inputs().nativeSidecars("new-1")).toBe(true)
      expect(inputs().nativeSidecars("old")).toBe(false)
      // A node name not (yet) known: every node decides.
      expect(inputs().nativeSidecars("elsewhere")).toBe(false)
    }),
  )

  it.scopedLive("ENABLE_NATIVE_SIDECARS=false or an unknown word is off whatever the nodes", () =>
    Effect.gen(function* () {
      const s = yield* server
      s.put({
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "n" },
        status: { nodeInfo: { kubeletVersion: "v1.35.0" } },
      })
      const off = yield* build({ injectDir: emptyDir(), native: "false" }, yield* cluster(s))
      const odd = yield* build({ injectDir: emptyDir(), native: "yes" }, yield* cluster(s))
      expect(off.inputs().nativeSidecars("n")).toBe(false)
      expect(odd.inputs().nativeSidecars("n")).toBe(false)
      expect(odd.logs.some((l) => l.startsWith("WARN") && l.includes("ENABLE_NATIVE_SIDECARS"))).toBe(true)
    }),
  )
})
