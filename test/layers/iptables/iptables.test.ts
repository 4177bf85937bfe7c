/**
 * The applying layer against a scripted command runner: which commands run in which case
 * (clean, in place, drifted, cleanup, dry run, skip, TPROXY routes, validation), and the
 * errors for missing binaries and missing privilege.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Logger, LogLevel } from "effect"
import {
  checkResult,
  type Exec,
  type ExecRequest,
  fileLock,
  namespacePrefix,
  nodeExec,
} from "../../../src/layers/iptables/exec.js"
import { layerWith } from "../../../src/layers/iptables/iptables.js"
import { lookupUid } from "../../../src/layers/iptables/run.js"
import { buildRules, renderRestore } from "../../../src/services/iptables/builder.js"
import { defaultIptablesConfig, type IptablesConfig } from "../../../src/services/iptables/config.js"
import { type ApplyOptions, Iptables } from "../../../src/services/iptables/service.js"

const CONFIG: IptablesConfig = {
  ...defaultIptablesConfig,
  proxyUid: "1337",
  proxyGid: "1337",
  inboundPortsInclude: "*",
  outboundIpRangesInclude: "*",
}

const OPTIONS: ApplyOptions = {
  config: CONFIG,
  dryRun: false,
  cleanupOnly: false,
  reconcile: false,
  forceApply: false,
  skipRuleApply: false,
  runValidation: false,
  probePort: 15002,
  probeTimeout: Duration.seconds(5),
  networkNamespace: "pod-ns",
  cniMode: false,
  dryRunFilePath: "",
}

/** An iptables-save text of the given rules as the kernel would list them (no canonicalisation needed here). */
const saveOf = (config: IptablesConfig) => {
  const input = renderRestore(buildRules(config).v4)
  return input.replace(/^-N (\S+)$/gm, ":$1 - [0:0]")
}

interface Script {
  save?: string
  /** Exit code of `iptables -C` (0 = rule present). */
  check?: (args: ReadonlyArray<string>) => number
  ip?: (args: ReadonlyArray<string>) => { exitCode: number; stderr: string; stdout?: string }
  probe?: { exitCode: number; stdout: string }
}

const scripted = (script: Script) => {
  const calls: Array<ExecRequest & { namespace: string }> = []
  const execFor =
    (namespace: string): Exec =>
    (request) =>
      Effect.sync(() => {
        calls.push({ ...request, namespace })
        const ok = { exitCode: 0, stdout: "", stderr: "" }
        if (request.command.endsWith("-save")) return { ...ok, stdout: script.save ?? "" }
        if (request.command === "sh") {
          // The batched `iptables -C` checks: one quoted command line per rule, echoing its code.
          const codes = request.args[1]!.split("\n").map((line) => {
            const words = [...line.matchAll(/'([^']*)'/g)].map((match) => match[1]!)
            calls.push({ command: words[0]!, args: words.slice(1), namespace })
            return script.check?.(words.slice(1)) ?? 0
          })
          return { ...ok, stdout: `${codes.join("\n")}\n` }
        }
        if (request.command === "ip") return { ...ok, ...(script.ip?.(request.args) ?? {}) }
        if (request.args[0] === "-e") return { ...ok, ...(script.probe ?? { exitCode: 1, stdout: "" }) }
        return ok
      })
  return { calls, layer: layerWith({ execFor, nodePath: "node", lockPath: "" }) }
}

const apply = (script: Script, overrides: Partial<ApplyOptions> = {}) => {
  const { calls, layer } = scripted(script)
  return Effect.flatMap(Iptables, (iptables) => iptables.apply({ ...OPTIONS, ...overrides })).pipe(
    Effect.provide(layer),
    Logger.withMinimumLogLevel(LogLevel.None),
    Effect.exit,
    Effect.map((exit) => ({ exit, calls })),
  )
}

const commandsOf = (calls: ReadonlyArray<ExecRequest>) => calls.map((call) => [call.command, ...call.args].join(" "))

