/**
 * Programs a pod's in-pod redirection inside its network namespace (entered with nsenter, the
 * namespace named by a path such as `/proc/<pid>/fd/<n>`): per family one atomic
 * `iptables-restore --noflush` that first removes any mesh chains and jumps already there (an
 * earlier ADD of the same sandbox, or rules of an older version) and then writes the wanted
 * ones, so running it twice leaves one set; then the policy rule and local route that deliver
 * the node proxy's marked connections. Serialized with the sidecar capture's lock (one writer
 * per node) and iptables' own `-w` lock.
 */
import { Effect } from "effect"
import {
  type InpodSettings,
  inpodRouteCommands,
  inpodRules,
  type PodOverrides,
} from "../../services/cni/inpod-rules.js"
import { renderRestore } from "../../services/iptables/builder.js"
import type { IptablesError } from "../../services/iptables/service.js"
import { leftovers, parseSave, removalLines } from "../../services/iptables/state.js"
import { checkResult, type Exec, type ExecRequest, fileLock, nodeExec } from "../iptables/exec.js"
import { defaultLockPath } from "../iptables/iptables.js"

export interface InpodApplyReport {
  /** The restore input given per family. */
  readonly restoreInputs: ReadonlyArray<{ readonly family: 4 | 6; readonly input: string }>
  /** Whether mesh rules were already there and were replaced. */
  readonly replaced: boolean
}

const binaries = (family: 4 | 6) =>
  family === 4
    ? { save: "iptables-save", restore: "iptables-restore" }
    : { save: "ip6tables-save", restore: "ip6tables-restore" }

export const applyInpodRules = (
  namespacePath: string,
  settings: InpodSettings,
  overrides: PodOverrides,
  execFor: (namespace: string) => Exec = nodeExec,
  lockPath: string = defaultLockPath(),
): Effect.Effect<InpodApplyReport, IptablesError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const exec = execFor(namespacePath)
      const run = (request: ExecRequest) => exec(request).pipe(Effect.flatMap((result) => checkResult(request, result)))
      if (lockPath !== "") yield* fileLock(lockPath)
      const ruleSet = inpodRules(settings, overrides)
      const restoreInputs: Array<{ family: 4 | 6; input: string }> = []
      let replaced = false
      for (const family of settings.ipv6 ? ([4, 6] as const) : ([4] as const)) {
        const bin = binaries(family)
        const found = leftovers(parseSave((yield* run({ command: bin.save, args: [] })).stdout))
        if (found.chains.length > 0 || found.jumps.length > 0) replaced = true
        const input = renderRestore(family === 4 ? ruleSet.v4 : ruleSet.v6, { prelude: removalLines(found) })
        yield* run({ command: bin.restore, args: ["-w", "--noflush"], stdin: input })
        restoreInputs.push({ family, input })
      }
      for (const args of inpodRouteCommands(settings, "add")) {
        const result = yield* exec({ command: "ip", args })
        // The policy rule may be there from an earlier ADD of this sandbox.
        if (result.exitCode !== 0 && !/exists/i.test(result.stderr)) yield* checkResult({ command: "ip", args }, result)
      }
      return { restoreInputs, replaced }
    }),
  ).pipe(Effect.withSpan("CniNodeAgent.applyInpodRules"))

/** The path through which commands enter a namespace this process holds open as `fd`. */
export const heldNamespacePath = (fd: number): string => `/proc/${process.pid}/fd/${fd}`
