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
import { Either } from "effect"
import { parseGoDurationNanos } from "../../../config/duration.js"
import type { ConfigResource } from "../../../config-model/resource.js"
import type { RequestAuthenticationSpec } from "../../../config-model/schemas/request-authentication.js"
import type { ProtoObject } from "../../cache/resource-spec.js"
import type { PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { matchesLabels } from "../scope.js"
import { Filter, outboundClusterName, TypedConfig } from "../well-known.js"

type JwtRule = NonNullable<RequestAuthenticationSpec["jwtRules"]>[number]

/**
 * The key set of providers whose keys cannot be had (no `jwks`, no `jwksUri`): a valid RSA key
 * whose private half was never kept, so no token verifies (the reference does the same).
 */
const UNUSABLE_JWKS = JSON.stringify({
  keys: [
    {
      kty: "RSA",
      e: "AQAB",
      n: "vbO8tFSf7Qo_d65t87oAq5juVWOVpK9vGyJq1qwFSpi8LVVSqBmxK2A2vqOpPmVhPVgJmOYx_NoGRVIiMmdb3SAJvzDfStJaxTCEYPnFQvQXP0dpJVwIuD8Towdl6kannlQsyUTdVUMSBsggpQbjMIZHAX-OoNfAc0Ro0Qe8NGXeocvHUDSzz_YdMwabWcLk4CcH7n1enuqzngX6KAgCwDOUVfIm7S7X0FBs74xl_u6hYVpKnJCA-MOzSFcm-iKxujDTVt1fM1AR0GXw2tuR6KmiZ3ReaPdyF4vw0xA13fnzRstHnQzo0YVDfKSx5_4C3A_0Lr5vSXhNwXkeZyoz8w",
      kid: "mesh-unresolved-jwks",
    },
  ],
})

/** The reference's JWKS fetch timeout and cache duration. */
const DEFAULT_TIMEOUT_NANOS = 5_000_000_000n
const CACHE_DURATION: ProtoObject = { seconds: "300", nanos: 0 }

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

const duration = (nanos: bigint): ProtoObject => ({
  seconds: (nanos / 1_000_000_000n).toString(),
  nanos: Number(nanos % 1_000_000_000n),
})

/** `outbound|<port>||<host>` of a JWKS URI (the port defaults by scheme), or undefined. */
export const jwksCluster = (uri: string): string | undefined => {
  try {
    const url = new URL(uri)
    const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80
    return url.hostname === "" ? undefined : outboundClusterName(url.hostname, port)
  } catch {
    return undefined
  }
}

/** Whether the proxy has a cluster for a service host and port (its scope sees the service). */
export type HasServicePort = (host: string, port: number) => boolean

const provider = (
  rule: JwtRule,
  where: string,
  warnings: Array<string>,
  hasServicePort: HasServicePort,
): ProtoObject => {
  const timeout =
    rule.timeout === undefined
      ? DEFAULT_TIMEOUT_NANOS
      : Either.getOrElse(parseGoDurationNanos(rule.timeout), () => DEFAULT_TIMEOUT_NANOS)
  const cluster = rule.jwksUri !== undefined && rule.jwksUri !== "" ? jwksCluster(rule.jwksUri) : undefined
  let source: ProtoObject
  if (rule.jwks !== undefined && rule.jwks !== "") source = { local_jwks: { inline_string: rule.jwks } }
  else if (cluster !== undefined) {
    // As the reference's remote-JWKS mode: the proxy fetches the keys through the host's
    // outbound cluster, which only exists for a service it sees (a ServiceEntry for external
    // issuers); without it every fetch fails and tokens of the issuer are rejected.
    const url = new URL(rule.jwksUri!)
    const port = Number(cluster.slice("outbound|".length, cluster.indexOf("||")))
    if (!hasServicePort(url.hostname, port))
      warnings.push(
        `${where}: jwksUri host ${url.hostname}:${port} is not a service the proxy sees (no cluster ${cluster}); add a ServiceEntry for it, or tokens of issuer ${rule.issuer} are rejected`,
      )
    source = {
      remote_jwks: {
        http_uri: { uri: rule.jwksUri, cluster, timeout: duration(timeout) },
        cache_duration: CACHE_DURATION,
      },
    }
  } else {
    warnings.push(`${where}: neither jwks nor a usable jwksUri; tokens of issuer ${rule.issuer} are rejected`)
    source = { local_jwks: { inline_string: UNUSABLE_JWKS } }
  }
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
  readonly filter?: ProtoObject
  /** The issuers of the providers: where the RBAC filters find the verified payloads. */
  readonly issuers: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

const name = (i: number) => `origins-${i}`
const byName = (i: number): ProtoObject => ({ provider_name: name(i) })

/** The jwt_authn filter for the RequestAuthentications that apply to a workload. */
export const jwtFilter = (
  resources: ReadonlyArray<ConfigResource<RequestAuthenticationSpec>>,
  hasServicePort: HasServicePort = () => true,
): JwtConfig => {
  const warnings: Array<string> = []
  const providers: Record<string, ProtoObject> = {}
  const issuers: Array<string> = []
  let count = 0
  for (const ra of resources)
    (ra.spec.jwtRules ?? []).forEach((rule, i) => {
      const where = `RequestAuthentication ${ra.meta.namespace}/${ra.meta.name} field jwtRules[${i}]`
      providers[name(count++)] = provider(rule, where, warnings, hasServicePort)
      if (!issuers.includes(rule.issuer)) issuers.push(rule.issuer)
    })
  if (count === 0) return { issuers, warnings }
  const orMissing = (i: number): ProtoObject => ({
    requires_any: { requirements: [byName(i), { allow_missing: {} }] },
  })
  const indices = [...Array(count).keys()]
  const requires =
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
      typed_config: {
        "@type": TypedConfig.jwt,
        providers,
        rules: [{ match: { prefix: "/" }, requires }],
        bypass_cors_preflight: true,
      },
    },
    issuers,
    warnings,
  }
}
