/**
 * The string and number formats of the Gateway-API kinds (names, hostnames, groups, kinds,
 * header names, durations, ports, weights) and bounded lists, with the limits of the upstream
 * CRDs, so a document the API server would refuse is refused here with its field path.
 */
import { Schema } from "effect"
import { checked, isIP, PortNumber, StringMap, stringWith } from "../common.js"

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const KIND = /^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/
/** A domain-prefixed path (`example.com/controller`): controller names and custom address types. */
const DOMAIN_PREFIXED_PATH =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/
const PROTOCOL =
  /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$/
/** The Gateway-API duration: 1 to 4 groups of up to 5 digits and a unit (`1h30m`, `500ms`). */
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/

const lengthProblem = (what: string, value: string, min: number, max: number): string | undefined =>
  value.length < min
    ? `${what} must not be empty`
    : value.length > max
      ? `${what} must be at most ${max} characters, got ${value.length}`
      : undefined

/** Name of an object (`metadata.name` of what is referred to): 1..253 characters. */
export const ObjectName = stringWith((v) => lengthProblem("name", v, 1, 253), "ObjectName")

const sectionNameProblem = (v: string): string | undefined =>
  lengthProblem("section name", v, 1, 253) ??
  (DNS_SUBDOMAIN.test(v)
    ? undefined
    : `invalid name "${v}": must be lowercase alphanumeric, '-' or '.', starting and ending with an alphanumeric character`)

/** Listener names, sectionName, rule names: a lowercase RFC 1123 subdomain. */
export const SectionName = stringWith(sectionNameProblem, "SectionName")

export const Namespace = stringWith(
  (v) =>
    lengthProblem("namespace", v, 1, 63) ??
    (DNS_LABEL.test(v) ? undefined : `invalid namespace "${v}": must be a lowercase RFC 1123 label`),
  "Namespace",
)

/** An API group; empty is the core group. */
export const Group = stringWith(
  (v) =>
    v === ""
      ? undefined
      : (lengthProblem("group", v, 0, 253) ??
        (DNS_SUBDOMAIN.test(v) ? undefined : `invalid group "${v}": must be a lowercase DNS subdomain`)),
  "Group",
)

export const Kind = stringWith(
  (v) =>
    lengthProblem("kind", v, 1, 63) ??
    (KIND.test(v) ? undefined : `invalid kind "${v}": must start with a letter and hold only letters, digits and '-'`),
  "Kind",
)

const labelsTooLong = (host: string): boolean => host.split(".").some((label) => label.length > 63)

/** A hostname, optionally a wildcard `*.` prefix; no IP addresses. */
export const hostnameProblem = (v: string): string | undefined => {
  const bare = v.startsWith("*.") ? v.slice(2) : v
  const problem = lengthProblem("hostname", v, 1, 253)
  if (problem !== undefined) return problem
  if (!DNS_SUBDOMAIN.test(bare) || labelsTooLong(bare)) {
    return `invalid hostname "${v}": must be a lowercase DNS name, optionally prefixed by "*."`
  }
  if (isIP(v)) return `invalid hostname "${v}": IP addresses are not allowed`
  return undefined
}

export const Hostname = stringWith(hostnameProblem, "Hostname")

/** A hostname without wildcard (redirect and rewrite targets). */
export const PreciseHostname = stringWith((v) => {
  const problem = lengthProblem("hostname", v, 1, 253)
  if (problem !== undefined) return problem
  return DNS_SUBDOMAIN.test(v) && !labelsTooLong(v)
    ? undefined
    : `invalid hostname "${v}": must be a lowercase DNS name without wildcard`
}, "PreciseHostname")

export const headerNameProblem = (v: string): string | undefined =>
  lengthProblem("header name", v, 1, 256) ??
  (HEADER_NAME.test(v) ? undefined : `invalid header name "${v}": must be an HTTP token`)

export const HeaderName = stringWith(headerNameProblem, "HeaderName")

/** Header and query values: 1..4096 characters. */
export const HeaderValue = stringWith((v) => lengthProblem("value", v, 1, 4096), "HeaderValue")

export const ControllerName = stringWith(
  (v) =>
    lengthProblem("controller name", v, 1, 253) ??
    (DOMAIN_PREFIXED_PATH.test(v)
      ? undefined
      : `invalid controller name "${v}": must be a domain-prefixed path such as "example.com/gateway-controller"`),
  "ControllerName",
)

export const ProtocolType = stringWith(
  (v) =>
    lengthProblem("protocol", v, 1, 255) ??
    (PROTOCOL.test(v)
      ? undefined
      : `invalid protocol "${v}": must be a name such as HTTP, HTTPS, TLS, TCP, UDP or a domain-prefixed name`),
  "ProtocolType",
)

const ADDRESS_TYPES = new Set(["IPAddress", "Hostname", "NamedAddress"])

export const AddressType = stringWith(
  (v) =>
    lengthProblem("address type", v, 1, 253) ??
    (ADDRESS_TYPES.has(v) || DOMAIN_PREFIXED_PATH.test(v)
      ? undefined
      : `invalid address type "${v}": expected IPAddress, Hostname, NamedAddress or a domain-prefixed name`),
  "AddressType",
)

export const GatewayDuration = stringWith(
  (v) =>
    DURATION.test(v) ? undefined : `invalid duration "${v}": expected up to 4 groups of digits and h, m, s or ms`,
  "GatewayDuration",
)

/** Port numbers 1..65535. */
export const Port = PortNumber

/** Backend weights: an integer 0..1000000. */
export const Weight = Schema.Number.pipe(
  Schema.filter((n) =>
    Number.isInteger(n) && n >= 0 && n <= 1_000_000 ? undefined : `weight ${n} must be an integer in 0..1000000`,
  ),
)

/** An integer in [min, max]. */
export const IntIn = (min: number, max: number) =>
  Schema.Number.pipe(
    Schema.filter((n) =>
      Number.isInteger(n) && n >= min && n <= max ? undefined : `${n} must be an integer in ${min}..${max}`,
    ),
  )

/** A list with at least `min` and at most `max` items. */
export const listOf = <S extends Schema.Schema.AnyNoContext>(
  item: S,
  bounds: { readonly min?: number; readonly max: number },
) =>
  Schema.Array(item).pipe(
    Schema.filter((items) => {
      const min = bounds.min ?? 0
      if (items.length < min) return `must have at least ${min} item${min === 1 ? "" : "s"}`
      if (items.length > bounds.max) return `must have at most ${bounds.max} items, got ${items.length}`
      return undefined
    }),
  )

/**
 * A string map with at most `max` entries, each key and value checked by `keyProblem` /
 * `valueProblem` (labels, annotations, TLS options).
 */
export const boundedMap = (
  max: number,
  keyProblem: (key: string) => string | undefined,
  valueProblem: (value: string) => string | undefined,
) =>
  StringMap.pipe(
    checked((map, report) => {
      const entries = Object.entries(map)
      if (entries.length > max) report([], `must have at most ${max} entries, got ${entries.length}`)
      for (const [key, value] of entries) {
        const problem = keyProblem(key) ?? valueProblem(value)
        if (problem !== undefined) report([key], problem)
      }
    }),
  )

/** Annotation values (and TLS option values): at most 4096 characters. */
export const annotationValueProblem = (value: string): string | undefined =>
  value.length > 4096 ? `value must be at most 4096 characters, got ${value.length}` : undefined
