/**
 * The HTTPRoute CORS filter → a VirtualService `corsPolicy`, as the reference writes it: an
 * origin `*` becomes a regular expression taking any well-formed origin (scheme://host[:port]),
 * an origin without `*` an exact match, one ending in its only `*` a prefix, any other wildcard a
 * regular expression; credentials, methods, headers and max age carried over; preflights the
 * policy does not match are ignored (passed on). The filter is kept opaque by the schema
 * (experimental upstream), so its fields are read defensively here.
 */
import type { HTTPRoute as VsHttpRoute } from "../config-model/schemas/virtual-service.js"

type CorsPolicy = NonNullable<VsHttpRoute["corsPolicy"]>
type OriginMatch = { readonly exact: string } | { readonly prefix: string } | { readonly regex: string }

/** Any origin of the form scheme://host[:port] (RFC 6454). */
const ANY_ORIGIN = "^[a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s?#]+$"

const escapeRegex = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : []

const originMatch = (origin: string): OriginMatch => {
  if (origin === "*") return { regex: ANY_ORIGIN }
  if (!origin.includes("*")) return { exact: origin }
  if (origin.indexOf("*") === origin.length - 1) return { prefix: origin.slice(0, -1) }
  return { regex: `^${origin.split("*").map(escapeRegex).join(".*")}$` }
}

export const corsPolicyOf = (filter: unknown): CorsPolicy => {
  const f = (typeof filter === "object" && filter !== null ? filter : {}) as Readonly<Record<string, unknown>>
  const origins = strings(f.allowOrigins).map(originMatch)
  const methods = strings(f.allowMethods)
  const headers = strings(f.allowHeaders)
  const expose = strings(f.exposeHeaders)
  const maxAge = typeof f.maxAge === "number" && Number.isInteger(f.maxAge) && f.maxAge > 0 ? f.maxAge : undefined
  return {
    ...(origins.length > 0 ? { allowOrigins: origins } : {}),
    ...(f.allowCredentials === true ? { allowCredentials: true } : {}),
    ...(methods.length > 0 ? { allowMethods: methods } : {}),
    ...(headers.length > 0 ? { allowHeaders: headers } : {}),
    ...(expose.length > 0 ? { exposeHeaders: expose } : {}),
    ...(maxAge !== undefined ? { maxAge: `${maxAge}s` } : {}),
    unmatchedPreflights: "IGNORE",
  } as CorsPolicy
}
