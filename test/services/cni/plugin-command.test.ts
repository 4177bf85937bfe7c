/**
 * One plugin invocation end to end in-process, with a stub pod lookup and a scripted command
 * runner under the real Iptables layer: what is printed, the exit code, and which commands ran
 * in which namespace.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import type { Exec, ExecRequest } from "../../../src/layers/iptables/exec.js"
import { layerWith } from "../../../src/layers/iptables/iptables.js"
import { runPluginCommand } from "../../../src/services/cni/plugin-command.js"
import type { PluginPod } from "../../../src/services/cni/plugin-pod.js"
import { PluginPodSource } from "../../../src/services/cni/plugin-pod-source.js"
import { CniError } from "../../../src/services/cni/plugin-protocol.js"
import { injectedPod } from "./plugin-fixtures.js"

const NETNS = "/var/run/netns/cni-1234"
const ENV = {
  CNI_COMMAND: "ADD",
  CNI_CONTAINERID: "sandbox-1",
  CNI_NETNS: NETNS,
  CNI_IFNAME: "eth0",
  CNI_PATH: "/opt/cni/bin",
  CNI_ARGS: "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=app-1",
}
const PREV = {
  cniVersion: "1.0.0",
  interfaces: [{ name: "eth0", sandbox: NETNS }],
  ips: [{ address: "10.22.0.5/16", gateway: "10.22.0.1", interface: 0 }],
}
const CONFIG = {
  cniVersion: "1.0.0",
  name: "pods",
  type: "mesh-cni",
  kubernetes: { kubeconfig: "/etc/cni/net.d/mesh-kubeconfig", exclude_namespaces: ["mesh-system"] },
  prevResult: PREV,
}

interface Run {
  readonly pod?: PluginPod | CniError
  readonly env?: Record<string, string>
  readonly config?: unknown
  readonly restoreExit?: number
}

const run = (options: Run = {}) =>
  Effect.gen(function* () {
    const lookups: Array<string> = []
    const calls: Array<ExecRequest & { namespace: string }> = []
    const execFor =
      (namespace: string): Exec =>
      (request) =>
        Effect.sync(() => {
          calls.push({ ...request, namespace })
          const failed = request.command === "iptables-restore" && (options.restoreExit ?? 0) !== 0
          return failed
            ? { exitCode: 2, stdout: "", stderr: "iptables-restore: line 3 failed" }
            : { exitCode: 0, stdout: "", stderr: "" }
        })
    const source = Layer.succeed(
      PluginPodSource,
      PluginPodSource.of({
        get: (kubeconfig, ref) => {
          lookups.push(`${kubeconfig} ${ref.namespace}/${ref.name}`)
          const pod = options.pod ?? injectedPod()
          return pod instanceof CniError ? Effect.fail(pod) : Effect.succeed(pod)
        },
      }),
    )
    const output = yield* runPluginCommand(
      { ...ENV, ...options.env },
      typeof options.config === "string" ? options.config : JSON.stringify(options.config ?? CONFIG),
    ).pipe(
      Effect.provide(Layer.merge(source, layerWith({ execFor, nodePath: "node", lockPath: "" }))),
      Logger.withMinimumLogLevel(LogLevel.None),
    )
    return { ...output, parsed: output.stdout === "" ? undefined : JSON.parse(output.stdout), lookups, calls }
  })

describe("mesh-cni ADD", () => {
  it.effect("an injected pod: rules restored inside the sandbox's namespace, the previous result passed on", () =>
    Effect.gen(function* () {
      const { exitCode, parsed, lookups, calls } = yield* run()
      expect(exitCode).toBe(0)
      expect(parsed).toEqual(PREV)
      expect(lookups).toEqual(["/etc/cni/net.d/mesh-kubeconfig default/app-1"])
      expect(calls.map((c) => c.command)).toEqual(["iptables-save", "iptables-restore"])
      expect(calls.every((c) => c.namespace === NETNS)).toBe(true)
      expect(calls[1]!.stdin).toContain("-A MESH_INBOUND -p tcp --dport 15021 -j RETURN")
      expect(calls[1]!.stdin).toContain("-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001")
    }),
  )

  it.effect("standalone (no prevResult): a minimal result", () =>
    Effect.gen(function* () {
      const { prevResult: _p, ...standalone } = CONFIG
      const { exitCode, parsed } = yield* run({ config: { ...standalone, cniVersion: "0.4.0" } })
      expect(exitCode).toBe(0)
      expect(parsed).toEqual({ cniVersion: "0.4.0", dns: {} })
    }),
  )

  it.effect("excluded namespace: no lookup, no rules, the result passed on", () =>
    Effect.gen(function* () {
      const { exitCode, parsed, lookups, calls } = yield* run({
        env: { CNI_ARGS: "K8S_POD_NAMESPACE=mesh-system;K8S_POD_NAME=meshd-1" },
      })
      expect([exitCode, lookups, calls]).toEqual([0, [], []])
      expect(parsed).toEqual(PREV)
    }),
  )

  it.effect("a pod without the sidecar: looked up, no rules", () =>
    Effect.gen(function* () {
      const { exitCode, lookups, calls } = yield* run({ pod: injectedPod({ containers: [{ name: "app" }] }) })
      expect([exitCode, lookups.length, calls]).toEqual([0, 1, []])
    }),
  )

  it.effect("an unreachable API server: error 11 on stdout, exit 1", () =>
    Effect.gen(function* () {
      const { exitCode, parsed, calls } = yield* run({
        pod: new CniError({
          code: 11,
          msg: "the orchestrator API server is unavailable; try again later",
          details: "ECONNREFUSED",
        }),
      })
      expect(exitCode).toBe(1)
      expect(parsed).toEqual({
        cniVersion: "1.0.0",
        code: 11,
        msg: "the orchestrator API server is unavailable; try again later",
        details: "ECONNREFUSED",
      })
      expect(calls).toEqual([])
    }),
  )

  it.effect("iptables-restore failing: error 102 with its message", () =>
    Effect.gen(function* () {
      const { exitCode, parsed } = yield* run({ restoreExit: 2 })
      expect(exitCode).toBe(1)
      expect(parsed.code).toBe(102)
      expect(parsed.details).toContain("iptables-restore: line 3 failed")
    }),
  )

  it.effect("bad input: 6 for undecodable stdin, 7 without a kubeconfig, 4 for a missing variable", () =>
    Effect.gen(function* () {
      expect((yield* run({ config: "nope" })).parsed.code).toBe(6)
      expect((yield* run({ config: { ...CONFIG, kubernetes: {} } })).parsed.code).toBe(7)
      expect((yield* run({ env: { CNI_NETNS: "" } })).parsed).toMatchObject({ code: 4, cniVersion: "1.0.0" })
    }),
  )
})

describe("mesh-cni DEL, CHECK, VERSION", () => {
  it.effect("DEL succeeds with nothing printed and nothing run, even without a namespace", () =>
    Effect.gen(function* () {
      const result = yield* run({ env: { CNI_COMMAND: "DEL", CNI_NETNS: "" } })
      expect([result.exitCode, result.stdout, result.lookups, result.calls]).toEqual([0, "", [], []])
    }),
  )

  it.effect("CHECK succeeds on 0.4.0 and later; VERSION lists the versions", () =>
    Effect.gen(function* () {
      expect((yield* run({ env: { CNI_COMMAND: "CHECK" } })).exitCode).toBe(0)
      expect(
        (yield* run({ env: { CNI_COMMAND: "CHECK" }, config: { ...CONFIG, cniVersion: "0.3.1" } })).parsed,
      ).toMatchObject({
        code: 1,
        cniVersion: "0.3.1",
      })
      const version = yield* run({ env: { CNI_COMMAND: "VERSION" }, config: "" })
      expect(version.parsed.supportedVersions).toContain("1.0.0")
    }),
  )
})
