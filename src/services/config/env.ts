/**
 * Typed environment variables. Each binary declares its variables once, as a table of
 * `EnvVar`s (type, default exactly as the spec prints it, description); the same table feeds
 * the Effect `Config` that start-up reads and the generated reference page in docs/.
 */
import { Config, ConfigError, Duration, Either } from "effect"
import { parseGoDuration } from "./duration.js"

/** The spec's type letters: boolean, string, integer, duration, float. */
export type EnvType = "B" | "S" | "I" | "D" | "F"

export interface EnvVar<T extends EnvType = EnvType> {
  readonly type: T
  /** Default as text, parsed with the same rules as a value from the environment; "" = unset. */
  readonly default: string
  readonly description: string
}

export type EnvValue<T extends EnvType> = T extends "B"
  ? boolean
  : T extends "I" | "F"
    ? number
    : T extends "D"
      ? Duration.Duration
      : string

export type EnvTable = Readonly<Record<string, EnvVar>>
export type EnvValues<T extends EnvTable> = { readonly [K in keyof T]: EnvValue<T[K]["type"]> }

const define =
  <T extends EnvType>(type: T) =>
  (defaultValue: string | number | boolean, description: string): EnvVar<T> => ({
    type,
    default: String(defaultValue),
    description,
  })

/** Constructors used by the tables: `env.bool(true, "...")`, `env.duration("100ms", "...")`, ... */
export const env = {
  bool: define("B"),
  string: define("S"),
  int: define("I"),
  duration: define("D"),
  float: define("F"),
}

export const typeNames: Record<EnvType, string> = {
  B: "a boolean (true or false)",
  S: "a string",
  I: "an integer",
  D: "a duration such as 100ms, 30s or 1h0m0s",
  F: "a number",
}

const BOOLEAN_WORDS: Record<string, boolean> = {
  "1": true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  "0": false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
}

const parseUntyped = (type: EnvType, raw: string): Either.Either<EnvValue<EnvType>, string> => {
  const text = raw.trim()
  const fail = Either.left(`expected ${typeNames[type]}, got "${raw}"`)
  switch (type) {
    case "B": {
      const value = BOOLEAN_WORDS[text]
      return value === undefined ? fail : Either.right(value)
    }
    case "I":
      return /^[+-]?\d+$/.test(text) ? Either.right(Number.parseInt(text, 10)) : fail
    case "F": {
      const value = Number(text)
      return text !== "" && Number.isFinite(value) ? Either.right(value) : fail
    }
    case "D":
      return Either.mapLeft(parseGoDuration(text), () => `expected ${typeNames.D}, got "${raw}"`)
    case "S":
      return Either.right(raw)
  }
}

/** Parses one raw value by type (Go's strconv rules for booleans and numbers). */
export const parseEnvValue = <T extends EnvType>(type: T, raw: string): Either.Either<EnvValue<T>, string> =>
  parseUntyped(type, raw) as Either.Either<EnvValue<T>, string>

/** The Config of one variable: the environment's value when set and non-empty, else the default. */
export const envVarConfig = <T extends EnvType>(name: string, spec: EnvVar<T>): Config.Config<EnvValue<T>> =>
  Config.string(name).pipe(
    Config.option,
    Config.mapOrFail((present) => {
      const raw = present._tag === "Some" && present.value !== "" ? present.value : spec.default
      if (spec.type !== "S" && raw === "" && spec.default === "") {
        // An unset variable with no default: numbers read as 0, booleans as false, durations as 0s.
        return Either.right((spec.type === "B" ? false : spec.type === "D" ? Duration.zero : 0) as EnvValue<T>)
      }
      return Either.mapLeft(parseEnvValue(spec.type, raw), (reason) =>
        ConfigError.InvalidData([], `environment variable ${name}: ${reason}`),
      )
    }),
  )

/** The Config of a whole table; every bad variable is reported, not just the first. */
export const envTableConfig = <T extends EnvTable>(table: T): Config.Config<EnvValues<T>> =>
  Config.all(
    Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, envVarConfig(name, spec)])),
  ) as unknown as Config.Config<EnvValues<T>>

/** Every problem in a ConfigError, one line each (the default rendering nests them in parentheses). */
export const describeConfigError = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...describeConfigError(error.left), ...describeConfigError(error.right)]
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return [error.path.length > 0 ? `${error.path.join(".")}: ${error.message}` : error.message]
  }
}
