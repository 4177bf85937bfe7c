/**
 * Checks of annotation values, as the reference's injector validates them before rendering:
 * resource quantities, port lists, CIDR lists, booleans, interception modes. Each returns the
 * normalised value or why it is not acceptable (the caller names the annotation).
 */
import { Either } from "effect"

/** The orchestrator's resource quantity (`100m`, `1.5`, `128Mi`, `1e3`). */
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/

export const quantity = (text: string): Either.Either<string, string> =>
  QUANTITY.test(text.trim())
    ? Either.right(text.trim())
    : Either.left("not a resource quantity (e.g. 100m, 0.5, 128Mi, 1Gi)")

const splitList = (text: string): ReadonlyArray<string> =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")

const portProblem = (item: string): string | undefined => {
  if (!/^\d+$/.test(item)) return `"${item}" is not a port number`
  const port = Number(item)
  return port >= 1 && port <= 65535 ? undefined : `port ${item} is out of range 1-65535`
}

/** A comma-separated list of ports; empty is allowed (nothing listed). */
export const portList = (text: string): Either.Either<string, string> => {
  const items = splitList(text)
  for (const item of items) {
    const problem = portProblem(item)
    if (problem !== undefined) return Either.left(`${problem} (expected a comma-separated list of ports)`)
  }
  return Either.right(items.join(","))
}

/** `*` (every port) or a comma-separated list of ports. */
export const portListOrWildcard = (text: string): Either.Either<string, string> =>
  text.trim() === "*" ? Either.right("*") : portList(text)

const ipv4 = (text: string): boolean => {
  const parts = text.split(".")
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)
}

const ipv6 = (text: string): boolean => {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return false
  const doubles = text.split("::").length - 1
  if (doubles > 1) return false
  const groups = text.split(":").filter((g) => g !== "")
  const tail = groups.at(-1) ?? ""
  const v4Tail = tail.includes(".")
  if (v4Tail && !ipv4(tail)) return false
  const hexGroups = v4Tail ? groups.slice(0, -1) : groups
  if (!hexGroups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false
  const count = hexGroups.length + (v4Tail ? 2 : 0)
  return doubles === 1 ? count < 8 : count === 8
}

const cidrProblem = (item: string): string | undefined => {
  const [address, prefix, ...rest] = item.split("/")
  if (address === undefined || prefix === undefined || rest.length > 0 || !/^\d{1,3}$/.test(prefix)) {
    return `"${item}" is not a CIDR (address/prefix)`
  }
  const max = ipv4(address) ? 32 : ipv6(address) ? 128 : -1
  if (max < 0) return `"${item}" is not a CIDR: "${address}" is not an IP address`
  return Number(prefix) <= max ? undefined : `"${item}" has a prefix longer than ${max}`
}

/** A comma-separated list of CIDRs; empty is allowed. */
export const cidrList = (text: string): Either.Either<string, string> => {
  const items = splitList(text)
  for (const item of items) {
    const problem = cidrProblem(item)
    if (problem !== undefined) return Either.left(`${problem} (expected a comma-separated list of CIDRs)`)
  }
  return Either.right(items.join(","))
}

/** `*` (every address) or a comma-separated list of CIDRs. */
export const cidrListOrWildcard = (text: string): Either.Either<string, string> =>
  text.trim() === "*" ? Either.right("*") : cidrList(text)

/** Network interface names, comma separated. */
export const interfaceList = (text: string): Either.Either<string, string> => {
  const items = splitList(text)
  const bad = items.find((i) => !/^[A-Za-z0-9_.:@-]{1,15}$/.test(i))
  return bad === undefined
    ? Either.right(items.join(","))
    : Either.left(`"${bad}" is not an interface name (expected a comma-separated list of interfaces)`)
}

/** Go's strconv.ParseBool spellings, which the reference accepts for its boolean annotations. */
export const boolean = (text: string): Either.Either<boolean, string> => {
  const t = text.trim()
  if (["1", "t", "T", "true", "TRUE", "True"].includes(t)) return Either.right(true)
  if (["0", "f", "F", "false", "FALSE", "False"].includes(t)) return Either.right(false)
  return Either.left("not a boolean (true or false)")
}

/** A whole number within [min, max] (probe timings, ports). */
export const integerIn =
  (min: number, max: number) =>
  (text: string): Either.Either<number, string> => {
    const t = text.trim()
    if (!/^\d+$/.test(t)) return Either.left(`not a whole number (expected ${min}-${max})`)
    const n = Number(t)
    return n >= min && n <= max ? Either.right(n) : Either.left(`${n} is out of range ${min}-${max}`)
  }

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * A JSON map of name → object (the user volume annotations), turned into named entries; a JSON
 * list of objects that carry their own `name` is accepted too.
 */
export const namedObjects = (text: string): Either.Either<ReadonlyArray<Record<string, unknown>>, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Either.left("not valid JSON")
  }
  if (Array.isArray(parsed)) {
    const named = parsed.filter((x): x is Record<string, unknown> => isPlainObject(x) && typeof x.name === "string")
    return named.length === parsed.length ? Either.right(named) : Either.left("every item of the list needs a name")
  }
  if (!isPlainObject(parsed)) return Either.left("expected a JSON object of name → definition")
  const out: Array<Record<string, unknown>> = []
  for (const [name, value] of Object.entries(parsed)) {
    if (!isPlainObject(value)) return Either.left(`the entry "${name}" is not an object`)
    out.push({ name, ...value })
  }
  return Either.right(out)
}

/** An orchestrator object name (a ConfigMap's): DNS-1123 subdomain. */
export const objectName = (text: string): Either.Either<string, string> => {
  const t = text.trim()
  return /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(t)
    ? Either.right(t)
    : Either.left("not an object name (lower-case letters, digits, '-' and '.')")
}

export type InterceptionMode = "REDIRECT" | "TPROXY" | "NONE"

export const interceptionMode = (text: string): Either.Either<InterceptionMode, string> => {
  const t = text.trim()
  return t === "REDIRECT" || t === "TPROXY" || t === "NONE"
    ? Either.right(t)
    : Either.left("unknown interception mode (expected REDIRECT, TPROXY or NONE)")
}
