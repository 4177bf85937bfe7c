/**
 * `meshctl experimental authz check [<type>/]<name>[.<namespace>]`: the AuthorizationPolicies a
 * proxy enforces, read from its config dump — a saved one with `-f/--file` (spec part 3 rule 6:
 * no cluster is contacted), else live from the pod's proxy admin port. The work is in
 * authz-run.ts, loaded only when the command runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { checkOptions } from "./authz-options.js"

const check = (logging: Options.Options<LogSettings>) =>
  Command.make(
    "check",
    { ...checkOptions, pod: Args.text({ name: "[<type>/]<name>[.<namespace>]" }).pipe(Args.optional), logging },
    ({ logging: _, ...args }) =>
      Effect.flatMap(
        Effect.promise(() => import("./authz-run.js")),
        (module) => module.runAuthzCheck({ ...args, pod: Option.getOrElse(args.pod, () => "") }),
      ),
  ).pipe(
    Command.withDescription(
      "Check prints the AuthorizationPolicy applied to a pod by directly checking the proxy configuration of the pod",
    ),
  )

/** `meshctl x authz`: inspect authorization policies. */
export const authzCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("authz").pipe(
    Command.withDescription("Inspect Mesh AuthorizationPolicy"),
    Command.withSubcommands([check(logging)]),
  )
