/**
 * Runs a parsed template over data, as Go's text/template executes one: dot and `$`, variables
 * scoped to their block, pipelines passing each result as the next command's last argument,
 * lazy `and`/`or`, `range` over lists, maps (sorted keys) and integers, `break`/`continue`,
 * `template`/`include` of defined templates.
 *
 * Templates come from a ConfigMap, so a run is bounded (RenderLimits): the characters written
 * and the size of any value a function returns, the range iterations, the work done (each
 * node, command and function call, a call costing the size of what it returns), and the depth
 * of nested `template`/`include` calls. Going over a bound ends the run with an error naming
 * the bound, never with a partial output.
 *
 * Data objects listed in `structs` stand for the reference's Go structs (the pod, mesh config,
 * proxy config): their fields are found by Go name (`.ObjectMeta.Annotations`,
 * `.Spec.ServiceAccountName` → `serviceAccountName`) and a field they lack reads as "" (a zero
 * value), where a missing map key reads as nil (printed `<no value>`). Their proto getters
 * (`GetX`) read field X, and `GetValue`/`String` on a wrapper or enum field give the value.
 */
import { Either } from "effect"
import type { Arg, Command, Node, ParsedTemplate, Pipeline } from "./ast.js"
import { TemplateError } from "./errors.js"
import { actionText, isMap, truth, type Value } from "./go-values.js"

export interface RenderLimits {
  /** Characters written, and the largest string or list any function may return. */
  readonly maxOutputChars: number
  /** Range iterations over the whole run (nested ranges multiply; this bounds the product). */
  readonly maxRangeIterations: number
  /** Nodes, commands and function calls, a call costing 1 + its result's length (a string's / 64). */
  readonly maxSteps: number
  /** Nested `template`/`include` calls (a template calling itself ends here). */
  readonly maxCallDepth: number
}

/**
 * The defaults: 1 MiB of output (an injected pod's overlay is a few KB; the orchestrator refuses
 * objects over 1.5 MB), 100,000 iterations and 2,000,000 steps (the reference's shipped sidecar
 * template takes a few thousand on a pod with ten containers), 32 nested calls.
 */
export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  maxOutputChars: 1_048_576,
  maxRangeIterations: 100_000,
  maxSteps: 2_000_000,
  maxCallDepth: 32,
}

export interface FunctionContext {
  readonly limits: RenderLimits
  /** Runs a defined template and returns its text (Helm's `include`). */
  readonly include: (name: string, data: Value) => string
  /** Refuses a value about to be built over the size bound (before building it). */
  readonly checkSize: (size: number, what: string) => void
}

export type TemplateFunction = (args: ReadonlyArray<Value>, ctx: FunctionContext) => Value

export interface RenderOptions {
  readonly functions: Readonly<Record<string, TemplateFunction>>
  readonly limits?: RenderLimits | undefined
  readonly structs?: WeakSet<object> | undefined
}

class BreakSignal {}
class ContinueSignal {}

/** Go field name → JSON field name candidates (`APIVersion` → `apiVersion`, `HostIP` → `hostIP`). */
const jsonNames = (field: string): ReadonlyArray<string> => {
  if (field === "ObjectMeta") return ["metadata"]
  const lowerFirst = field.charAt(0).toLowerCase() + field.slice(1)
  const acronym = /^([A-Z]+)([A-Z][a-z].*)$/.exec(field)
  const lowerAcronym = acronym === null ? field.toLowerCase() : `${acronym[1]?.toLowerCase()}${acronym[2]}`
  return [lowerFirst, lowerAcronym]
}

const describeArg = (arg: Arg): string => {
  switch (arg._tag) {
    case "Dot":
      return "."
    case "Nil":
      return "nil"
    case "Literal":
      return JSON.stringify(arg.value)
    case "Field":
      return `.${arg.chain.join(".")}`
    case "Variable":
      return [arg.name, ...arg.chain].join(".")
    case "Function":
      return arg.name
    case "Sub":
      return `(…)${arg.chain.map((c) => `.${c}`).join("")}`
  }
}

class Run {
  private readonly out: Array<string> = []
  private outChars = 0
  private steps = 0
  private iterations = 0
  private depth = 0
  private vars: Array<{ readonly name: string; value: Value }> = []
  private readonly context: FunctionContext

  constructor(
    private readonly template: ParsedTemplate,
    private readonly functions: Readonly<Record<string, TemplateFunction>>,
    private readonly limits: RenderLimits,
    private readonly structs: WeakSet<object>,
    private current = template.name,
  ) {
    this.context = {
      limits,
      include: (name, data) => this.callTemplate(name, data, 0, true),
      checkSize: (size, what) => {
        if (size > limits.maxOutputChars) {
          throw new TemplateError(`${what} of ${size} over the ${limits.maxOutputChars}-character bound`)
        }
      },
    }
  }

  private fail(line: number, message: string): never {
    throw new TemplateError(`template: ${this.current}:${line}: ${message}`)
  }

  private step(line: number, cost = 1): void {
    this.steps += cost
    if (this.steps > this.limits.maxSteps) {
      this.fail(
        line,
        `executing "${this.current}": more than ${this.limits.maxSteps} steps (the template's work bound)`,
      )
    }
  }

