/**
 * RequestAuthentication → the `envoy.filters.http.jwt_authn` filter of a sidecar's inbound HTTP
 * chains, as the reference builds it. The RequestAuthentications that apply to a workload are
 * those of the root namespace and of its namespace, without a selector or with one its labels
 * satisfy; their `jwtRules` are all combined, one provider per rule (`origins-<i>`).
 *
 * A request without a token passes (authorization decides); a request with a token no provider
 * verifies is rejected: with one provider the requirement is "that provider or missing"; with
 * several it is "any single provider, or, for every provider, it or missing" (the outer
 * alternatives let providers reading the same header pass when one of them verifies).
 *
 * Each provider writes the verified payload to the filter's dynamic metadata under its issuer
 * (`payload_in_metadata`): the RBAC filters read request principals and claims from there.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { RequestAuthenticationSpec } from "../../../config-model/schemas/request-authentication.js"
import { type JwksInput, proxyFetchedJwks } from "../../model/jwks-input.js"
import type { PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type { HttpFilter, JwtProvider, JwtRequirement } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { matchesLabels } from "../scope.js"
import { Filter, TypedConfig } from "../well-known.js"
import { jwksSource } from "./jwks-source.js"

type JwtRule = NonNullable<RequestAuthenticationSpec["jwtRules"]>[number]

export interface ApplicableRequestAuthentications {
  readonly resources: ReadonlyArray<ConfigResource<RequestAuthenticationSpec>>
  readonly warnings: ReadonlyArray<string>
}

/** The RequestAuthentications that apply to the proxy's workload, oldest first. */
export const applicableRequestAuthentications = (
  push: PushContext,
  proxy: ProxyView,
): ApplicableRequestAuthentications => {
  const warnings: Array<string> = []
  const resources = push.proxyConfig.requestAuthentications.filter((ra) => {
    const ns = ra.meta.namespace
    if (ns !== push.options.rootNamespace && ns !== proxy.namespace) return false
    const selector = ra.spec.selector?.matchLabels
    if (selector !== undefined && Object.keys(selector).length > 0 && !matchesLabels(selector, proxy.labels))
      return false
    if (ra.spec.targetRef !== undefined || (ra.spec.targetRefs?.length ?? 0) > 0) {
      warnings.push(`RequestAuthentication ${ns}/${ra.meta.name} field targetRef: does not apply to sidecars, ignored`)
      return false
    }
    return true
  })
  return { resources, warnings }
}

/** Whether the proxy has a cluster for a service host and port (its scope sees the service). */
export type HasServicePort = (host: string, port: number) => boolean

const provider = (
  rule: JwtRule,
  where: string,
  warnings: Array<string>,
  hasServicePort: HasServicePort,
  jwks: JwksInput,
): JwtProvider => {
  const { source, warning } = jwksSource(rule, { mode: jwks.mode, resolved: jwks.resolved, hasServicePort })
  if (warning !== undefined) warnings.push(`${where}: ${warning}`)
  const spaceDelimited = rule.spaceDelimitedClaims ?? []
  const claimHeaders = rule.outputClaimToHeaders ?? []
  return {
    issuer: rule.issuer,
    ...((rule.audiences?.length ?? 0) > 0 ? { audiences: rule.audiences } : {}),
    ...source,
    ...(rule.forwardOriginalToken === true ? { forward: true } : {}),
    ...((rule.fromHeaders?.length ?? 0) > 0
      ? {
          from_headers: rule.fromHeaders!.map((h) => ({
            name: h.name,
            ...(h.prefix !== undefined && h.prefix !== "" ? { value_prefix: h.prefix } : {}),
          })),
        }
      : {}),
    ...((rule.fromParams?.length ?? 0) > 0 ? { from_params: rule.fromParams } : {}),
    ...((rule.fromCookies?.length ?? 0) > 0 ? { from_cookies: rule.fromCookies } : {}),
    ...(rule.outputPayloadToHeader !== undefined && rule.outputPayloadToHeader !== ""
      ? { forward_payload_header: rule.outputPayloadToHeader }
      : {}),
    payload_in_metadata: rule.issuer,
    ...(spaceDelimited.length > 0 ? { normalize_payload_in_metadata: { space_delimited_claims: spaceDelimited } } : {}),
    ...(claimHeaders.length > 0
      ? {
          claim_to_headers: claimHeaders.map((c) => ({ header_name: c.header, claim_name: c.claim })),
          // The headers may be routed on.
          clear_route_cache: true,
        }
      : {}),
  }
}

export interface JwtConfig {
  /** The HTTP filter; undefined when no rule applies. */
  readonly filter?: HttpFilter
  /** The issuers of the providers: where the RBAC filters find the verified payloads. */
  readonly issuers: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

const name = (i: number) => `origins-${i}`
const byName = (i: number): JwtRequirement => ({ provider_name: name(i) })

/** The jwt_authn filter for the RequestAuthentications that apply to a workload. */
export const jwtFilter = (
  resources: ReadonlyArray<ConfigResource<RequestAuthenticationSpec>>,
  hasServicePort: HasServicePort = () => true,
  jwks: JwksInput = proxyFetchedJwks,
): JwtConfig => {
  const warnings: Array<string> = []
  const providers: Record<string, JwtProvider> = {}
  const issuers: Array<string> = []
  let count = 0
  for (const ra of resources)
    (ra.spec.jwtRules ?? []).forEach((rule, i) => {
      const where = `RequestAuthentication ${ra.meta.namespace}/${ra.meta.name} field jwtRules[${i}]`
      providers[name(count++)] = provider(rule, where, warnings, hasServicePort, jwks)
      if (!issuers.includes(rule.issuer)) issuers.push(rule.issuer)
    })
  if (count === 0) return { issuers, warnings }
  const orMissing = (i: number): JwtRequirement => ({
    requires_any: { requirements: [byName(i), { allow_missing: {} }] },
  })
  const indices = [...Array(count).keys()]
  const requires: JwtRequirement =
    count === 1
      ? orMissing(0)
      : {
          requires_any: {
            requirements: [...indices.map(byName), { requires_all: { requirements: indices.map(orMissing) } }],
          },
        }
  return {
    filter: {
      name: Filter.jwt,
      typed_config: typed(TypedConfig.jwt, {
        providers,
        rules: [{ match: { prefix: "/" }, requires }],
        bypass_cors_preflight: true,
      }),
    },
    issuers,
    warnings,
  }
}
