/**
 * Applying the capture rules: one atomic `iptables-restore --noflush` per family that leaves
 * foreign chains alone; detection of an existing mesh rule set (skip, replace with --reconcile
 * or --force-apply, or fail on drift); --cleanup-only; TPROXY policy routing; the validation
 * probe; everything inside --network-namespace when given, serialized by a lock in-process and
 * by iptables' own `-w` lock across processes.
 */
import { accessSync, constants } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Console, Duration, Effect, Either, Layer } from "effect"
import { buildRules, type Rule, renderRestore, tproxyRouteCommands } from "../../services/iptables/builder.js"
import { validateIptablesConfig } from "../../services/iptables/config.js"
import {
  type ApplyAction,
  type ApplyOptions,
  type ApplyReport,
  Iptables,
  IptablesDriftError,
  type IptablesError,
  type IptablesShape,
  IptablesValidationError,
} from "../../services/iptables/service.js"
import {
  builtinNonJumpRules,
  checkArgs,
  hasLeftovers,
  leftovers,
  parseSave,
  removalLines,
  structuralDrift,
} from "../../services/iptables/state.js"
import { withScope } from "../../services/logging/logging.js"
import { checkResult, dryRunExec, type Exec, type ExecRequest, fileLock, nodeExec } from "./exec.js"
import { PROBE_SCRIPT, type ProbeOutput, probeInput } from "./probe.js"

type Family = 4 | 6

const binaries = (family: Family) =>
  family === 4
    ? { iptables: "iptables", save: "iptables-save", restore: "iptables-restore" }
    : { iptables: "ip6tables", save: "ip6tables-save", restore: "ip6tables-restore" }

export interface IptablesDeps {
  /** How commands run for a namespace ("" = own); tests swap this. */
  readonly execFor?: (namespace: string) => Exec
  /** The node binary the probe runs with. */
  readonly nodePath?: string
  /** The cross-process lock file; "" = in-process lock only. */
  readonly lockPath?: string
}

/** Where the cross-process lock lives: /run when writable (root), else the temp directory. */
export const defaultLockPath = (): string => {
  try {
    accessSync("/run", constants.W_OK)
    return "/run/mesh-iptables.lock"
  } catch {
    return join(tmpdir(), "mesh-iptables.lock")
  }
}

