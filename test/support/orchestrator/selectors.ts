/**
 * Label and field selectors with the orchestrator's grammar and meaning: `!=` and `notin`
 * also match objects without the label; unknown field labels are refused with 400 as the
 * real server does.
 */
import type { KubeObject, ResourceType } from "./resources.js"
import { badRequest } from "./status.js"

export type Predicate = (o: KubeObject) => boolean

const KEY = "[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?"
const VALUE = "(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
const forms: ReadonlyArray<[RegExp, (m: RegExpMatchArray) => (labels: Record<string, string>) => boolean]> = [
  [new RegExp(`^!\\s*(${KEY})$`), (m) => (l) => !(m[1]! in l)],
  [
    new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`),
    (m) => {
      const values = m[3]!.split(",").map((v) => v.trim())
      if (values.some((v) => !new RegExp(`^${VALUE}$`).test(v))) throw parseError(m[0])
      return m[2] === "in"
        ? (l) => m[1]! in l && values.includes(l[m[1]!]!)
        : (l) => !(m[1]! in l && values.includes(l[m[1]!]!))
    },
  ],
  [
    new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`),
    (m) => (m[2] === "!=" ? (l) => l[m[1]!] !== m[3] : (l) => l[m[1]!] === m[3]),
  ],
  [
    new RegExp(`^(${KEY})\\s*(<|>)\\s*(-?\\d+)$`),
    (m) => (l) => {
      const value = Number.parseInt(l[m[1]!] ?? "", 10)
      return !Number.isNaN(value) && (m[2] === "<" ? value < Number(m[3]) : value > Number(m[3]))
    },
  ],
  [new RegExp(`^(${KEY})$`), (m) => (l) => m[1]! in l],
]

const parseError = (text: string) =>
  badRequest(`unable to parse requirement: found '${text}', expected: valid selector`)

/** Splits on commas outside parentheses. */
const requirements = (selector: string): Array<string> => {
  const out: Array<string> = []
  let depth = 0
  let current = ""
  for (const c of selector) {
    if (c === "(") depth++
    if (c === ")") depth--
    if (c === "," && depth === 0) {
      out.push(current)
      current = ""
    } else current += c
  }
  out.push(current)
  return out.map((r) => r.trim()).filter((r) => r !== "")
}

export const labelSelector = (selector: string | undefined): Predicate => {
  if (selector === undefined || selector.trim() === "") return () => true
  const tests = requirements(selector).map((requirement) => {
    for (const [pattern, build] of forms) {
      const m = requirement.match(pattern)
      if (m !== null) return build(m)
    }
    throw parseError(requirement)
  })
  return (o) => {
    const labels = o.metadata.labels ?? {}
    return tests.every((t) => t(labels))
  }
}

/** Splits on unescaped `sep`, keeping the escapes for the next stage. */
const splitUnescaped = (text: string, sep: string): Array<string> => {
  const out: Array<string> = []
  let current = ""
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\" && i + 1 < text.length) {
      current += text[i]! + text[i + 1]!
      i++
    } else if (text[i] === sep) {
      out.push(current)
      current = ""
    } else current += text[i]
  }
  out.push(current)
  return out
}
const unescapeValue = (v: string): string => v.replace(/\\(.)/g, "$1")

export const fieldSelector = (selector: string | undefined, type: ResourceType): Predicate => {
  if (selector === undefined || selector.trim() === "") return () => true
  const fields: Record<string, (o: KubeObject) => string> = {
    "metadata.name": (o) => o.metadata.name ?? "",
    "metadata.namespace": (o) => o.metadata.namespace ?? "",
    ...type.fields,
  }
  const tests = splitUnescaped(selector, ",").map((requirement) => {
    const m = requirement.trim().match(/^([A-Za-z0-9_.]+)\s*(==|=|!=)(.*)$/s)
    if (m === null) throw badRequest(`invalid selector: '${selector}'; can't understand '${requirement}'`)
    const get = fields[m[1]!]
    if (get === undefined) throw badRequest(`field label not supported: ${m[1]}`)
    const value = unescapeValue(m[3]!)
    return m[2] === "!=" ? (o: KubeObject) => get(o) !== value : (o: KubeObject) => get(o) === value
  })
  return (o) => tests.every((t) => t(o))
}
