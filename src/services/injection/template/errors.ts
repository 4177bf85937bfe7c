/**
 * A template that cannot be parsed or run. Its message names the template and line as Go's
 * text/template does (`template: <name>:<line>: …`); the interpreter throws it internally and
 * its entry points (parse.ts, exec.ts) return it as a value.
 */
export class TemplateError extends Error {
  override readonly name = "TemplateError"
}
