/**
 * The traffic-capture service: applies (or checks, or removes) the mesh's iptables rules for one
 * network namespace. `mesh-agent mesh-iptables` runs it standalone; the CNI plugin calls it as a
 * library. Its layers live in src/layers/iptables.
 */
import { Context, Data, type Duration, type Effect } from "effect"
import type { IptablesConfig, IptablesConfigError } from "./config.js"

export interface ApplyOptions {
  readonly config: IptablesConfig
  /** Print the restore input instead of running anything. */
  readonly dryRun: boolean
  /** Remove every mesh chain and rule; create nothing. */
  readonly cleanupOnly: boolean
  /** Replace drifted mesh rules instead of failing. */
  readonly reconcile: boolean
  /** Re-apply even when the rules are already in place. */
  readonly forceApply: boolean
  /** Apply nothing (validation may still run). */
  readonly skipRuleApply: boolean
  readonly runValidation: boolean
  readonly probePort: number
  readonly probeTimeout: Duration.Duration
  /** Name (`ip netns`) or path (`/proc/<pid>/ns/net`) of the namespace to work in; "" = own. */
  readonly networkNamespace: string
  readonly cniMode: boolean
  /** With dry run: the stand-in writes its standard input here. */
  readonly dryRunFilePath: string
}

export type ApplyAction = "applied" | "already-in-place" | "replaced" | "cleaned" | "dry-run" | "skipped"

export interface ApplyReport {
  /** What happened per family (IPv4 first). */
  readonly actions: ReadonlyArray<{ readonly family: 4 | 6; readonly action: ApplyAction }>
  /** The restore inputs given (or, in dry run, that would be given). */
  readonly restoreInputs: ReadonlyArray<{ readonly family: 4 | 6; readonly input: string }>
  /** Where the validation probe landed, when validation ran. */
  readonly validation: ReadonlyArray<string>
}

/** iptables (or ip, or the namespace tool) is not installed. */
export class IptablesMissingError extends Data.TaggedError("IptablesMissingError")<{ readonly message: string }> {}

/** The caller lacks CAP_NET_ADMIN (or cannot enter the namespace). */
export class IptablesPermissionError extends Data.TaggedError("IptablesPermissionError")<{
  readonly message: string
}> {}

/** A command failed for another reason. */
export class IptablesCommandError extends Data.TaggedError("IptablesCommandError")<{ readonly message: string }> {}

/** Mesh rules are present but differ from the wanted ones, and --reconcile was not given. */
export class IptablesDriftError extends Data.TaggedError("IptablesDriftError")<{ readonly message: string }> {}

/** The validation probe was not redirected. */
export class IptablesValidationError extends Data.TaggedError("IptablesValidationError")<{
  readonly message: string
}> {}

export type IptablesError =
  | IptablesConfigError
  | IptablesMissingError
  | IptablesPermissionError
  | IptablesCommandError
  | IptablesDriftError
  | IptablesValidationError

export interface IptablesShape {
  readonly apply: (options: ApplyOptions) => Effect.Effect<ApplyReport, IptablesError>
}

export class Iptables extends Context.Tag("mesh/Iptables")<Iptables, IptablesShape>() {}
