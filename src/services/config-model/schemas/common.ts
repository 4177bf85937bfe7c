/**
 * Building blocks shared by the resource schemas: field validators with the reference mesh's
 * rules (hosts, ports, protocols, durations, selectors, exportTo, string matches) and helpers
 * that turn cross-field checks into field-path issues.
 */
import { Either, Schema } from "effect"
import { parseGoDurationNanos } from "../../config/duration.js"

// ---------------------------------------------------------------------------------------------
// CRD keywords

/** JSON Schema key under which a schema carries keywords for the generated CRD (see `structuralKeywords`). */
export const STRUCTURAL_KEYWORDS = "x-mesh-structural"

/**
 * Annotation giving the CRD generator OpenAPI keywords (bounds, patterns, value validations) for
 * a rule a filter of this schema enforces, which JSON Schema output cannot see. They must never
 * be stricter than the filter: the CRD would then refuse what `meshctl validate` accepts.
 */
export const structuralKeywords = (keywords: Readonly<Record<string, unknown>>) => structuralKeywordsOf(keywords)
function structuralKeywordsOf(keywords: Readonly<Record<string, unknown>>) {
  return { jsonSchema: { [STRUCTURAL_KEYWORDS]: keywords } } as const
}

/** CRD keywords refusing an object where more than one of `fields` is present. */
export const atMostOneOf = (...fields: ReadonlyArray<string>): Readonly<Record<string, unknown>> => {
  const pairs = fields.flatMap((a, i) => fields.slice(i + 1).map((b) => ({ required: [a, b] })))
  return pairs.length === 1 ? { not: pairs[0] } : { not: { anyOf: pairs } }
}

// ---------------------------------------------------------------------------------------------
// Cross-field checks

/** Collects problems of a cross-field check, each at a path relative to the checked value. */
export type Report = (path: ReadonlyArray<PropertyKey>, message: string) => void

/** Annotation carrying a cross-field check, so a second pass can run it when decoding failed below it. */
export const CrossFieldCheck: unique symbol = Symbol.for("mesh/config-model/CrossFieldCheck")
export type CrossFieldCheckFn = (value: unknown, report: Report) => void

/**
 * Adds a check that sees the whole decoded value and may report any number of problems, each
 * at its own path; it runs only when the value itself decoded (its fields are well-typed).
 */
export const checked =
  <S extends Schema.Schema.AnyNoContext>(check: (value: Schema.Schema.Type<S>, report: Report) => void) =>
  (self: S) =>
    self.pipe(
      Schema.filter(
        (value: Schema.Schema.Type<S>) => {
          const out: Array<Schema.FilterIssue> = []
          check(value, (path, message) => out.push({ path, message }))
          return out.length === 0 ? undefined : out
        },
        { [CrossFieldCheck]: check as CrossFieldCheckFn },
      ),
    )

/** A string refinement whose check returns a problem, or undefined when valid. */
export const stringWith = (
  check: (value: string) => string | undefined,
  identifier?: string,
  crd?: Readonly<Record<string, unknown>>,
) =>
  Schema.String.pipe(
    Schema.filter((value) => check(value), {
      ...(identifier === undefined ? {} : { identifier }),
      ...(crd === undefined ? {} : structuralKeywords(crd)),
    }),
  )

/** Optional field; `null` (an empty YAML value) counts as absent, as in protobuf JSON. */
export const opt = <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true, exact: true })

/** Optional field with a default applied when absent or null. */
export const withDefault = <S extends Schema.Schema.AnyNoContext>(schema: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { nullable: true, default: value })

export const StringList = Schema.Array(Schema.String)

/** An orchestrator label value (`labelValueProblem`): empty, or up to 63 of [-A-Za-z0-9_.] starting and ending alphanumeric. */
const LABEL_VALUE_KEYWORDS = { maxLength: 63, pattern: "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$" }
/** A map of label keys to values, the values bounded in the CRD as every label rule here checks them. */
const LabelMap = Schema.Record({
  key: Schema.String,
  value: Schema.String.annotations(structuralKeywordsOf(LABEL_VALUE_KEYWORDS)),
})
export const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })
/** An opaque structured value (protobuf Struct / Any). */
export const Struct = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A protobuf enum given by name; an unknown name is reported with the names accepted. */
export const Enum = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.String.pipe(
    Schema.filter((value): value is L[number] => values.includes(value), {
      message: (issue) => `unknown value ${JSON.stringify(issue.actual)}; expected one of ${values.join(", ")}`,
      jsonSchema: { enum: values },
    }),
  )