export const makeIptables = (deps: IptablesDeps = {}): Effect.Effect<IptablesShape> =>
  Effect.gen(function* () {
    const lock = yield* Effect.makeSemaphore(1)
    const execFor = deps.execFor ?? nodeExec
    const nodePath = deps.nodePath ?? process.execPath
    const lockPath = deps.lockPath ?? defaultLockPath()
    /** One writer at a time: in this process (semaphore) and across processes (flock). */
    const exclusive = <A, E>(effect: Effect.Effect<A, E>) =>
      lock.withPermits(1)(
        lockPath === ""
          ? effect
          : Effect.scoped(
              Effect.gen(function* () {
                const locked = yield* fileLock(lockPath)
                if (!locked) yield* Effect.logDebug(`no cross-process lock on ${lockPath} (flock unavailable)`)
                return yield* effect
              }),
            ),
      )

    const apply = (options: ApplyOptions): Effect.Effect<ApplyReport, IptablesError> =>
      Effect.gen(function* () {
        const config = yield* Either.match(validateIptablesConfig(options.config), {
          onLeft: Effect.fail,
          onRight: Effect.succeed,
        })
        const ruleSet = buildRules(config)
        for (const warning of ruleSet.warnings) yield* Effect.logWarning(warning)
        const families: ReadonlyArray<Family> = ruleSet.ipv6 ? [4, 6] : [4]
        const rulesOf = (family: Family) => (family === 4 ? ruleSet.v4 : ruleSet.v6)
        const actions: Array<{ family: Family; action: ApplyAction }> = []
        const restoreInputs: Array<{ family: Family; input: string }> = []
        const validation: Array<string> = []

        if (options.skipRuleApply) {
          yield* Effect.logInfo("skipping rule apply (--skip-rule-apply)")
          for (const family of families) actions.push({ family, action: "skipped" })
        } else if (options.dryRun) {
          // No system command runs: the stand-in only records (and writes DRY_RUN_FILE_PATH).
          const exec = dryRunExec(options.dryRunFilePath)
          for (const family of families) {
            if (options.cleanupOnly) {
              yield* Effect.logInfo(`dry run: would remove every mesh chain and rule (IPv${family})`)
            } else {
              const input = renderRestore(rulesOf(family))
              restoreInputs.push({ family, input })
              yield* Console.log(input.trimEnd())
              yield* exec({ command: binaries(family).restore, args: ["-w", "--noflush"], stdin: input })
            }
            actions.push({ family, action: "dry-run" })
          }
        } else {
          const exec = execFor(options.networkNamespace)
          const run = (request: ExecRequest) =>
            exec(request).pipe(Effect.flatMap((result) => checkResult(request, result)))
          yield* exclusive(
            Effect.gen(function* () {
              for (const family of families) {
                const outcome = yield* applyFamily(family, rulesOf(family), options, exec)
                actions.push({ family, action: outcome.action })
                if (outcome.input !== undefined) restoreInputs.push({ family, input: outcome.input })
              }
              // IPv6 binds the proxy's passthrough source ::6 on loopback, as IPv4 has 127.0.0.6.
              if (ruleSet.ipv6 && !options.cleanupOnly) {
                const result = yield* exec({ command: "ip", args: ["-6", "addr", "add", "::6/128", "dev", "lo"] })
                if (result.exitCode !== 0 && !/exists/i.test(result.stderr)) {
                  yield* checkResult({ command: "ip", args: ["-6", "addr", "add", "::6/128", "dev", "lo"] }, result)
                }
              }
              // TPROXY: packets marked by MESH_DIVERT / TPROXY are delivered locally.
              if (options.cleanupOnly) {
                for (const args of tproxyRouteCommands(config, "del")) {
                  // Policy rules may be duplicated (kernels accept identical ones): delete them all.
                  for (let attempt = 0; attempt < 16; attempt++) {
                    const result = yield* exec({ command: "ip", args })
                    if (result.exitCode !== 0 || args[2] !== "rule") break
                  }
                }
              } else {
                for (const args of tproxyRouteCommands(config, "add")) {
                  if (args[2] === "rule") {
                    // Add the policy rule only when missing, so re-runs do not stack duplicates.
                    const listed = yield* exec({
                      command: "ip",
                      args: args.map((arg, index) => (index === 3 ? "list" : arg)),
                    })
                    if (listed.exitCode === 0 && listed.stdout.trim() !== "") continue
                  }
                  const result = yield* exec({ command: "ip", args })
                  if (result.exitCode !== 0 && !/exists/i.test(result.stderr)) yield* run({ command: "ip", args })
                }
              }
            }),
          )
        }

        if (options.runValidation && !options.dryRun && !options.cleanupOnly) {
          const exec = execFor(options.networkNamespace)
          for (const family of families) {
            validation.push(yield* validate(family, config, options, exec, nodePath))
          }
        }
        return { actions, restoreInputs, validation }
      }).pipe(withScope("iptables"), Effect.withSpan("Iptables.apply"))

    return { apply }
  })

