/** security.mesh.io RequestAuthentication: JWT validation rules for workloads. */
import { Schema } from "effect"
import {
  atMostOneOf,
  checked,
  Duration,
  Enum,
  HEADER_NAME,
  opt,
  PolicyTargetReference,
  type Report,
  StringList,
  structuralKeywords,
  WorkloadSelector,
} from "./common.js"
import { attachmentKeywords, attachmentProblems, maxItemsProblem, TargetRefs } from "./policy-attachment.js"

/** The CRD's bounds on a JWT rule. */
const MAX_JWKS_URI_LENGTH = 2048
const MAX_SPACE_DELIMITED_CLAIMS = 64
const MAX_JWT_RULES = 4096

/** A JWKS URL: http or https with a host (CRD: scheme rule; reference: URL parse). */
const jwksUriProblem = (field: string, uri: string): string | undefined => {
  if (uri === "") return `${field} must not be empty`
  if (uri.length > MAX_JWKS_URI_LENGTH) return `${field} must be at most ${MAX_JWKS_URI_LENGTH} characters long`
  try {
    const url = new URL(uri)
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return `invalid ${field} "${uri}": scheme must be http or https`
    }
    if (url.hostname === "") return `invalid ${field} "${uri}": host is required`
  } catch {
    return `invalid ${field} "${uri}": not a valid URL`
  }
  return undefined
}

/** Entries of a list of names that must each be non-empty. */
const nonEmptyEntries = (
  values: ReadonlyArray<string> | undefined,
  field: string,
  message: string,
  report: Report,
): void =>
  values?.forEach((value, i) => {
    if (value === "") report([field, i], message)
  })

/** Entries the rule refuses when empty (audiences, cookies, claims). */
const NonEmptyStrings = Schema.Array(Schema.String.annotations(structuralKeywords({ minLength: 1 })))

const JWTRuleFields = Schema.Struct({
  issuer: Schema.String.annotations(structuralKeywords({ minLength: 1 })),
  audiences: opt(NonEmptyStrings),
  jwksUri: opt(Schema.String),
  /** The proto field's original spelling, which the reference's CRD accepts as well. */
  jwks_uri: opt(Schema.String),
  jwks: opt(Schema.String),
  fromHeaders: opt(Schema.Array(Schema.Struct({ name: Schema.String, prefix: opt(Schema.String) }))),
  fromParams: opt(StringList),
  fromCookies: opt(NonEmptyStrings),
  outputPayloadToHeader: opt(Schema.String),
  forwardOriginalToken: opt(Schema.Boolean),
  /** Whether a request must carry this issuer's token (the current CRD's enum). */
  presence: opt(Enum("OPTIONAL", "REQUIRED")),
  outputClaimToHeaders: opt(
    Schema.Array(
      Schema.Struct({
        header: Schema.String.annotations(structuralKeywords({ pattern: HEADER_NAME.source })),
        claim: Schema.String.annotations(structuralKeywords({ minLength: 1 })),
      }),
    ),
  ),
  timeout: opt(Duration),
  spaceDelimitedClaims: opt(NonEmptyStrings),
})
  .annotations(structuralKeywords(atMostOneOf("jwksUri", "jwks_uri", "jwks")))
  .pipe(
    checked((rule, report) => {
      if (rule.issuer === "") report(["issuer"], "issuer must be set")
      nonEmptyEntries(rule.audiences, "audiences", "audience must be non-empty string", report)
      for (const field of ["jwksUri", "jwks_uri"] as const) {
        const uri = rule[field]
        const problem = uri === undefined ? undefined : jwksUriProblem(field, uri)
        if (problem !== undefined) report([field], problem)
      }
      const keySources = (["jwksUri", "jwks_uri", "jwks"] as const).filter((field) => rule[field] !== undefined)
      if (keySources.length > 1) report([], `only one of jwks or jwksUri can be set, found ${keySources.join(" and ")}`)
      if (rule.jwks !== undefined && rule.jwks !== "") {
        let problem: string | undefined
        try {
          const parsed: unknown = JSON.parse(rule.jwks)
          if (typeof parsed !== "object" || parsed === null) problem = "jwks parse error: not a JSON object"
        } catch (error) {
          problem = `jwks parse error: ${error instanceof Error ? error.message : String(error)}`
        }
        if (problem !== undefined) report(["jwks"], problem)
      }
      rule.fromHeaders?.forEach((h, i) => {
        if (h.name === "") report(["fromHeaders", i, "name"], "location header name must be non-empty string")
      })
      nonEmptyEntries(rule.fromParams, "fromParams", "location query must be non-empty string", report)
      nonEmptyEntries(rule.fromCookies, "fromCookies", "cookie name must be non-empty string", report)
      nonEmptyEntries(rule.spaceDelimitedClaims, "spaceDelimitedClaims", "claim name must be non-empty string", report)
      maxItemsProblem(rule.spaceDelimitedClaims, MAX_SPACE_DELIMITED_CLAIMS, ["spaceDelimitedClaims"], report)
      rule.outputClaimToHeaders?.forEach((o, i) => {
        if (o.claim === "" || o.header === "") {
          report(["outputClaimToHeaders", i], "outputClaimToHeaders header and claim value must be non-empty string")
        } else if (!HEADER_NAME.test(o.header)) {
          report(["outputClaimToHeaders", i, "header"], `header name ${o.header} is not a valid header name`)
        }
      })
    }),
  )

/**
 * A JWT rule, with the legacy `jwks_uri` spelling folded into `jwksUri` once checked (the two
 * cannot both be set), so what reads rules sees one field.
 */
export const JWTRule = Schema.transform(JWTRuleFields, Schema.typeSchema(JWTRuleFields), {
  strict: true,
  decode: (rule) => {
    if (rule.jwks_uri === undefined) return rule
    const { jwks_uri, ...rest } = rule
    return { ...rest, jwksUri: jwks_uri }
  },
  encode: (rule) => rule,
})

export const RequestAuthentication = Schema.Struct({
  selector: opt(WorkloadSelector),
  targetRef: opt(PolicyTargetReference),
  targetRefs: opt(TargetRefs),
  jwtRules: opt(Schema.Array(JWTRule)),
})
  .annotations(attachmentKeywords)
  .pipe(
    checked((ra, report) => {
      attachmentProblems(ra, report)
      maxItemsProblem(ra.jwtRules, MAX_JWT_RULES, ["jwtRules"], report)
    }),
  )
export type RequestAuthenticationSpec = typeof RequestAuthentication.Type