// ---------------------------------------------------------------------------------------------
// Names and hosts

const DNS1123_LABEL = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/
const DNS1123_LABEL_LOWER = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const WILDCARD_LABEL = /^(\*|(\*|\*-)?[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)$/

export const isDns1123Label = (value: string): boolean => value.length <= 63 && DNS1123_LABEL_LOWER.test(value)

const domainPreconditions = (domain: string): string | undefined => {
  if (domain.length === 0) return "empty domain name not allowed"
  if (domain.length > 255) return `domain name "${domain}" too long (max 255)`
  return undefined
}

const labelsProblem = (domain: string, rest: string): string | undefined => {
  const labels = rest.split(".")
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] ?? ""
    if (i === labels.length - 1 && label === "" && i > 0) continue // trailing dot
    if (label.length > 63 || !DNS1123_LABEL.test(label))
      return `domain name "${domain}" invalid (label "${label}" invalid)`
  }
  return undefined
}

/** A DNS name, no wildcard (`reviews`, `api.example.com`). */
export const fqdnProblem = (domain: string): string | undefined =>
  domainPreconditions(domain) ?? labelsProblem(domain, domain)

/** A DNS name whose first label may be a wildcard (`*`, `*.example.com`, `reviews.default.svc`). */
export const wildcardDomainProblem = (domain: string): string | undefined => {
  const pre = domainPreconditions(domain)
  if (pre !== undefined) return pre
  const dot = domain.indexOf(".")
  const first = dot < 0 ? domain : domain.slice(0, dot)
  if (first.length > 63 || !WILDCARD_LABEL.test(first))
    return `domain name "${domain}" invalid (label "${first}" invalid)`
  return dot < 0 ? undefined : labelsProblem(domain, domain.slice(dot + 1))
}

export const isWildcardHost = (host: string): boolean => host.startsWith("*")

// ---------------------------------------------------------------------------------------------
// Addresses

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/

export const isIPv4 = (value: string): boolean => IPV4.test(value)

export const isIPv6 = (value: string): boolean => {
  if (value.length < 2 || !/^[0-9a-fA-F:.]+$/.test(value)) return false
  let text = value
  let groupsNeeded = 8
  const lastColon = text.lastIndexOf(":")
  const tail = text.slice(lastColon + 1)
  if (tail.includes(".")) {
    if (!isIPv4(tail)) return false
    text = `${text.slice(0, lastColon + 1)}0:0`
  }
  const halves = text.split("::")
  if (halves.length > 2) return false
  const parse = (part: string) => (part === "" ? [] : part.split(":"))
  const groups = halves.flatMap(parse)
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false
  if (halves.length === 2) return groups.length < groupsNeeded
  groupsNeeded = 8
  return groups.length === groupsNeeded
}

export const isIP = (value: string): boolean => isIPv4(value) || isIPv6(value)

