/** Flag semantics: Go booleans, durations, lists, maps, bounded integers and env fallbacks. */
import { Command, type Options } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either } from "effect"
import {
  boolFlag,
  durationFlag,
  floatFlag,
  intFlag,
  listFlag,
  mapFlag,
  textFlag,
  uint16Flag,
} from "../../../src/programs/shared/options.js"

/** Parses argv with one command holding `options`; returns the value or the failure. */
const parse = <A>(options: Options.Options<A>, argv: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  let seen: A | undefined
  const command = Command.make("t", { value: options }, ({ value }) => Effect.sync(() => (seen = value)))
  return Command.run(command, { name: "t", version: "0" })(["node", "t", ...argv]).pipe(
    Effect.map(() => seen as A),
    Effect.either,
    Effect.provide(NodeContext.layer),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
  )
}

describe("boolFlag", () => {
  it.effect("true-by-default flags: absent, bare, =false, =true", () =>
    Effect.gen(function* () {
      const flag = boolFlag("short", true)
      expect(yield* parse(flag, [])).toEqual(Either.right(true))
      expect(yield* parse(flag, ["--short"])).toEqual(Either.right(true))
      expect(yield* parse(flag, ["--short=false"])).toEqual(Either.right(false))
      expect(yield* parse(flag, ["--short=true"])).toEqual(Either.right(true))
    }),
  )
  it.effect("false-by-default flags", () =>
    Effect.gen(function* () {
      expect(yield* parse(boolFlag("profile"), [])).toEqual(Either.right(false))
      expect(yield* parse(boolFlag("profile"), ["--profile"])).toEqual(Either.right(true))
    }),
  )
  it.effect("env-backed: flag beats environment beats default", () =>
    Effect.gen(function* () {
      const flag = boolFlag("repair-enabled", true, "REPAIR_ENABLED")
      expect(yield* parse(flag, [])).toEqual(Either.right(true))
      expect(yield* parse(flag, [], { REPAIR_ENABLED: "false" })).toEqual(Either.right(false))
      expect(yield* parse(flag, ["--repair-enabled"], { REPAIR_ENABLED: "false" })).toEqual(Either.right(true))
      expect(yield* parse(flag, ["--repair-enabled=false"])).toEqual(Either.right(false))
      expect(Either.isLeft(yield* parse(flag, [], { REPAIR_ENABLED: "perhaps" }))).toBe(true)
    }),
  )
})

describe("durationFlag", () => {
  it.effect("parses Go durations, falls back to the environment, rejects nonsense", () =>
    Effect.gen(function* () {
      const flag = durationFlag("keepaliveInterval", "30s", "GRPC_KEEPALIVE_INTERVAL")
      const millis = (result: Either.Either<Duration.Duration, unknown>) => Either.map(result, Duration.toMillis)
      expect(millis(yield* parse(flag, []))).toEqual(Either.right(30_000))
      expect(millis(yield* parse(flag, ["--keepaliveInterval", "1m30s"]))).toEqual(Either.right(90_000))
      expect(millis(yield* parse(flag, [], { GRPC_KEEPALIVE_INTERVAL: "5s" }))).toEqual(Either.right(5_000))
      expect(millis(yield* parse(flag, ["--keepaliveInterval=2s"], { GRPC_KEEPALIVE_INTERVAL: "5s" }))).toEqual(
        Either.right(2_000),
      )
      expect(Either.isLeft(yield* parse(flag, ["--keepaliveInterval", "often"]))).toBe(true)
      const max = yield* parse(durationFlag("age", "2562047h47m16.854775807s"), [])
      expect(Either.map(max, Duration.toNanos)).toEqual(
        Either.right(expect.objectContaining({ value: 9223372036854775807n })),
      )
    }),
  )
})

describe("numbers, lists and maps", () => {
  it.effect("bounds integers and ports", () =>
    Effect.gen(function* () {
      expect(yield* parse(uint16Flag("ctrlz_port", 9876), [])).toEqual(Either.right(9876))
      expect(Either.isLeft(yield* parse(uint16Flag("ctrlz_port", 9876), ["--ctrlz_port", "65536"]))).toBe(true)
      expect(Either.isLeft(yield* parse(intFlag("count", 1), ["--count", "1.5"]))).toBe(true)
      expect(yield* parse(intFlag("mode", 384, { env: "ORCHCONFIG_MODE" }), [], { ORCHCONFIG_MODE: "420" })).toEqual(
        Either.right(420),
      )
      expect(yield* parse(floatFlag("qps", 80), ["--qps", "12.5"])).toEqual(Either.right(12.5))
      expect(Either.isLeft(yield* parse(floatFlag("qps", 80), ["--qps", "fast"]))).toBe(true)
    }),
  )
  it.effect("splits comma lists and repeated flags; parses key=value maps", () =>
    Effect.gen(function* () {
      expect(yield* parse(listFlag("registries", ["Orchestrator"]), [])).toEqual(Either.right(["Orchestrator"]))
      expect(yield* parse(listFlag("registries"), ["--registries", "Mock,Orchestrator"])).toEqual(
        Either.right(["Mock", "Orchestrator"]),
      )
      expect(yield* parse(listFlag("registries"), ["--registries", "Mock", "--registries", "Orchestrator"])).toEqual(
        Either.right(["Mock", "Orchestrator"]),
      )
      expect(yield* parse(mapFlag("clusterAliases"), ["--clusterAliases", "a=b,c=d=e"])).toEqual(
        Either.right({ a: "b", c: "d=e" }),
      )
      expect(Either.isLeft(yield* parse(mapFlag("clusterAliases"), ["--clusterAliases", "novalue"]))).toBe(true)
      expect(yield* parse(textFlag("clusterID", "Orchestrator", "CLUSTER_ID"), [], { CLUSTER_ID: "east" })).toEqual(
        Either.right("east"),
      )
    }),
  )
})
