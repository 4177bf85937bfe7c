/** security.mesh.io RequestAuthentication: JWT validation rules for workloads. */
import { Schema } from "effect"
import {
  checked,
  Duration,
  HEADER_NAME,
  oneOfSelectorType,
  opt,
  PolicyTargetReference,
  StringList,
  WorkloadSelector,
} from "./common.js"

export const JWTRule = Schema.Struct({
  issuer: Schema.String,
  audiences: opt(StringList),
  jwksUri: opt(Schema.String),
  jwks: opt(Schema.String),
  fromHeaders: opt(Schema.Array(Schema.Struct({ name: Schema.String, prefix: opt(Schema.String) }))),
  fromParams: opt(StringList),
  fromCookies: opt(StringList),
  outputPayloadToHeader: opt(Schema.String),
  forwardOriginalToken: opt(Schema.Boolean),
  outputClaimToHeaders: opt(Schema.Array(Schema.Struct({ header: Schema.String, claim: Schema.String }))),
  timeout: opt(Duration),
  spaceDelimitedClaims: opt(StringList),
}).pipe(
  checked((rule, report) => {
    if (rule.issuer === "") report(["issuer"], "issuer must be set")
    rule.audiences?.forEach((a, i) => {
      if (a === "") report(["audiences", i], "audience must be non-empty string")
    })
    if (rule.jwksUri !== undefined && rule.jwksUri !== "") {
      let problem: string | undefined
      try {
        const url = new URL(rule.jwksUri)
        if (url.protocol !== "http:" && url.protocol !== "https:")
          problem = `invalid jwksUri "${rule.jwksUri}": scheme must be http or https`
        else if (url.hostname === "") problem = `invalid jwksUri "${rule.jwksUri}": host is required`
      } catch {
        problem = `invalid jwksUri "${rule.jwksUri}": not a valid URL`
      }
      if (problem !== undefined) report(["jwksUri"], problem)
    }
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
    rule.fromParams?.forEach((p, i) => {
      if (p === "") report(["fromParams", i], "location query must be non-empty string")
    })
    rule.fromCookies?.forEach((c, i) => {
      if (c === "") report(["fromCookies", i], "cookie name must be non-empty string")
    })
    rule.outputClaimToHeaders?.forEach((o, i) => {
      if (o.claim === "" || o.header === "") {
        report(["outputClaimToHeaders", i], "outputClaimToHeaders header and claim value must be non-empty string")
      } else if (!HEADER_NAME.test(o.header)) {
        report(["outputClaimToHeaders", i, "header"], `header name ${o.header} is not a valid header name`)
      }
    })
  }),
)

export const RequestAuthentication = Schema.Struct({
  selector: opt(WorkloadSelector),
  targetRef: opt(PolicyTargetReference),
  targetRefs: opt(Schema.Array(PolicyTargetReference)),
  jwtRules: opt(Schema.Array(JWTRule)),
}).pipe(checked(oneOfSelectorType))
export type RequestAuthenticationSpec = typeof RequestAuthentication.Type