/** An IP address or a CIDR block. */
export const ipOrCidrProblem = (value: string): string | undefined => {
  const slash = value.indexOf("/")
  if (slash < 0) return isIP(value) ? undefined : `${value} is not a valid IP`
  const ip = value.slice(0, slash)
  const bits = value.slice(slash + 1)
  const max = isIPv4(ip) ? 32 : isIPv6(ip) ? 128 : -1
  if (max < 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${value}" is not a valid CIDR`
  return undefined
}

/** CRD keywords of `ipOrCidrProblem`: an IPv4 or IPv6 address or a CIDR block (the API server's formats). */
export const IP_OR_CIDR_KEYWORDS = { anyOf: [{ format: "ipv4" }, { format: "ipv6" }, { format: "cidr" }] }

export const unixAddressProblem = (path: string): string | undefined => {
  if (path === "") return "unix address must not be empty"
  if (path.startsWith("@")) return undefined
  if (!path.startsWith("/") || path.endsWith("/")) return `${path} is not an absolute path to a file`
  return undefined
}

export const UNIX_PREFIX = "unix://"

// ---------------------------------------------------------------------------------------------
// Ports and protocols

export const portProblem = (port: number): string | undefined =>
  Number.isInteger(port) && port >= 1 && port <= 65535 ? undefined : `port number ${port} must be in the range 1..65535`

/** A port number 1..65535. */
export const PortNumber = Schema.Number.pipe(
  Schema.filter((n) => portProblem(n), {
    identifier: "PortNumber",
    ...structuralKeywords({ type: "integer", minimum: 1, maximum: 65535 }),
  }),
)

/** A non-negative integer (uint32 fields). */
export const UInt = Schema.Number.pipe(
  Schema.filter(
    (n) => (Number.isInteger(n) && n >= 0 && n <= 4294967295 ? undefined : `${n} must be a non-negative integer`),
    structuralKeywords({ type: "integer", minimum: 0, maximum: 4294967295 }),
  ),
)

const INT32_KEYWORDS = { type: "integer", minimum: -2147483648, maximum: 2147483647 }

/** A signed 32-bit integer. */
export const Int32 = Schema.Number.pipe(
  Schema.filter(
    (n) => (Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 ? undefined : `${n} must be an integer`),
    structuralKeywords(INT32_KEYWORDS),
  ),
)

/**
 * Int32 with tighter CRD bounds that a rule elsewhere enforces (a second annotation replaces the
 * first, so the int32 keywords are repeated here).
 */
export const int32Within = (bounds: { readonly minimum?: number; readonly maximum?: number }) =>
  Int32.annotations(structuralKeywords({ ...INT32_KEYWORDS, ...bounds }))

/** Port names are RFC 1123 labels. */
export const portNameProblem = (name: string): string | undefined =>
  isDns1123Label(name) ? undefined : `invalid port name: ${name}`

export const PROTOCOLS = [
  "TCP",
  "UDP",
  "GRPC",
  "GRPC-Web",
  "HTTP",
  "HTTP_PROXY",
  "HTTP2",
  "HTTPS",
  "TLS",
  "Mongo",
  "Redis",
  "MySQL",
  "HBONE",
] as const

const PROTOCOL_BY_LOWER = new Map<string, string>(PROTOCOLS.map((p) => [p.toLowerCase(), p]))

/** The canonical protocol for a (case-insensitive) name, or undefined when unsupported. */
export const parseProtocol = (name: string): string | undefined => PROTOCOL_BY_LOWER.get(name.toLowerCase())

export const isHttpProtocol = (name: string): boolean => {
  const p = parseProtocol(name)
  return p === "HTTP" || p === "HTTP2" || p === "GRPC" || p === "GRPC-Web" || p === "HTTP_PROXY"
}
export const isTlsProtocol = (name: string): boolean => {
  const p = parseProtocol(name)
  return p === "HTTPS" || p === "TLS"
}

/** A pattern matching one of `names` in any letter case (RE2 and JavaScript alike: no flags), or empty. */
export const caseInsensitiveChoice = (names: ReadonlyArray<string>, orEmpty: boolean): string => {
  const letters = (name: string) =>
    [...name].map((c) => (c.toLowerCase() !== c.toUpperCase() ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join("")
  return `^(${names.map(letters).join("|")})${orEmpty ? "?" : ""}$`
}

export const protocolProblem = (name: string): string | undefined =>
  name === "" || parseProtocol(name) !== undefined
    ? undefined
    : `unsupported protocol: ${name} (supported: ${PROTOCOLS.join(", ")})`

/** A protocol name; empty means "detect". */
export const Protocol = stringWith(protocolProblem, "Protocol", { pattern: caseInsensitiveChoice(PROTOCOLS, true) })

// ---------------------------------------------------------------------------------------------
// Durations

/** Nanoseconds of a Go / protobuf duration string, or the problem. */
export const durationNanos = (value: string): Either.Either<bigint, string> => parseGoDurationNanos(value)

/** A Go / protobuf duration's grammar (units required), around which the parser trims white space. */
const DURATION_GRAMMAR = "^\\s*[-+]?(0|([0-9]*(\\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+)\\s*$"

/**
 * A duration in Go or protobuf form (`1s`, `0.5s`, `100ms`, `1h30m`), at least 1ms and with
 * millisecond precision, as the reference requires of its duration fields.
 */
export const Duration = stringWith(
  (value) => {
    const nanos = parseGoDurationNanos(value)
    if (Either.isLeft(nanos)) return `${nanos.left} (expected a duration such as "1s", "0.5s" or "100ms")`
    if (nanos.right < 1_000_000n) return "duration must be greater than 1ms"
    if (nanos.right % 1_000_000n !== 0n) return "only durations to ms precision are supported"
    return undefined
    // The CRD: the grammar, positive (no sign, some digit not 0); 1ms and ms precision stay with the filter.
  },
  "Duration",
  { pattern: DURATION_GRAMMAR, allOf: [{ pattern: "^[^-]*[1-9]" }] },
)

/** A duration that may be zero (some fields use 0s as "disabled"). */
export const DurationOrZero = stringWith(
  (value) => {
    const nanos = parseGoDurationNanos(value)
    if (Either.isLeft(nanos)) return `${nanos.left} (expected a duration such as "1s", "0.5s" or "100ms")`
    if (nanos.right < 0n) return "duration must not be negative"
    return undefined
  },
  "DurationOrZero",
  { pattern: DURATION_GRAMMAR },
)

// ---------------------------------------------------------------------------------------------
// Labels and selectors

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

export const labelKeyProblem = (key: string): string | undefined => {
  const slash = key.indexOf("/")
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined
  const name = slash >= 0 ? key.slice(slash + 1) : key
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) {
    return `invalid label key: "${key}"`
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) return `invalid label key: "${key}"`
  return undefined
}

export const labelValueProblem = (value: string): string | undefined =>
  value === "" || (value.length <= 63 && QUALIFIED_NAME.test(value)) ? undefined : `invalid label value: "${value}"`

/** Label maps (`labels`, `sourceLabels`): keys and values checked as the orchestrator does. */
export const Labels = LabelMap.pipe(
  checked((labels, report) => {
    for (const [key, value] of Object.entries(labels)) {
      const problem = labelKeyProblem(key) ?? labelValueProblem(value)
      if (problem !== undefined) report([key], problem)
    }
  }),
)

const selectorProblems = (labels: Readonly<Record<string, string>>, report: Report, at: ReadonlyArray<PropertyKey>) => {
  for (const [key, value] of Object.entries(labels)) {
    if (key === "") report(at, `empty key is not supported in selector: "${key}=${value}"`)
    else if (key.includes("*") || value.includes("*"))
      report([...at, key], `wildcard is not supported in selector: "${key}=${value}"`)
    else {
      const problem = labelKeyProblem(key) ?? labelValueProblem(value)
      if (problem !== undefined) report([...at, key], problem)
    }
  }
}

/** `selector: { matchLabels: {...} }` (security, telemetry, extensions kinds). */
export const WorkloadSelector = Schema.Struct({ matchLabels: opt(LabelMap) }).pipe(
  checked((selector, report) => selectorProblems(selector.matchLabels ?? {}, report, ["matchLabels"])),
)

/** `workloadSelector: { labels: {...} }` (networking kinds). */
export const NetworkingWorkloadSelector = Schema.Struct({ labels: opt(LabelMap) }).pipe(
  checked((selector, report) => selectorProblems(selector.labels ?? {}, report, ["labels"])),
)

/** `targetRef` / `targetRefs` entries (policy attachment). */
export const PolicyTargetReference = Schema.Struct({
  group: opt(Schema.String),
  kind: Schema.String,
  name: Schema.String,
  // Cross-namespace references are refused: the namespace may only be empty.
  namespace: opt(Schema.String.annotations(structuralKeywords({ maxLength: 0 }))),
}).pipe(
  checked((ref, report) => {
    if (ref.name === "") report(["name"], "targetRef name must be set")
    if (ref.namespace !== undefined && ref.namespace !== "") {
      report(["namespace"], "targetRef namespace must not be set; cross namespace referencing is not supported")
    }
    const group = ref.group ?? ""
    const allowed =
      (group === "" && ref.kind === "Service") ||
      ((group === "networking.mesh.io" || group === "networking.istio.io") && ref.kind === "ServiceEntry") ||
      (group === "gateway.networking.k8s.io" && ref.kind === "Gateway")
    if (!allowed) {
      report(
        ["kind"],
        `targetRef must be to one of Service, ServiceEntry or gateway Gateway but was ${group}/${ref.kind}`,
      )
    }
  }),
)

/** Checks that at most one of selector / targetRef / targetRefs is set. */
export const oneOfSelectorType = (
  spec: { readonly selector?: unknown; readonly targetRef?: unknown; readonly targetRefs?: ReadonlyArray<unknown> },
  report: Report,
) => {
  const set = [spec.selector !== undefined, spec.targetRef !== undefined, (spec.targetRefs?.length ?? 0) > 0].filter(
    Boolean,
  ).length
  if (set > 1) report([], "only one of targetRefs or workloadSelector can be set")
}

// ---------------------------------------------------------------------------------------------
// exportTo

/** `exportTo` rules: `.`, `*`, `~` (ServiceEntry only) or namespace names; no duplicates or mixes. */
export const exportToProblems = (
  exportTo: ReadonlyArray<string> | undefined,
  report: Report,
  options: { readonly serviceEntry?: boolean } = {},
) => {
  if (exportTo === undefined || exportTo.length === 0) return
  const seen = new Set<string>()
  exportTo.forEach((entry, index) => {
    if (seen.has(entry)) {
      report(["exportTo", index], `duplicate entries in exportTo for entry ${entry}`)
      return
    }
    seen.add(entry)
    if (entry === "." || entry === "*") return
    if (entry === "~") {
      if (!options.serviceEntry) report(["exportTo", index], `exportTo "~" is only allowed for ServiceEntry`)
      return
    }
    if (!isDns1123Label(entry)) report(["exportTo", index], `invalid exportTo namespace: "${entry}"`)
  })
  if (seen.has("*") && exportTo.length > 1) {
    report(["exportTo"], "cannot have both public (*) and non-public exportTo values for a resource")
  }
  if (seen.has("~") && exportTo.length > 1)
    report(["exportTo"], "cannot export service entry to no one (~) and someone")
}

// ---------------------------------------------------------------------------------------------
// String matches and regexes

/**
 * RE2 spellings JavaScript lacks, rewritten to their JavaScript equivalents: `(?P<name>`
 * named groups, `(?i)`-style flags (applied to the whole expression: close enough to check
 * syntax), `(?i:...)` flag groups and the `\A` / `\z` anchors.
 */
const toJavaScriptRegex = (re: string): { readonly source: string; readonly flags: string } => {
  let flags = ""
  let source = re.replace(/\(\?([imsU]+)\)/g, (_, f: string) => {
    for (const flag of ["i", "s", "m"]) if (f.includes(flag) && !flags.includes(flag)) flags += flag
    return ""
  })
  source = source
    .replace(/\(\?P</g, "(?<")
    .replace(/\(\?[imsU-]+:/g, "(?:")
    .replace(/\\A/g, "^")
    .replace(/\\z/g, "$")
  return { source, flags }
}

/**
 * Checks a regular expression (RE2 syntax in the reference): RE2-only spellings are translated,
 * constructs RE2 refuses (backreferences, lookaround) are rejected, the rest must compile.
 */
export const regexProblem = (re: string): string | undefined => {
  if (re.length > 1024) return "regex is too large, max length allowed is 1024"
  if (/\\[1-9]/.test(re) || /\(\?<?[=!]/.test(re)) {
    return `invalid regex "${re}": backreferences and lookaround are not supported (RE2 syntax)`
  }
  try {
    const { source, flags } = toJavaScriptRegex(re)
    new RegExp(source, flags)
    return undefined
  } catch (error) {
    const reason =
      error instanceof Error ? error.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, "") : String(error)
    return `invalid regex "${re}": ${reason}`
  }
}

export const Regex = stringWith(regexProblem, "Regex")

const makeStringMatch = (allowEmptyPrefix: boolean) =>
  Schema.Struct({
    exact: opt(Schema.String),
    prefix: opt(Schema.String),
    regex: opt(Schema.String),
  })
    .annotations(structuralKeywords(atMostOneOf("exact", "prefix", "regex")))
    .pipe(
      checked((match, report) => {
        const set = (["exact", "prefix", "regex"] as const).filter((k) => match[k] !== undefined)
        if (set.length > 1) report([], `only one of exact, prefix or regex may be set, found ${set.join(" and ")}`)
        if (!allowEmptyPrefix && match.prefix !== undefined && match.prefix === "") {
          report(["prefix"], "prefix string match should not be empty")
        }
        if (match.regex !== undefined) {
          if (match.regex === "") report(["regex"], "regex string match should not be empty")
          else {
            const problem = regexProblem(match.regex)
            if (problem !== undefined) report(["regex"], problem)
          }
        }
      }),
    )

/** StringMatch: exactly one of exact / prefix / regex; prefix and regex not empty. */
export const StringMatch = makeStringMatch(false)
/** StringMatch of a URI: an empty prefix matches every path. */
export const UriMatch = makeStringMatch(true)
export type StringMatch = typeof StringMatch.Type

/** Percent: a double 0..100. */
export const Percent = Schema.Struct({ value: opt(Schema.Number) })

export const percentageProblem = (value: number): string | undefined =>
  value < 0 || value > 100 || (value > 0 && value < 0.0001)
    ? `percentage ${value} is neither 0.0, nor in range [0.0001, 100.0]`
    : undefined

/** HTTP header names used as map keys or list entries. */
export const HEADER_NAME = /^[-_A-Za-z0-9]+$/
