/**
 * Where a `jwt_authn` provider gets its keys (`local_jwks` or `remote_jwks`), given the mode of
 * `PILOT_JWT_ENABLE_REMOTE_JWKS` and the key sets the control plane resolved (keyed by
 * `jwksKey`, see targets.ts):
 *
 * - inline `jwks` → `local_jwks` with it, in every mode;
 * - `jwksUri` in `proxy` mode, or in `hybrid` mode when the proxy has a cluster for its host and
 *   port → `remote_jwks` through `outbound|<port>||<host>` (the proxy fetches);
 * - otherwise (and always without `jwksUri`) → `local_jwks` with the resolved key set.
 *
 * A key set that cannot be had becomes `UNUSABLE_JWKS`, with a warning: tokens of that issuer
 * are then rejected rather than accepted unchecked.
 */

import { openIdConfigurationUrl } from "../../../jwks/documents.js"
import type { JwksMode } from "../../../jwks/mode.js"
import { type IsMeshService, type JwtRule, jwksHostPort, jwksKey, ruleTimeoutNanos } from "../../../jwks/targets.js"
import { outboundClusterName } from "../well-known.js"

/**
 * The key set of providers whose keys cannot be had: a valid RSA key whose private half was
 * never kept, so no token verifies (the reference does the same).
 */
export const UNUSABLE_JWKS = JSON.stringify({
  keys: [
    {
      kty: "RSA",
      e: "AQAB",
      n: "vbO8tFSf7Qo_d65t87oAq5juVWOVpK9vGyJq1qwFSpi8LVVSqBmxK2A2vqOpPmVhPVgJmOYx_NoGRVIiMmdb3SAJvzDfStJaxTCEYPnFQvQXP0dpJVwIuD8Towdl6kannlQsyUTdVUMSBsggpQbjMIZHAX-OoNfAc0Ro0Qe8NGXeocvHUDSzz_YdMwabWcLk4CcH7n1enuqzngX6KAgCwDOUVfIm7S7X0FBs74xl_u6hYVpKnJCA-MOzSFcm-iKxujDTVt1fM1AR0GXw2tuR6KmiZ3ReaPdyF4vw0xA13fnzRstHnQzo0YVDfKSx5_4C3A_0Lr5vSXhNwXkeZyoz8w",
      kid: "mesh-unresolved-jwks",
    },
  ],
})

/** How long the proxy keeps keys it fetched itself (the reference's value). */
const REMOTE_CACHE_SECONDS = "300"

export interface ProtoDuration {
  readonly seconds: string
  readonly nanos: number
}

export type JwksSource =
  | { readonly local_jwks: { readonly inline_string: string } }
  | {
      readonly remote_jwks: {
        readonly http_uri: { readonly uri: string; readonly cluster: string; readonly timeout: ProtoDuration }
        readonly cache_duration: ProtoDuration
      }
    }

export interface JwksSourceOptions {
  readonly mode: JwksMode
  /** The key sets the control plane resolved, keyed by `jwksKey`. */
  readonly resolved: ReadonlyMap<string, string>
  /** Whether the proxy has a cluster for a service host and port (its scope sees the service). */
  readonly hasServicePort: IsMeshService
}

export interface JwksSourceResult {
  readonly source: JwksSource
  /** Why tokens of the rule's issuer will be rejected; the caller prefixes where the rule is. */
  readonly warning?: string
}

const protoDuration = (nanos: bigint): ProtoDuration => ({
  seconds: (nanos / 1_000_000_000n).toString(),
  nanos: Number(nanos % 1_000_000_000n),
})

const local = (inline: string): JwksSource => ({ local_jwks: { inline_string: inline } })

const rejected = (warning: string): JwksSourceResult => ({ source: local(UNUSABLE_JWKS), warning })

const remote = (rule: JwtRule, uri: string, cluster: string): JwksSource => ({
  remote_jwks: {
    http_uri: { uri, cluster, timeout: protoDuration(ruleTimeoutNanos(rule)) },
    cache_duration: { seconds: REMOTE_CACHE_SECONDS, nanos: 0 },
  },
})

/** The key source of one rule's provider. */
export const jwksSource = (rule: JwtRule, options: JwksSourceOptions): JwksSourceResult => {
  if (rule.jwks !== undefined && rule.jwks !== "") return { source: local(rule.jwks) }
  const resolved = options.resolved.get(jwksKey(rule))
  const uri = rule.jwksUri !== undefined && rule.jwksUri !== "" ? rule.jwksUri : undefined
  if (uri === undefined) {
    if (resolved !== undefined) return { source: local(resolved) }
    const discovery = openIdConfigurationUrl(rule.issuer)
    return rejected(
      discovery === undefined
        ? `neither jwks nor jwksUri, and issuer ${rule.issuer} is not an http(s) URL to discover keys from; tokens of issuer ${rule.issuer} are rejected`
        : `no jwksUri, and the server holds no keys discovered through ${discovery} (discovery or fetch failed or has not finished); tokens of issuer ${rule.issuer} are rejected`,
    )
  }
  const target = jwksHostPort(uri)
  if (target === undefined)
    return rejected(`neither jwks nor a usable jwksUri; tokens of issuer ${rule.issuer} are rejected`)
  const cluster = outboundClusterName(target.host, target.port)
  const proxyHasCluster = options.hasServicePort(target.host, target.port)
  if (options.mode === "proxy") {
    // The proxy fetches through the host's outbound cluster, which only exists for a service it
    // sees (a ServiceEntry for external issuers); without it every fetch fails.
    return {
      source: remote(rule, uri, cluster),
      ...(proxyHasCluster
        ? {}
        : {
            warning: `jwksUri host ${target.host}:${target.port} is not a service the proxy sees (no cluster ${cluster}); add a ServiceEntry for it, or tokens of issuer ${rule.issuer} are rejected`,
          }),
    }
  }
  if (options.mode === "hybrid" && proxyHasCluster) return { source: remote(rule, uri, cluster) }
  if (resolved !== undefined) return { source: local(resolved) }
  return rejected(
    `the server holds no keys from jwksUri ${uri} (the fetch failed or has not finished${
      options.mode === "hybrid" ? ", or the host is a mesh service this proxy has no cluster for" : ""
    }); tokens of issuer ${rule.issuer} are rejected`,
  )
}
