/**
 * The reference's injection template language (Go text/template with sprig and the injector's
 * own functions), for templates an injector ConfigMap supplies: parse once, render per pod.
 */
import type { Either } from "effect"
import type { ParsedTemplate } from "./ast.js"
import { builtinFunctions } from "./builtins.js"
import type { TemplateError } from "./errors.js"
import type { TemplateFunction } from "./exec.js"
import { type InjectionFunctionInputs, injectionFunctions } from "./inject-functions.js"
import { parseTemplate } from "./parse.js"
import { sprigFunctions } from "./sprig.js"

export type { ParsedTemplate } from "./ast.js"
export { TemplateError } from "./errors.js"
export { DEFAULT_RENDER_LIMITS, type RenderLimits, renderTemplate } from "./exec.js"
export type { InjectionFunctionInputs } from "./inject-functions.js"

/** Every function an injection template may call: Go's, sprig's subset, the injector's, and `include`. */
export const templateFunctions = (inputs: InjectionFunctionInputs): Readonly<Record<string, TemplateFunction>> => ({
  ...sprigFunctions,
  ...injectionFunctions(inputs),
  ...builtinFunctions,
  include: (args, ctx) => {
    if (args.length !== 2) throw new Error(`wrong number of args for include: want 2 got ${args.length}`)
    return ctx.include(String(args[0]), args[1])
  },
})

/** The function names, for parsing (the set does not depend on the inputs). */
export const TEMPLATE_FUNCTION_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(templateFunctions({ env: {}, protoJson: () => undefined, proxyContainerName: "" })),
  "and",
  "or",
])

/** Parses an injection template, refusing unknown functions as the reference does. */
export const parseInjectionTemplate = (name: string, text: string): Either.Either<ParsedTemplate, TemplateError> =>
  parseTemplate(name, text, TEMPLATE_FUNCTION_NAMES)
