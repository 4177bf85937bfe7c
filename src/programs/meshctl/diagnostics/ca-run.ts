/**
 * What `meshctl admin ca status|rotate-key` does once its flags are read (loaded lazily): ask one
 * control-plane instance for `/debug/ca_rotation`, or start a rotation with `/debug/ca_rotate_key`
 * (POST when asking the monitoring listener over HTTP), and print the answer.
 */
import { Console, Effect } from "effect"
import { controlPlaneFetch, debugTargets } from "../control-plane-access.js"
import { controlPlaneSelector } from "../control-plane-selector.js"
import type { CaArgs } from "./ca-options.js"

const pretty = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text.replace(/\n$/, "")
  }
}

export const runCa = (what: "status" | "rotate-key", args: CaArgs) =>
  Effect.gen(function* () {
    const path = what === "status" ? "ca_rotation" : "ca_rotate_key"
    if (what === "rotate-key" && /^https?:\/\//.test(args.xdsAddress)) {
      const url = `${args.xdsAddress.replace(/\/+$/, "")}/debug/${path}`
      return yield* Console.log(pretty(yield* controlPlaneFetch(url, args.timeout, { method: "POST" })))
    }
    const targets = yield* debugTargets(
      { global: args.global, xdsAddress: args.xdsAddress, label: controlPlaneSelector(args.selector, args.revision) },
      args,
    )
    // One instance: replicas sharing a root (USE_CACERTS_FOR_SELF_SIGNED_CA) follow its store.
    const target = targets[0]!
    yield* Console.log(pretty(yield* target.ask(path)))
  }).pipe(Effect.scoped)
