/**
 * What `meshctl x internal-debug` does once its flags are read (loaded lazily): ask one
 * control-plane instance (or every one with `--all`) for the debug page `<type>` over xDS, as
 * proxy-status does (control-plane-access.ts), and print the answer, JSON re-indented.
 */
import { Console, Effect } from "effect"
import { debugTargets } from "../control-plane-access.js"
import { controlPlaneSelector } from "../control-plane-selector.js"
import type { InternalDebugArgs } from "./internal-debug-options.js"

/** `syncz`, `/debug/syncz` and `debug/syncz` all name the same page. */
export const debugPath = (type: string): string => `/debug/${type.replace(/^\/+/, "").replace(/^debug\//, "")}`

const pretty = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text.replace(/\n$/, "")
  }
}

export const runInternalDebug = (args: InternalDebugArgs) =>
  Effect.gen(function* () {
    const targets = yield* debugTargets(
      { global: args.global, xdsAddress: args.xdsAddress, label: controlPlaneSelector(args.xdsLabel, args.revision) },
      args,
    )
    const asked = args.all ? targets : targets.slice(0, 1)
    const answers = yield* Effect.forEach(
      asked,
      (target) =>
        Effect.map(target.ask(debugPath(args.type).slice("/debug/".length)), (text) => ({
          name: target.name,
          text: pretty(text),
        })),
      { concurrency: "unbounded" },
    )
    for (const answer of answers) yield* Console.log(asked.length > 1 ? `${answer.name}:\n${answer.text}` : answer.text)
  }).pipe(Effect.scoped)
