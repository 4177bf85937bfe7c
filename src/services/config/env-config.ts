/**
 * One configuration service per subsystem, derived from a binary's env table: the subsystem's
 * slice of the table (a `Pick` of variable names) plus the fields its flags give it.
 *
 *     export class CaConfig extends EnvConfig<CaConfig, CaFields>()("mesh/CaConfig", {
 *       table: discoveryEnv,
 *       names: ["ROOT_CA_DIR", ...],
 *       fields: { secureGrpcAddr: ..., ... },
 *     }) {}
 *
 * - `CaConfig.layerFromEnv(fields)` reads the slice with the table's own `envVarConfig` (so a bad
 *   value fails with the same `environment variable NAME: ...` text as the whole-table check) and
 *   merges the given fields (a value, or an effect for fields known only at start-up, such as the
 *   mesh config's trust domain) over the default fields.
 * - `CaConfig.layerFromValues(values, fields)` takes the slice from a table the binary already
 *   parsed (its whole-table check at start), so no variable is read from the environment twice;
 *   `fields` may be an effect here too.
 * - `CaConfig.layer(overrides)` needs no environment: the table's defaults and the default fields,
 *   overridden by `overrides` (tests and embedders).
 */
import { Config, type ConfigError, ConfigProvider, Context, Effect, Layer, type Scope } from "effect"
import { type EnvTable, type EnvValues, envVarConfig } from "./env.js"

export interface EnvConfigOptions<T extends EnvTable, K extends keyof T, F> {
  /** The binary's table (`discoveryEnv`, `agentEnv`, ...). */
  readonly table: T
  /** The variables this subsystem reads. */
  readonly names: ReadonlyArray<K>
  /** Defaults of the flag-derived fields (the flags' own defaults). */
  readonly fields: F
}

/**
 * `EnvConfig<Self, Fields>()(id, options)`: the base class of a config Tag (curried so that the
 * Tag's own type and its fields' type are given while the table and names are inferred).
 */
export const EnvConfig =
  <Self, F extends object = Record<never, never>>() =>
  <const Id extends string, T extends EnvTable, const K extends keyof T & string>(
    id: Id,
    options: EnvConfigOptions<T, K, F>,
  ) => {
    type Env = Pick<EnvValues<T>, K>
    type Shape = Env & F
    const config = Config.all(
      Object.fromEntries(options.names.map((name) => [name, envVarConfig(name, options.table[name]!)])),
    ) as unknown as Config.Config<Env>
    let defaults: Shape | undefined
    // The table's defaults parse with the same rules as the environment (an empty provider).
    const tableDefaults = (): Shape =>
      (defaults ??= {
        ...Effect.runSync(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map()))),
        ...options.fields,
      } as Shape)
    return class EnvConfigTag extends Context.Tag(id)<Self, Shape>() {
      /** The variables of the slice. */
      static readonly names: ReadonlyArray<K> = options.names
      /** The slice as a Config (every bad variable reported, as in `envTableConfig`). */
      static readonly config: Config.Config<Env> = config
      /** Table defaults and default fields. */
      static defaults(): Shape {
        return tableDefaults()
      }
      /** Reads the slice from the environment and merges `fields` over the default fields. */
      static layerFromEnv<E = never, R = never>(
        fields: Partial<F> | Effect.Effect<Partial<F>, E, R> = {},
      ): Layer.Layer<Self, ConfigError.ConfigError | E, Exclude<R, Scope.Scope>> {
        const given = (Effect.isEffect(fields) ? fields : Effect.succeed(fields)) as Effect.Effect<Partial<F>, E, R>
        // Scoped: a field may be backed by something that lives as long as the layer (an informer).
        return Layer.scoped(
          EnvConfigTag,
          Effect.zipWith(config, given, (env, flags) => ({ ...options.fields, ...flags, ...env }) as Shape),
        )
      }
      /**
       * The slice picked from an already parsed table (extra variables ignored), `fields` (a value
       * or an effect, as for `layerFromEnv`) over the default fields. Reads no environment.
       */
      static layerFromValues<E = never, R = never>(
        values: Env,
        fields: Partial<F> | Effect.Effect<Partial<F>, E, R> = {},
      ): Layer.Layer<Self, E, Exclude<R, Scope.Scope>> {
        const slice = Object.fromEntries(options.names.map((name) => [name, values[name]])) as Env
        const given = (Effect.isEffect(fields) ? fields : Effect.succeed(fields)) as Effect.Effect<Partial<F>, E, R>
        return Layer.scoped(
          EnvConfigTag,
          Effect.map(given, (flags) => ({ ...options.fields, ...flags, ...slice }) as Shape),
        )
      }
      /** The defaults overridden by `overrides`; reads no environment. */
      static layer(overrides: Partial<Shape> = {}): Layer.Layer<Self> {
        return Layer.succeed(EnvConfigTag, { ...tableDefaults(), ...overrides } as Shape)
      }
    }
  }
