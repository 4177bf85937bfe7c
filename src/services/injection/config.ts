/**
 * The injector ConfigMap's `config` key: policy, default templates, selectors, injected
 * annotations, aliases and the ConfigMap's own templates. A template named like a built-in one is
 * not executed (the built-in template is used: the reference's texts of those names are what it
 * ships, ported); any other is parsed here in the reference's template language, so a template
 * that cannot be parsed refuses the whole config (naming template and line) and the previous
 * config keeps serving, as in the reference. Field names are the reference's. Errors name the
 * field; invalid selectors are kept and reported when evaluated.
 */
import { Either } from "effect"
import { describeYamlLimitProblem, parseDocumentBounded } from "../config-model/bounded-yaml.js"
import { isObject, type Obj } from "../orchestrator/json.js"
import type { InjectionConfig } from "./contract.js"
import { parseLabelSelector } from "./label-selector.js"
import { BUILTIN_TEMPLATES, TemplateNames } from "./names.js"
import { type ParsedTemplate, parseInjectionTemplate } from "./template/index.js"

/** Used with no ConfigMap: inject unless opted out, with the sidecar template. */
export const defaultInjectionConfig: InjectionConfig = {
  policy: "enabled",
  defaultTemplates: [TemplateNames.sidecar],
  alwaysInjectSelector: [],
  neverInjectSelector: [],
  injectedAnnotations: {},
  customTemplates: [],
  executableTemplates: {},
  aliases: {},
}

/** Parses YAML (or JSON) into a mapping; empty text is an empty mapping. */
export const parseYamlObject = (text: string, what: string): Either.Either<Obj, string> => {
  // Nesting and node bounds as every config reader (config-model/yaml-limits.ts).
  const parsed = parseDocumentBounded(text, { uniqueKeys: true })
  if ("problem" in parsed) return Either.left(`${what}: ${describeYamlLimitProblem(parsed.problem)}`)
  const doc = parsed.document
  if (doc.errors.length > 0) {
    const first = doc.errors[0]
    const line = first?.linePos?.[0]?.line
    const reason = (first?.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "")
    return Either.left(`${what}: YAML syntax error${line !== undefined ? ` at line ${line}` : ""}: ${reason}`)
  }
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: 1000 })
  } catch (e) {
    return Either.left(`${what}: ${(e as Error).message}`)
  }
  if (value === null || value === undefined) return Either.right({})
  return isObject(value) ? Either.right(value) : Either.left(`${what}: must be a YAML mapping`)
}

const stringList = (value: unknown, field: string): Either.Either<ReadonlyArray<string>, string> =>
  value === undefined || value === null
    ? Either.right([])
    : Array.isArray(value) && value.every((v) => typeof v === "string")
      ? Either.right(value as Array<string>)
      : Either.left(`${field} must be a list of strings`)

const selectorList = (value: unknown, field: string): Either.Either<ReadonlyArray<Obj>, string> => {
  if (value === undefined || value === null) return Either.right([])
  if (!Array.isArray(value)) return Either.left(`${field} must be a list of label selectors`)
  for (const [i, entry] of value.entries()) {
    const parsed = parseLabelSelector(entry)
    if (Either.isLeft(parsed)) return Either.left(`${field}[${i}]: ${parsed.left}`)
  }
  return Either.right(value as Array<Obj>)
}

const stringMap = (value: unknown, field: string): Either.Either<Readonly<Record<string, string>>, string> => {
  if (value === undefined || value === null) return Either.right({})
  if (!isObject(value)) return Either.left(`${field} must be a mapping of strings`)
  const out: Record<string, string> = {}
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string") return Either.left(`${field}.${key} must be a string`)
    out[key] = v
  }
  return Either.right(out)
}

/** Parses the `config` key; a Left names the field (the caller keeps its previous config). */
export const parseInjectionConfig = (text: string): Either.Either<InjectionConfig, string> =>
  Either.gen(function* () {
    const raw = yield* parseYamlObject(text, "injection config")
    const policy = raw.policy ?? defaultInjectionConfig.policy
    if (policy !== "enabled" && policy !== "disabled") {
      return yield* Either.left(`policy must be "enabled" or "disabled", got ${JSON.stringify(policy)}`)
    }
    const defaultTemplates = yield* stringList(raw.defaultTemplates, "defaultTemplates")
    const templates = raw.templates ?? {}
    if (!isObject(templates)) return yield* Either.left("templates must be a mapping of name to template text")
    const executableTemplates: Record<string, ParsedTemplate> = {}
    for (const [name, text] of Object.entries(templates)) {
      if (typeof text !== "string") return yield* Either.left(`templates.${name} must be a template text`)
      if (BUILTIN_TEMPLATES.includes(name)) continue
      const parsed = parseInjectionTemplate(name, text)
      if (Either.isLeft(parsed)) return yield* Either.left(`templates.${name}: ${parsed.left.message}`)
      executableTemplates[name] = parsed.right
    }
    const aliasesRaw = raw.aliases ?? {}
    if (!isObject(aliasesRaw)) return yield* Either.left("aliases must be a mapping of name to a list of names")
    const aliases: Record<string, ReadonlyArray<string>> = {}
    for (const [name, list] of Object.entries(aliasesRaw)) aliases[name] = yield* stringList(list, `aliases.${name}`)
    return {
      policy,
      defaultTemplates: defaultTemplates.length > 0 ? defaultTemplates : defaultInjectionConfig.defaultTemplates,
      alwaysInjectSelector: yield* selectorList(raw.alwaysInjectSelector, "alwaysInjectSelector"),
      neverInjectSelector: yield* selectorList(raw.neverInjectSelector, "neverInjectSelector"),
      injectedAnnotations: yield* stringMap(raw.injectedAnnotations, "injectedAnnotations"),
      customTemplates: Object.keys(templates).sort(),
      executableTemplates,
      aliases,
    }
  })
