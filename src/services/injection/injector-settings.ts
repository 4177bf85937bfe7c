/**
 * The injector's configuration as the webhook and `meshctl orch-inject` read it: the injector
 * ConfigMap's `config` and `values` texts (or files of the same content) parsed together, with the
 * built-in defaults for a text that is absent (src/layers/injection/injector-source.ts keeps the
 * webhook's up to date).
 */
import { Either } from "effect"
import { defaultInjectionConfig, parseInjectionConfig } from "./config.js"
import type { InjectionConfig, InjectionValues } from "./contract.js"
import { BUILTIN_TEMPLATES } from "./names.js"
import { defaultInjectionValues, parseInjectionValues } from "./values.js"

export interface InjectorSettings {
  readonly config: InjectionConfig
  readonly values: InjectionValues
  /** Where they came from, for logs ("built-in defaults", a file, a ConfigMap). */
  readonly origin: string
}

export interface InjectorSettingsRead {
  readonly settings: InjectorSettings
  /** Things worth a warning (ConfigMap templates shadowed by built-in ones, fields ignored). */
  readonly warnings: ReadonlyArray<string>
}

/** A text and what to call it in messages (a file path, `ConfigMap ns/name key config`). */
export interface NamedText {
  readonly name: string
  readonly text: string
}

export const defaultInjectorSettings = (): InjectorSettings => ({
  config: defaultInjectionConfig,
  values: defaultInjectionValues,
  origin: "built-in defaults",
})

/**
 * Parses the `config` and `values` texts (either may be absent: its defaults then); Left with
 * every problem, each naming its text.
 */
export const readInjectorSettings = (
  sources: { readonly config?: NamedText | undefined; readonly values?: NamedText | undefined },
  origin: string,
): Either.Either<InjectorSettingsRead, ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const warnings: Array<string> = []
  let config = defaultInjectionConfig
  let values = defaultInjectionValues
  if (sources.config !== undefined) {
    const parsed = parseInjectionConfig(sources.config.text)
    if (Either.isLeft(parsed)) problems.push(`${sources.config.name}: ${parsed.left}`)
    else {
      config = parsed.right
      // Said once per configuration read, rather than on every pod the built-in templates serve.
      const shadowed = config.customTemplates.filter((name) => BUILTIN_TEMPLATES.includes(name))
      if (shadowed.length > 0) {
        warnings.push(
          `${sources.config.name}: templates ${shadowed.join(", ")} are not executed (the mesh's built-in templates of the same names are used)`,
        )
      }
    }
  }
  if (sources.values !== undefined) {
    const parsed = parseInjectionValues(sources.values.text)
    if (Either.isLeft(parsed)) problems.push(`${sources.values.name}: ${parsed.left}`)
    else values = parsed.right
  }
  if (problems.length > 0) return Either.left(problems)
  return Either.right({ settings: { config, values, origin }, warnings })
}
