/**
 * The plugin in ambient mode (config `ambient_enabled`), in-process with a stub pod source and a
 * recording node agent client: an enrolled pod goes to the node agent with its uid, service
 * account, addresses and redirection annotations, and no iptables command runs; a pod the
 * labels do not enrol falls through to the sidecar rules; DEL is passed on and succeeds even
 * when the agent cannot be reached; events are bounded when decoded.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger, LogLevel } from "effect"
import { layerWith } from "../../../src/layers/iptables/iptables.js"
import {
  type AddEvent,
  type DelEvent,
  decodeAddEvent,
  decodeDelEvent,
} from "../../../src/services/cni/node-agent-events.js"
import { NodeAgentClient } from "../../../src/services/cni/plugin-ambient.js"
import { runPluginCommand } from "../../../src/services/cni/plugin-command.js"
import type { PluginPod } from "../../../src/services/cni/plugin-pod.js"
import { PluginPodSource } from "../../../src/services/cni/plugin-pod-source.js"
import { CniError, CniErrorCodes } from "../../../src/services/cni/plugin-protocol.js"

const ENV = {
  CNI_COMMAND: "ADD",
  CNI_CONTAINERID: "sandbox-1",
  CNI_NETNS: "/var/run/netns/cni-1",
  CNI_IFNAME: "eth0",
  CNI_PATH: "/opt/cni/bin",
  CNI_ARGS: "IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=app-1",
}
const CONFIG = {
  cniVersion: "1.0.0",
  name: "pods",
  type: "mesh-cni",
  ambient_enabled: true,
  cni_agent_run_dir: "/run/agent",
  kubernetes: { kubeconfig: "/etc/cni/net.d/kc" },
  prevResult: { cniVersion: "1.0.0", ips: [{ address: "10.22.0.5/16" }] },
}

const pod = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}): PluginPod => ({
  metadata: { name: "app-1", namespace: "shop", uid: "uid-1", labels, annotations },
  spec: { serviceAccountName: "app-sa", containers: [{ name: "app" }] },
})

const run = (options: {
  pod: PluginPod
  namespaceLabels: Record<string, string>
  command?: string
  agentFails?: boolean
}) =>
  Effect.gen(function* () {
    const adds: Array<{ runDir: string; event: AddEvent }> = []
    const dels: Array<{ runDir: string; event: DelEvent }> = []
    const commands: Array<string> = []
    const failure = new CniError({ code: CniErrorCodes.tryAgainLater, msg: "agent down", details: "" })
    const layers = Layer.mergeAll(
      Layer.succeed(
        PluginPodSource,
        PluginPodSource.of({
          get: () => Effect.succeed(options.pod),
          namespaceLabels: () => Effect.succeed(options.namespaceLabels),
        }),
      ),
      Layer.succeed(
        NodeAgentClient,
        NodeAgentClient.of({
          add: (runDir, event) =>
            options.agentFails
              ? Effect.fail(failure)
              : Effect.as(
                  Effect.sync(() => adds.push({ runDir, event })),
                  "sent",
                ),
          del: (runDir, event) =>
            options.agentFails
              ? Effect.fail(failure)
              : Effect.as(
                  Effect.sync(() => dels.push({ runDir, event })),
                  "removed",
                ),
        }),
      ),
      layerWith({
        execFor: () => (request) =>
          Effect.sync(() => {
            commands.push(request.command)
            return { exitCode: 0, stdout: "", stderr: "" }
          }),
        nodePath: "node",
        lockPath: "",
      }),
    )
    const output = yield* runPluginCommand(
      { ...ENV, CNI_COMMAND: options.command ?? "ADD" },
      JSON.stringify(CONFIG),
    ).pipe(Effect.provide(layers), Logger.withMinimumLogLevel(LogLevel.None))
    return { ...output, adds, dels, commands }
  })

describe("mesh-cni in ambient mode", () => {
  it.effect("a pod of an ambient namespace goes to the node agent; no rules are written by the plugin", () =>
    Effect.gen(function* () {
      const result = yield* run({
        pod: pod({}, { "ambient.mesh.io/dns-capture": "false", unrelated: "x" }),
        namespaceLabels: { "mesh.io/dataplane-mode": "ambient" },
      })
      expect(result.exitCode).toBe(0)
      expect(result.commands).toEqual([])
      expect(result.adds).toEqual([
        {
          runDir: "/run/agent",
          event: {
            netns: "/var/run/netns/cni-1",
            containerId: "sandbox-1",
            podName: "app-1",
            podNamespace: "shop",
            podUid: "uid-1",
            serviceAccount: "app-sa",
            ips: ["10.22.0.5"],
            annotations: { "ambient.mesh.io/dns-capture": "false" },
          },
        },
      ])
      // The event the plugin sends is one the agent accepts.
      expect(Either.isRight(decodeAddEvent(JSON.stringify(result.adds[0]!.event)))).toBe(true)
    }),
  )

  it.effect("the pod's own label enrols it; `none` opts it out of an ambient namespace", () =>
    Effect.gen(function* () {
      expect(
        (yield* run({ pod: pod({ "mesh.io/dataplane-mode": "ambient" }), namespaceLabels: {} })).adds,
      ).toHaveLength(1)
      const optedOut = yield* run({
        pod: pod({ "mesh.io/dataplane-mode": "none" }),
        namespaceLabels: { "mesh.io/dataplane-mode": "ambient" },
      })
      expect(optedOut.adds).toEqual([])
      expect(optedOut.exitCode).toBe(0)
    }),
  )

  it.effect("an agent that cannot take the pod fails ADD with try-again-later", () =>
    Effect.gen(function* () {
      const result = yield* run({
        pod: pod(),
        namespaceLabels: { "mesh.io/dataplane-mode": "ambient" },
        agentFails: true,
      })
      expect(result.exitCode).toBe(1)
      expect(JSON.parse(result.stdout).code).toBe(11)
    }),
  )

  it.effect("DEL is passed to the agent, and succeeds when the agent is down", () =>
    Effect.gen(function* () {
      const told = yield* run({ pod: pod(), namespaceLabels: {}, command: "DEL" })
      expect(told.exitCode).toBe(0)
      expect(told.dels).toEqual([
        { runDir: "/run/agent", event: { containerId: "sandbox-1", podName: "app-1", podNamespace: "shop" } },
      ])
      const down = yield* run({ pod: pod(), namespaceLabels: {}, command: "DEL", agentFails: true })
      expect(down.exitCode).toBe(0)
      expect(down.stdout).toBe("")
    }),
  )
})

describe("node agent events", () => {
  it("refuses what is not an event, names too long and too many addresses", () => {
    const event = {
      netns: "/var/run/netns/x",
      containerId: "c",
      podName: "p",
      podNamespace: "n",
      podUid: "u",
      serviceAccount: "sa",
      ips: [],
      annotations: {},
    }
    expect(Either.isRight(decodeAddEvent(JSON.stringify(event)))).toBe(true)
    expect(Either.isLeft(decodeAddEvent("{"))).toBe(true)
    expect(Either.isLeft(decodeAddEvent(JSON.stringify({ ...event, podName: "x".repeat(254) })))).toBe(true)
    expect(Either.isLeft(decodeAddEvent(JSON.stringify({ ...event, ips: Array(17).fill("10.0.0.1") })))).toBe(true)
    expect(Either.isLeft(decodeDelEvent(JSON.stringify({ containerId: "" })))).toBe(true)
  })
})