  private write(text: string, line: number): void {
    this.outChars += text.length
    if (this.outChars > this.limits.maxOutputChars) {
      this.fail(line, `executing "${this.current}": output over the ${this.limits.maxOutputChars}-character bound`)
    }
    this.out.push(text)
  }

  run(data: Value): string {
    this.vars = [{ name: "$", value: data }]
    this.walk(this.template.body, data)
    return this.out.join("")
  }

  /** A defined template's text over `data`; `capture` returns it instead of writing it. */
  private callTemplate(name: string, data: Value, line: number, capture: boolean): string {
    const body = this.template.defines.get(name)
    if (body === undefined) this.fail(line, `no such template "${name}"`)
    if (this.depth >= this.limits.maxCallDepth) {
      this.fail(line, `exceeded maximum template depth (${this.limits.maxCallDepth})`)
    }
    const saved = { vars: this.vars, current: this.current, out: this.out.length }
    this.depth++
    this.vars = [{ name: "$", value: data }]
    this.current = name
    try {
      this.walk(body as ReadonlyArray<Node>, data)
      if (!capture) return ""
      // Included text is a value, not output: take it back out of the output.
      const text = this.out.splice(saved.out).join("")
      this.outChars -= text.length
      return text
    } finally {
      this.depth--
      this.vars = saved.vars
      this.current = saved.current
    }
  }

  private walk(nodes: ReadonlyArray<Node>, dot: Value): void {
    for (const node of nodes) this.walkNode(node, dot)
  }

  private walkNode(node: Node, dot: Value): void {
    switch (node._tag) {
      case "Text":
        this.step(0)
        this.write(node.text, 0)
        return
      case "Action": {
        const value = this.evalPipeline(node.pipe, dot)
        if (node.pipe.vars.length === 0) this.write(actionText(value), node.pipe.line)
        return
      }
      case "If":
      case "With": {
        const mark = this.vars.length
        try {
          const value = this.evalPipeline(node.pipe, dot)
          if (truth(value)) this.walk(node.list, node._tag === "With" ? value : dot)
          else if (node.elseList !== undefined) this.walk(node.elseList, dot)
        } finally {
          this.vars.length = mark
        }
        return
      }
      case "Range":
        this.walkRange(node, dot)
        return
      case "Template": {
        this.step(node.line)
        const data = node.pipe === undefined ? undefined : this.evalPipeline(node.pipe, dot)
        this.callTemplate(node.name, data, node.line, false)
        return
      }
      case "Break":
        throw new BreakSignal()
      case "Continue":
        throw new ContinueSignal()
    }
  }

  private walkRange(node: Extract<Node, { _tag: "Range" }>, dot: Value): void {
    const mark = this.vars.length
    try {
      const value = this.evalPipeline({ ...node.pipe, vars: [] }, dot)
      const entries = this.rangeEntries(value, node.pipe.line)
      if (entries.length === 0) {
        if (node.elseList !== undefined) this.walk(node.elseList, dot)
        return
      }
      const [first, second] = node.pipe.vars
      for (const [key, element] of entries) {
        if (++this.iterations > this.limits.maxRangeIterations) {
          this.fail(
            node.pipe.line,
            `executing "${this.current}": more than ${this.limits.maxRangeIterations} range iterations (the template's iteration bound)`,
          )
        }
        const inner = this.vars.length
        if (second !== undefined) {
          this.vars.push({ name: first as string, value: key }, { name: second, value: element })
        } else if (first !== undefined) {
          this.vars.push({ name: first, value: element })
        }
        try {
          this.walk(node.list, element)
        } catch (signal) {
          if (signal instanceof BreakSignal) break
          if (!(signal instanceof ContinueSignal)) throw signal
        } finally {
          this.vars.length = inner
        }
      }
    } finally {
      this.vars.length = mark
    }
  }

  private rangeEntries(value: Value, line: number): ReadonlyArray<readonly [Value, Value]> {
    if (value === undefined || value === null || value === "") return []
    if (Array.isArray(value)) return value.map((v, i) => [i, v] as const)
    if (isMap(value)) {
      return Object.keys(value)
        .sort()
        .map((k) => [k, value[k]] as const)
    }
    if (typeof value === "number" && Number.isInteger(value)) {
      if (value > this.limits.maxRangeIterations) {
        this.fail(line, `range over ${value} is more than ${this.limits.maxRangeIterations} iterations`)
      }
      return Array.from({ length: Math.max(0, value) }, (_, i) => [i, i] as const)
    }
    return this.fail(line, `range can't iterate over ${actionText(value)}`)
  }

  private evalPipeline(pipe: Pipeline, dot: Value): Value {
    let value: Value
    let hasFinal = false
    for (const command of pipe.commands) {
      value = this.evalCommand(command, dot, hasFinal, value)
      hasFinal = true
    }
    if (pipe.vars.length > 0) {
      const name = pipe.vars[0] as string
      if (pipe.assign) {
        const slot = this.findVar(name, pipe.line)
        slot.value = value
      } else {
        this.vars.push({ name, value })
      }
    }
    return value
  }

