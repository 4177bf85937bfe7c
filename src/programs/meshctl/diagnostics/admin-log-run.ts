/**
 * What `meshctl admin log` does once its flags are read (loaded lazily): find the control-plane
 * pods (the one named, or all with the `-l` label in `-i`) and, through each pod's ControlZ
 * listener (`<pod IP>:--ctrlz_port`), show its log scopes or change them with one PUT per
 * scope. ControlZ serves changes to loopback callers only, so changes work from the control
 * plane's host or through a port-forward.
 */
import { Console, Effect } from "effect"
import { ControlPlaneUnavailable, controlPlaneJson, controlPlanePods, httpBase } from "../control-plane-access.js"
import { controlPlaneSelector } from "../control-plane-selector.js"
import { type ControlzScope, parseLevels, scopeChanges, scopeTable } from "./admin-log-levels.js"
import type { AdminLogArgs } from "./admin-log-options.js"

const parsed = (flag: string, text: string) => {
  const result = parseLevels(flag, text)
  return typeof result === "string" ? new ControlPlaneUnavailable({ message: result }) : Effect.succeed(result)
}

const render = (scopes: ReadonlyArray<ControlzScope>, output: AdminLogArgs["output"]) =>
  output === "json"
    ? Effect.succeed(JSON.stringify(scopes, null, 2))
    : output === "yaml"
      ? Effect.map(
          Effect.promise(() => import("yaml")),
          (module) =>
            ((module as unknown as { default?: typeof module }).default ?? module).stringify(scopes).trimEnd(),
        )
      : Effect.succeed(scopeTable(scopes))

export const runAdminLog = (args: AdminLogArgs) =>
  Effect.gen(function* () {
    const levels = yield* parsed("--level", args.level)
    const stackTraceLevels = yield* parsed("--stack-trace-level", args.stackTraceLevel)
    const pods = yield* controlPlanePods({
      global: args.global,
      xdsAddress: "",
      label: controlPlaneSelector(args.selector, args.revision),
      podName: args.pod,
    })
    const changing = args.reset || levels.length > 0 || stackTraceLevels.length > 0
    for (const pod of pods) {
      const base = `${httpBase(pod.ip, args.ctrlzPort)}/scopej/`
      const scopes = yield* controlPlaneJson<ReadonlyArray<ControlzScope>>(base, args.timeout)
      if (!changing) {
        if (pods.length > 1) yield* Console.log(`${pod.metadata.name}:`)
        yield* Console.log(yield* render(scopes, args.output))
        continue
      }
      const changes = scopeChanges(scopes, { reset: args.reset, levels, stackTraceLevels })
      yield* Effect.forEach(
        changes,
        ([scope, body]) =>
          controlPlaneJson(`${base}${encodeURIComponent(scope)}`, args.timeout, {
            method: "PUT",
            body: JSON.stringify(body),
          }),
        { concurrency: 8, discard: true },
      )
    }
  }).pipe(Effect.scoped)