describe("Iptables layer", () => {
  it.effect("clean state: one iptables-restore --noflush with the whole rule set, in the namespace", () =>
    Effect.gen(function* () {
      const { exit, calls } = yield* apply({})
      expect(Exit.isSuccess(exit) && exit.value.actions).toEqual([{ family: 4, action: "applied" }])
      expect(commandsOf(calls)).toEqual(["iptables-save", "iptables-restore -w --noflush"])
      expect(calls.every((call) => call.namespace === "pod-ns")).toBe(true)
      expect(calls[1]!.stdin).toBe(renderRestore(buildRules(CONFIG).v4))
    }),
  )

  it.effect("IPv6 adds ip6tables-restore and the ::6 passthrough address", () =>
    Effect.gen(function* () {
      const { exit, calls } = yield* apply(
        { ip: () => ({ exitCode: 2, stderr: "RTNETLINK answers: File exists" }) },
        { config: { ...CONFIG, enableIpv6: true } },
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(commandsOf(calls)).toEqual([
        "iptables-save",
        "iptables-restore -w --noflush",
        "ip6tables-save",
        "ip6tables-restore -w --noflush",
        "ip -6 addr add ::6/128 dev lo",
      ])
      expect(calls[3]!.stdin).toContain("-s ::6/128")
    }),
  )

  it.effect("rules already in place: checked with -C, nothing applied", () =>
    Effect.gen(function* () {
      const { exit, calls } = yield* apply({ save: saveOf(CONFIG) })
      expect(Exit.isSuccess(exit) && exit.value.actions).toEqual([{ family: 4, action: "already-in-place" }])
      const commands = commandsOf(calls)
      expect(commands.filter((command) => command.startsWith("iptables-restore"))).toEqual([])
      expect(commands).toContain("iptables -w -t nat -C MESH_OUTPUT -j MESH_REDIRECT")
    }),
  )

  it.effect("--force-apply replaces rules in place atomically", () =>
    Effect.gen(function* () {
      const { exit, calls } = yield* apply({ save: saveOf(CONFIG) }, { forceApply: true })
      expect(Exit.isSuccess(exit) && exit.value.actions).toEqual([{ family: 4, action: "replaced" }])
      const restore = calls.find((call) => call.command === "iptables-restore")!
      expect(restore.stdin).toMatch(
        /^\* nat\n-D PREROUTING -p tcp -j MESH_INBOUND\n-D OUTPUT -j MESH_OUTPUT\n-F MESH_INBOUND\n[\s\S]*-X MESH_OUTPUT\n-N MESH_INBOUND\n/,
      )
    }),
  )

  it.effect("drift fails without --reconcile, naming the difference; --reconcile replaces", () =>
    Effect.gen(function* () {
      const drifted = saveOf(CONFIG).replace("-A MESH_OUTPUT -j MESH_REDIRECT\n", "")
      const { exit, calls } = yield* apply({ save: drifted })
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("nat/MESH_OUTPUT has 8 rules, 9 wanted")
      expect(commandsOf(calls)).toEqual(["iptables-save"])
      const reconciled = yield* apply({ save: drifted }, { reconcile: true })
      expect(Exit.isSuccess(reconciled.exit) && reconciled.exit.value.actions).toEqual([
        { family: 4, action: "replaced" },
      ])
      // A rule changed by hand (same count) is found by -C.
      const changed = yield* apply({ save: saveOf(CONFIG), check: (args) => (args.includes("MESH_REDIRECT") ? 1 : 0) })
      expect(String(Exit.isFailure(changed.exit) ? changed.exit.cause : "")).toContain("is missing")
    }),
  )

  it.effect("--cleanup-only removes mesh chains, jumps and installed built-in rules; clean state runs no restore", () =>
    Effect.gen(function* () {
      const config = { ...CONFIG, excludeInterfaces: "eth1" }
      const { exit, calls } = yield* apply(
        { save: saveOf(config), check: (args) => (args.includes("-o") && args.includes("eth1") ? 0 : 1) },
        { config, cleanupOnly: true },
      )
      expect(Exit.isSuccess(exit) && exit.value.actions).toEqual([{ family: 4, action: "cleaned" }])
      const restore = calls.find((call) => call.command === "iptables-restore")!
      expect(restore.stdin).toContain("-D OUTPUT -o eth1 -j RETURN\n")
      expect(restore.stdin).not.toContain("-D PREROUTING -i eth1 -j RETURN\n")
      expect(restore.stdin).not.toContain("-N ")
      expect(restore.stdin).toContain("-X MESH_OUTPUT\nCOMMIT\n")
      const clean = yield* apply({}, { cleanupOnly: true })
      expect(commandsOf(clean.calls)).toEqual(["iptables-save"])
    }),
  )

  it.effect("TPROXY adds the policy rule once and the route; cleanup deletes every copy", () =>
    Effect.gen(function* () {
      const config = { ...CONFIG, inboundInterceptionMode: "TPROXY" as const }
      const { calls } = yield* apply({}, { config })
      expect(commandsOf(calls).slice(2)).toEqual([
        "ip -f inet rule list fwmark 1337 lookup 133",
        "ip -f inet rule add fwmark 1337 lookup 133",
        "ip -f inet route add local default dev lo table 133",
      ])
      const present = yield* apply(
        {
          ip: (args) => ({
            exitCode: 0,
            stderr: "",
            ...(args[3] === "list" ? { stdout: "32765: from all fwmark 0x539 lookup 133" } : {}),
          }),
        },
        { config },
      )
      expect(commandsOf(present.calls).filter((command) => command.includes("rule add"))).toEqual([])
      let deletions = 0
      const cleanup = yield* apply(
        {
          check: () => 1,
          ip: (args) =>
            args[3] === "del" && ++deletions > 2
              ? { exitCode: 2, stderr: "No such file or directory" }
              : { exitCode: 0, stderr: "" },
        },
        { config, cleanupOnly: true },
      )
      expect(commandsOf(cleanup.calls).filter((command) => command.startsWith("ip "))).toEqual([
        "ip -f inet rule del fwmark 1337 lookup 133",
        "ip -f inet rule del fwmark 1337 lookup 133",
        "ip -f inet rule del fwmark 1337 lookup 133",
        "ip -f inet route flush table 133",
      ])
    }),
  )

  it.effect("dry run runs no command and writes the restore input to DRY_RUN_FILE_PATH", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "mesh-ipt-"))
      const file = join(dir, "dry-run")
      const { exit, calls } = yield* apply(
        {},
        { dryRun: true, dryRunFilePath: file, config: { ...CONFIG, enableIpv6: true } },
      )
      expect(calls).toEqual([])
      const report = Exit.isSuccess(exit) ? exit.value : undefined
      expect(report?.restoreInputs.map((input) => input.family)).toEqual([4, 6])
      expect(readFileSync(file, "utf8")).toBe(report!.restoreInputs.map((input) => input.input).join(""))
      rmSync(dir, { recursive: true, force: true })
    }),
  )

  it.effect("--skip-rule-apply applies nothing", () =>
    Effect.gen(function* () {
      const { exit, calls } = yield* apply({}, { skipRuleApply: true })
      expect(Exit.isSuccess(exit) && exit.value.actions).toEqual([{ family: 4, action: "skipped" }])
      expect(calls).toEqual([])
    }),
  )

  it.effect("invalid configuration fails before any command", () =>
    Effect.gen(function* () {
      const { exit, calls } = yield* apply({}, { config: { ...CONFIG, proxyPort: "x" } })
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain('--envoy-port: "x" is not a port')
      expect(calls).toEqual([])
    }),
  )

  it.effect("validation: passes when the probe lands on a capture port, fails naming the path otherwise", () =>
    Effect.gen(function* () {
      const passed = yield* apply(
        { probe: { exitCode: 0, stdout: '{"landed":"inbound capture","host":"127.0.0.1","port":15006}\n' } },
        { runValidation: true, skipRuleApply: true },
      )
      expect(Exit.isSuccess(passed.exit) && passed.exit.value.validation).toEqual([
        "validation passed: IPv4 127.0.0.6:15002 from uid 1337 was redirected to the inbound capture port 15006",
      ])
      const probe = passed.calls.find((call) => call.args[0] === "-e")!
      expect(JSON.parse(probe.args[2]!)).toMatchObject({ target: "127.0.0.6", port: 15002, uid: 1337, gid: 1337 })
      const direct = yield* apply(
        { probe: { exitCode: 1, stdout: '{"landed":"probe","port":15002}\n' } },
        { runValidation: true, skipRuleApply: true },
      )
      expect(String(Exit.isFailure(direct.exit) ? direct.exit.cause : "")).toContain(
        "validation failed: IPv4 127.0.0.6:15002 from uid 1337 was not redirected to port 15001 or 15006: it reached the probe listener directly",
      )
      const timeout = yield* apply(
        { probe: { exitCode: 1, stdout: '{"timeout":true,"lastError":"connect ECONNREFUSED"}\n' } },
        { runValidation: true, skipRuleApply: true, probeTimeout: Duration.millis(300) },
      )
      expect(String(Exit.isFailure(timeout.exit) ? timeout.exit.cause : "")).toContain(
        "nothing arrived within 300ms (last error: connect ECONNREFUSED)",
      )
    }),
  )
})

