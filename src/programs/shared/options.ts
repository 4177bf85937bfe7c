/**
 * Flag constructors with the Go command-line semantics the spec describes: booleans that
 * default to true (`--short`, `--short=false`), Go durations, uint16 ports, string lists
 * (`a,b,c` and repeated), string-to-string maps (`k=v,k2=v2`) and env fallbacks.
 */
import { Options } from "@effect/cli"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import { Config, type Duration, Effect, Either } from "effect"
import { parseGoDuration } from "../../services/config/duration.js"
import { describeConfigError, envVarConfig } from "../../services/config/env.js"

/**
 * What help shows about a flag that @effect/cli cannot: its default as the user would type it,
 * and the environment variable that stands in for it. Kept beside the option tree (keyed by the
 * identity of a pass-through mapping, which survives withDescription/withAlias rebuilding the
 * tree) rather than in the description, whose first paragraph the completion scripts show.
 */
export interface FlagNote {
  /** As typed on the command line (help quotes string values). */
  readonly default: string
  readonly env?: string | undefined
}
const flagNotes = new WeakMap<object, FlagNote>()

/** The note attached to an option-tree mapping function, if any (read by the help renderer). */
export const flagNoteOf = (mapping: unknown): FlagNote | undefined =>
  typeof mapping === "function" ? flagNotes.get(mapping) : undefined

/** Attaches `note` to `self` for help. */
export const withNote =
  (note: FlagNote) =>
  <A>(self: Options.Options<A>): Options.Options<A> => {
    const passThrough = (value: A) => Effect.succeed(value)
    flagNotes.set(passThrough, note)
    return Options.mapEffect(self, passThrough)
  }

/** A usage error with a message, as flag validation reports it. */
export const invalidFlag = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))
const invalid = invalidFlag

/**
 * A boolean flag with Go semantics: `--x` and `--x=true` give true, `--x=false` gives false;
 * absent, it reads the environment variable `env` when given, else `defaultValue`.
 * @effect/cli's booleans always default to false, so the bare flag underneath its built-in
 * default (`.options` of the WithDefault it returns) is what tells "absent" from "false".
 */
export const boolFlag = (name: string, defaultValue = false, env?: string): Options.Options<boolean> => {
  const bare = (Options.boolean(name) as unknown as { readonly options: Options.Options<boolean> }).options
  const note = withNote({ default: String(defaultValue), env })
  if (env === undefined) return bare.pipe(Options.withDefault(defaultValue), note)
  return Options.optional(bare).pipe(
    Options.mapEffect((given) =>
      given._tag === "Some"
        ? Effect.succeed(given.value)
        : Effect.mapError(envVarConfig(env, { type: "B", default: String(defaultValue), description: "" }), (error) =>
            invalid(describeConfigError(error).join("; ")),
          ),
    ),
    note,
  )
}

/**
 * The raw text of a flag: the flag when given, else the environment variable `env` when set
 * and non-empty, else the default. The flag overrides the environment where both exist.
 */
const rawText = (name: string, defaultValue: string, env?: string): Options.Options<string> => {
  const flag = Options.text(name)
  const note = withNote({ default: defaultValue, env })
  if (env === undefined) return flag.pipe(Options.withDefault(defaultValue), note)
  const fromEnv = Config.string(env).pipe(
    Config.option,
    Config.map((value) => (value._tag === "Some" && value.value !== "" ? value.value : defaultValue)),
  )
  return flag.pipe(Options.withFallbackConfig(fromEnv), note)
}

const source = (name: string, env?: string) => (env === undefined ? `--${name}` : `--${name} (or ${env})`)

/** A Go duration flag (`30s`, `1h0m0s`), optionally backed by an environment variable. */
export const durationFlag = (name: string, defaultValue: string, env?: string): Options.Options<Duration.Duration> =>
  rawText(name, defaultValue, env).pipe(
    Options.mapEffect((text) =>
      Either.match(parseGoDuration(text), {
        onLeft: (reason) => Effect.fail(invalid(`${source(name, env)}: ${reason}`)),
        onRight: Effect.succeed,
      }),
    ),
    Options.withPseudoName("duration"),
  )

/** An integer flag bounded to a range (uint16 ports, int32, ...). */
export const intFlag = (
  name: string,
  defaultValue: number,
  options: { min?: number; max?: number; env?: string } = {},
) => {
  const { min = -2147483648, max = 2147483647, env } = options
  return rawText(name, String(defaultValue), env).pipe(
    Options.mapEffect((text) => {
      const value = Number(text)
      if (!/^[+-]?\d+$/.test(text.trim()))
        return Effect.fail(invalid(`${source(name, env)}: expected an integer, got "${text}"`))
      return value < min || value > max
        ? Effect.fail(invalid(`${source(name, env)}: ${value} is out of range ${min}..${max}`))
        : Effect.succeed(value)
    }),
    Options.withPseudoName("int"),
  )
}

export const uint16Flag = (name: string, defaultValue: number, env?: string) =>
  intFlag(name, defaultValue, { min: 0, max: 65535, ...(env !== undefined ? { env } : {}) })

/** A float flag (`--orchestratorApiQPS 80`). */
export const floatFlag = (name: string, defaultValue: number, env?: string) =>
  rawText(name, String(defaultValue), env).pipe(
    Options.mapEffect((text) => {
      const value = Number(text)
      return text.trim() === "" || !Number.isFinite(value)
        ? Effect.fail(invalid(`${source(name, env)}: expected a number, got "${text}"`))
        : Effect.succeed(value)
    }),
    Options.withPseudoName("float"),
  )

export const textFlag = (name: string, defaultValue = "", env?: string) => rawText(name, defaultValue, env)

/** A choice among fixed words. */
export const choiceFlag = <const C extends ReadonlyArray<string>>(name: string, choices: C) =>
  Options.choice(name, choices)

/** A string list: comma-separated and/or repeated (`--registries Mock,Orchestrator`). */
export const listFlag = (name: string, defaultValue: ReadonlyArray<string> = []) =>
  Options.text(name).pipe(
    Options.repeated,
    withNote({ default: defaultValue.length === 0 ? "none" : defaultValue.join(",") }),
    Options.map((values) =>
      values.length === 0
        ? [...defaultValue]
        : values.flatMap((value) =>
            value
              .split(",")
              .map((item) => item.trim())
              .filter((item) => item !== ""),
          ),
    ),
  )

/** A string-to-string map: `--clusterAliases a=b,c=d` (repeatable). */
export const mapFlag = (name: string) =>
  listFlag(name).pipe(
    Options.mapEffect((items) => {
      const entries: Array<[string, string]> = []
      for (const item of items) {
        const eq = item.indexOf("=")
        if (eq <= 0) return Effect.fail(invalid(`--${name}: expected key=value, got "${item}"`))
        entries.push([item.slice(0, eq), item.slice(eq + 1)])
      }
      return Effect.succeed(Object.fromEntries(entries) as Readonly<Record<string, string>>)
    }),
  )

export const describe = Options.withDescription

/** The parsed values of a record of flags. */
export type FlagValues<T extends Record<string, Options.Options<unknown>>> = {
  readonly [K in keyof T]: T[K] extends Options.Options<infer A> ? A : never
}