/** Single-quotes a word for sh. */
export const shellQuote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`

/** One family: read the state, then apply, skip, replace, clean or fail. */
const applyFamily = (family: Family, rules: ReadonlyArray<Rule>, options: ApplyOptions, exec: Exec) =>
  Effect.gen(function* () {
    const bin = binaries(family)
    const run = (request: ExecRequest) => exec(request).pipe(Effect.flatMap((result) => checkResult(request, result)))
    const restore = (input: string) =>
      Effect.gen(function* () {
        yield* Effect.logInfo(`running ${bin.restore} --noflush with:\n${input.trimEnd()}`)
        yield* run({ command: bin.restore, args: ["-w", "--noflush"], stdin: input })
      })
    /**
     * Which rules are installed (`iptables -C` each), checked in one shell so that entering
     * the namespace happens once, not once per rule.
     */
    const installedFlags = (candidates: ReadonlyArray<Rule>) =>
      Effect.gen(function* () {
        if (candidates.length === 0) return [] as ReadonlyArray<boolean>
        const script = candidates
          .map(
            (rule) => `${[bin.iptables, "-w", ...checkArgs(rule)].map(shellQuote).join(" ")} >/dev/null 2>&1; echo $?`,
          )
          .join("\n")
        const result = yield* run({ command: "sh", args: ["-c", script] })
        const codes = result.stdout.trim().split("\n")
        return candidates.map((_, index) => codes[index] === "0")
      })
    const installedOf = (candidates: ReadonlyArray<Rule>) =>
      Effect.map(installedFlags(candidates), (flags) => candidates.filter((_, index) => flags[index]))

    const saved = yield* run({ command: bin.save, args: [] })
    const state = parseSave(saved.stdout)
    const found = leftovers(state)

    if (options.cleanupOnly) {
      const extra = yield* installedOf(builtinNonJumpRules(rules))
      const input = renderRestore([], { prelude: removalLines(found, extra) })
      if (input === "") yield* Effect.logInfo(`IPv${family}: no mesh chains or rules to remove`)
      else yield* restore(input)
      return { action: "cleaned" as const, input: input === "" ? undefined : input }
    }

    if (!hasLeftovers(found)) {
      yield* Effect.logInfo(`IPv${family}: clean state, applying the mesh rules`)
      const input = renderRestore(rules)
      yield* restore(input)
      return { action: "applied" as const, input }
    }

    const drift = [...structuralDrift(state, rules)]
    if (drift.length === 0) {
      const flags = yield* installedFlags(rules)
      const missing = rules.findIndex((_, index) => !flags[index])
      if (missing !== -1) {
        const rule = rules[missing]!
        drift.push(`${rule.table}/${rule.chain}: rule "${rule.params.join(" ")}" is missing`)
      }
    }
    if (drift.length === 0 && !options.forceApply) {
      yield* Effect.logInfo(`IPv${family}: the mesh rules are already in place; nothing to do`)
      return { action: "already-in-place" as const, input: undefined }
    }
    if (drift.length > 0 && !options.reconcile && !options.forceApply) {
      return yield* new IptablesDriftError({
        message: `IPv${family}: mesh rules from an earlier run differ from the wanted ones (${drift.join("; ")}); rerun with --reconcile to replace them`,
      })
    }
    yield* Effect.logInfo(
      drift.length > 0
        ? `IPv${family}: replacing drifted mesh rules (${drift.join("; ")})`
        : `IPv${family}: re-applying the mesh rules (--force-apply)`,
    )
    const extra = yield* installedOf(builtinNonJumpRules(rules))
    const input = renderRestore(rules, { prelude: removalLines(found, extra) })
    yield* restore(input)
    return { action: "replaced" as const, input }
  })

const parseProbeOutput = (line: string, fallback: string): ProbeOutput => {
  try {
    return JSON.parse(line) as ProbeOutput
  } catch {
    return { error: fallback }
  }
}

/** Runs the probe child for one family; fails with the path that did not redirect. */
const validate = (
  family: Family,
  config: ApplyOptions["config"],
  options: ApplyOptions,
  exec: Exec,
  nodePath: string,
) =>
  Effect.gen(function* () {
    const uid = config.proxyUid.split(",")[0]?.trim()
    const gid = config.proxyGid.split(",")[0]?.trim()
    const input = probeInput(
      family,
      {
        proxyPort: Number(config.proxyPort),
        inboundCapturePort: Number(config.inboundCapturePort),
        probePort: options.probePort,
      },
      {
        ...(uid !== undefined && uid !== "" ? { uid: Number(uid) } : {}),
        ...(gid !== undefined && gid !== "" ? { gid: Number(gid) } : {}),
      },
      Duration.toMillis(options.probeTimeout),
    )
    const path = `IPv${family} ${family === 4 ? input.target : `[${input.target}]`}:${input.port}${
      input.uid !== undefined ? ` from uid ${input.uid}` : ""
    }`
    const result = yield* exec({ command: nodePath, args: ["-e", PROBE_SCRIPT, JSON.stringify(input)] })
    const line = result.stdout.trim().split("\n").pop() ?? ""
    const output = parseProbeOutput(line, result.stderr.trim() || `probe exited with ${result.exitCode}`)
    if (result.exitCode === 0 && output.landed !== undefined) {
      const message = `validation passed: ${path} was redirected to the ${output.landed} port ${output.port}`
      yield* Effect.logInfo(message)
      return message
    }
    const reason =
      output.landed === "probe"
        ? "it reached the probe listener directly"
        : output.timeout === true
          ? `nothing arrived within ${Duration.format(options.probeTimeout)}${output.lastError ? ` (last error: ${output.lastError})` : ""}`
          : (output.error ?? `probe exited with ${result.exitCode}`)
    return yield* new IptablesValidationError({
      message: `validation failed: ${path} was not redirected to port ${config.proxyPort} or ${config.inboundCapturePort}: ${reason}`,
    })
  })

/** The live layer: real commands (or the dry-run stand-in when asked). */
export const IptablesLive: Layer.Layer<Iptables> = Layer.effect(Iptables, makeIptables())

export const layerWith = (deps: IptablesDeps): Layer.Layer<Iptables> => Layer.effect(Iptables, makeIptables(deps))