describe("exec", () => {
  it.effect("a missing binary is a clear IptablesMissingError", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(nodeExec("")({ command: "iptables-definitely-missing", args: [] }))
      expect(error._tag).toBe("IptablesMissingError")
      expect(error.message).toContain("iptables-definitely-missing was not found in PATH; install the iptables package")
    }),
  )

  it.effect("lack of privilege is an IptablesPermissionError; other failures keep their message", () =>
    Effect.gen(function* () {
      const request = { command: "iptables-save", args: [] }
      const denied = yield* Effect.flip(
        checkResult(request, {
          exitCode: 4,
          stdout: "",
          stderr:
            "iptables-save v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)",
        }),
      )
      expect(denied._tag).toBe("IptablesPermissionError")
      expect(denied.message).toContain("run as root or with CAP_NET_ADMIN")
      const other = yield* Effect.flip(checkResult(request, { exitCode: 1, stdout: "", stderr: "line 3 failed" }))
      expect(other).toMatchObject({
        _tag: "IptablesCommandError",
        message: "iptables-save exited with 1: line 3 failed",
      })
    }),
  )

  it.effect.skipIf(spawnSync("sh", ["-c", "command -v flock"]).status !== 0)(
    "fileLock holds an exclusive flock for its scope",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "mesh-ipt-lock-"))
        const path = join(dir, "lock")
        const tryLock = () => spawnSync("flock", ["--nonblock", path, "true"]).status
        const held = yield* Effect.scoped(
          Effect.gen(function* () {
            expect(yield* fileLock(path)).toBe(true)
            return tryLock()
          }),
        )
        expect(held).toBe(1)
        expect(tryLock()).toBe(0)
        rmSync(dir, { recursive: true, force: true })
      }),
  )

  it("enters a namespace by name with ip netns exec, by path with nsenter", () => {
    expect(namespacePrefix("")).toEqual([])
    expect(namespacePrefix("pod")).toEqual(["ip", "netns", "exec", "pod"])
    expect(namespacePrefix("/proc/42/ns/net")).toEqual(["nsenter", "--net=/proc/42/ns/net", "--"])
  })

  it("looks the proxy user up in passwd, defaulting to 1337", () => {
    const dir = mkdtempSync(join(tmpdir(), "mesh-ipt-"))
    const passwd = join(dir, "passwd")
    writeFileSync(passwd, "root:x:0:0::/root:/bin/sh\nmesh-proxy:x:2001:2001::/:/bin/false\n")
    expect(lookupUid("mesh-proxy", passwd)).toBe("2001")
    expect(lookupUid("nobody-here", passwd)).toBe("1337")
    rmSync(dir, { recursive: true, force: true })
  })
})