  private findVar(name: string, line: number): { value: Value } {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      const v = this.vars[i]
      if (v?.name === name) return v
    }
    return this.fail(line, `undefined variable: ${name}`)
  }

  private evalCommand(command: Command, dot: Value, hasFinal: boolean, final: Value): Value {
    this.step(command.line)
    const [head, ...rest] = command.args
    if (head === undefined) return this.fail(command.line, "empty command")
    if (head._tag !== "Function") {
      if (rest.length > 0 || hasFinal) {
        this.fail(command.line, `can't give argument to non-function ${describeArg(head)}`)
      }
      return this.evalArg(head, dot, command.line)
    }
    const name = head.name
    const at = `executing "${this.current}" at <${name}>`
    // and/or stop at the first argument that decides (Go 1.18+), so guards like
    // `and .X .X.Y` never evaluate the second operand when the first is false.
    if (name === "and" || name === "or") {
      const operands = [...rest.map((a) => () => this.evalArg(a, dot, command.line))]
      if (hasFinal) operands.push(() => final)
      if (operands.length === 0)
        this.fail(command.line, `${at}: wrong number of args for ${name}: want at least 1 got 0`)
      let value: Value
      for (const operand of operands) {
        value = operand()
        if (name === "and" ? !truth(value) : truth(value)) return value
      }
      return value
    }
    const fn = this.functions[name]
    if (fn === undefined) return this.fail(command.line, `function "${name}" not defined`)
    const args = rest.map((a) => this.evalArg(a, dot, command.line))
    if (hasFinal) args.push(final)
    let result: Value
    try {
      result = fn(args, this.context)
    } catch (error) {
      if (error instanceof TemplateError && error.message.startsWith("template: ")) throw error
      const message = error instanceof Error ? error.message : String(error)
      return this.fail(command.line, `${at}: error calling ${name}: ${message}`)
    }
    const size = typeof result === "string" ? result.length : Array.isArray(result) ? result.length : 0
    if (size > this.limits.maxOutputChars) {
      this.fail(command.line, `${at}: ${name} returned a value over the ${this.limits.maxOutputChars}-character bound`)
    }
    // A string is built at memcpy speed; each list element is a value copied.
    this.step(command.line, typeof result === "string" ? Math.floor(size / 64) : size)
    return result
  }

  private evalArg(arg: Arg, dot: Value, line: number): Value {
    switch (arg._tag) {
      case "Dot":
        return dot
      case "Nil":
        return null
      case "Literal":
        return arg.value
      case "Field":
        return this.chain(dot, arg.chain, line)
      case "Variable":
        return this.chain(
          arg.name === "$" ? this.findVar("$", line).value : this.findVar(arg.name, line).value,
          arg.chain,
          line,
        )
      case "Function": {
        // A function named as an argument is called without arguments (`{{ len list }}`).
        const fn = this.functions[arg.name]
        if (fn === undefined) return this.fail(line, `function "${arg.name}" not defined`)
        return fn([], this.context)
      }
      case "Sub":
        return this.chain(this.evalPipeline(arg.pipe, dot), arg.chain, line)
    }
  }

  private chain(start: Value, fields: ReadonlyArray<string>, line: number): Value {
    let value = start
    for (const field of fields) value = this.field(value, field, line)
    return value
  }

  private field(receiver: Value, name: string, line: number): Value {
    // A missing value has no fields: the result is missing too (Go returns the zero value).
    if (receiver === undefined || receiver === null) return undefined
    if (!isMap(receiver)) {
      // The proto methods templates call on wrapper and enum fields (`.X.GetValue`,
      // `.InterceptionMode.String`): those fields are plain JSON values here.
      if (name === "GetValue" || name === "String") return receiver
      return this.fail(
        line,
        `can't evaluate field ${name} in type ${Array.isArray(receiver) ? "list" : typeof receiver}`,
      )
    }
    if (Object.hasOwn(receiver, name)) return receiver[name]
    if (!this.structs.has(receiver)) return undefined
    for (const candidate of jsonNames(name)) if (Object.hasOwn(receiver, candidate)) return receiver[candidate]
    // A proto getter (`.MeshConfig.GetDefaultConfig`) reads its field.
    if (/^Get[A-Z]/.test(name)) return this.field(receiver, name.slice(3), line)
    return ""
  }
}

/** Runs a template over data; the Left names the template, line and the bound or error. */
export const renderTemplate = (
  template: ParsedTemplate,
  data: Value,
  options: RenderOptions,
): Either.Either<string, TemplateError> => {
  try {
    const run = new Run(
      template,
      options.functions,
      options.limits ?? DEFAULT_RENDER_LIMITS,
      options.structs ?? new WeakSet(),
    )
    return Either.right(run.run(data))
  } catch (error) {
    if (error instanceof TemplateError) return Either.left(error)
    if (error instanceof RangeError) {
      // The call stack ran out despite the depth bounds (a very deep data structure printed).
      return Either.left(new TemplateError(`template: ${template.name}: ${error.message}`))
    }
    throw error
  }
}
