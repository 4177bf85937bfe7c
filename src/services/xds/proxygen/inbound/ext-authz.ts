/**
 * CUSTOM AuthorizationPolicies: the external authorization filters of a workload, from the mesh
 * config extension provider its policies name (`envoyExtAuthzHttp` or `envoyExtAuthzGrpc`).
 *
 * The reference's arrangement: an RBAC filter holding the CUSTOM policies' rules as shadow rules
 * (it never enforces; a matching rule leaves its policy id, which starts with
 * `mesh-ext-authz`, in the filter's dynamic metadata under
 * `mesh_ext_authz_shadow_effective_policy_id`), then the ext_authz filter, enabled only when
 * that metadata is there: requests the rules do not match are not sent to the authorizer.
 * TCP chains get the network pair, for gRPC providers only (the check API of an HTTP provider
 * needs a request). One provider per workload, as the reference supports.
 */
import { Either } from "effect"
import {
  ENVOY_STATUS_CODES,
  type ExtAuthzGrpcProvider,
  type ExtAuthzHttpProvider,
  type ExtensionProvider,
  providerNamed,
} from "../../../mesh-config/extension-providers.js"
import type { PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  Config_Rbac_RBAC,
  Http_ExtAuthz_ExtAuthz,
  HttpFilter,
  Listener_Filter,
  ListStringMatcher,
  MetadataMatcher,
  Network_ExtAuthz_ExtAuthz,
  Policy,
  StatusCode,
} from "../../protocol/xds-types.js"
import { durationOfMillis, envoyGrpcService, providerCluster } from "../provider-cluster.js"
import { Filter, TypedConfig } from "../well-known.js"

const T = "type.googleapis.com/"
export const EXT_AUTHZ_FILTER = "envoy.filters.http.ext_authz"
export const NETWORK_EXT_AUTHZ_FILTER = "envoy.filters.network.ext_authz"
export const EXT_AUTHZ_TYPE = `${T}envoy.extensions.filters.http.ext_authz.v3.ExtAuthz`
export const NETWORK_EXT_AUTHZ_TYPE = `${T}envoy.extensions.filters.network.ext_authz.v3.ExtAuthz`

/** Every CUSTOM policy id starts with this; the ext_authz filter is enabled by it. */
export const EXT_AUTHZ_POLICY_PREFIX = "mesh-ext-authz"
/** The shadow rules' stat prefix, which also prefixes the metadata key the RBAC filter writes. */
export const EXT_AUTHZ_SHADOW_STAT_PREFIX = "mesh_ext_authz_"
export const SHADOW_EFFECTIVE_POLICY_ID = "shadow_effective_policy_id"
/** The reference's check timeout when the provider sets none. */
const DEFAULT_TIMEOUT_MS = 600_000

/** A CUSTOM policy rule's id: `mesh-ext-authz-ns[<ns>]-policy[<name>]-rule[<i>]`. */
export const customPolicyId = (namespace: string, name: string, rule: number): string =>
  `${EXT_AUTHZ_POLICY_PREFIX}-ns[${namespace}]-policy[${name}]-rule[${rule}]`

export interface ResolvedExtAuthz {
  readonly provider: string
  /** The HTTP filter's typed config, without its metadata matcher. */
  readonly http: Http_ExtAuthz_ExtAuthz
  /** The network filter's config; undefined for HTTP providers. */
  readonly tcp?: Network_ExtAuthz_ExtAuthz
}

// ---------------------------------------------------------------------------------------------
// Provider → filter configs

/** Header patterns (`exact`, `prefix*`, `*suffix`), case-insensitive as header names are. */
const headerMatcher = (headers: ReadonlyArray<string>): ListStringMatcher | undefined =>
  headers.length === 0
    ? undefined
    : {
        patterns: headers.map((h) =>
          h.startsWith("*")
            ? { suffix: h.slice(1), ignore_case: true }
            : h.endsWith("*")
              ? { prefix: h.slice(0, -1), ignore_case: true }
              : { exact: h, ignore_case: true },
        ),
      }

/** The fields of the HTTP filter's config both kinds of provider set. */
const common = (provider: ExtAuthzHttpProvider | ExtAuthzGrpcProvider): Http_ExtAuthz_ExtAuthz => {
  const body = provider.includeRequestBodyInCheck
  return {
    failure_mode_allow: provider.failOpen,
    ...(provider.statusOnError !== undefined
      ? // Every name in the table is a StatusCode (checked when the types were introduced).
        { status_on_error: { code: ENVOY_STATUS_CODES[provider.statusOnError] as StatusCode } }
      : {}),
    ...(body !== undefined
      ? {
          with_request_body: {
            max_request_bytes: body.maxRequestBytes,
            allow_partial_message: body.allowPartialMessage,
            pack_as_bytes: body.packAsBytes,
          },
        }
      : {}),
    transport_api_version: "V3",
  }
}

const httpProviderConfig = (
  provider: ExtAuthzHttpProvider,
  hostname: string,
  cluster: string,
): Http_ExtAuthz_ExtAuthz => {
  const added = Object.keys(provider.includeAdditionalHeadersInCheck)
    .sort()
    .map((key) => ({ key, value: provider.includeAdditionalHeadersInCheck[key] }))
  const upstream = headerMatcher(provider.headersToUpstreamOnAllow)
  const onDeny = headerMatcher(provider.headersToDownstreamOnDeny)
  const onAllow = headerMatcher(provider.headersToDownstreamOnAllow)
  const allowed = headerMatcher(provider.includeRequestHeadersInCheck)
  return {
    ...common(provider),
    http_service: {
      // The URI is required but unused: the cluster decides where checks go.
      server_uri: {
        uri: `http://${hostname}`,
        cluster,
        timeout: durationOfMillis(provider.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      },
      ...(provider.pathPrefix !== "" ? { path_prefix: provider.pathPrefix } : {}),
      ...(added.length > 0 ? { authorization_request: { headers_to_add: added } } : {}),
      ...(upstream !== undefined || onDeny !== undefined || onAllow !== undefined
        ? {
            authorization_response: {
              ...(upstream !== undefined ? { allowed_upstream_headers: upstream } : {}),
              ...(onDeny !== undefined ? { allowed_client_headers: onDeny } : {}),
              ...(onAllow !== undefined ? { allowed_client_headers_on_success: onAllow } : {}),
            },
          }
        : {}),
    },
    // The filter-level field (the request-level one is deprecated).
    ...(allowed !== undefined ? { allowed_headers: allowed } : {}),
  }
}

const grpcProviderConfigs = (
  provider: ExtAuthzGrpcProvider,
  cluster: string,
): { readonly http: Http_ExtAuthz_ExtAuthz; readonly tcp: Network_ExtAuthz_ExtAuthz } => {
  // `|` is not valid in an HTTP/2 authority, and the cluster name would be the default one.
  const grpc = envoyGrpcService(cluster, cluster.replaceAll("|", "_."), provider.timeoutMs ?? DEFAULT_TIMEOUT_MS)
  return {
    http: { ...common(provider), grpc_service: grpc },
    tcp: {
      stat_prefix: "tcp.",
      grpc_service: grpc,
      failure_mode_allow: provider.failOpen,
      transport_api_version: "V3",
    },
  }
}

const kindOf = (provider: ExtensionProvider): string =>
  provider.kind === "unsupported" || provider.kind === "invalid" ? provider.providerKind : provider.kind

/**
 * The ext_authz configs for the providers a workload's CUSTOM policies name, or why there are
 * none (the caller then denies every request, as the reference does).
 */
export const resolveExtAuthz = (
  push: PushContext,
  names: ReadonlyArray<string>,
): Either.Either<ResolvedExtAuthz, string> => {
  const distinct = [...new Set(names)].sort()
  if (distinct.length !== 1)
    return Either.left(
      distinct.length === 0
        ? "no provider is named"
        : `only one CUSTOM provider per workload is supported, found ${distinct.join(", ")}`,
    )
  const name = distinct[0]!
  const providers = push.options.proxy.extensionProviders
  const provider = providerNamed(providers, name)
  if (provider === undefined) {
    const available = providers
      .filter((p) => ["envoyExtAuthzHttp", "envoyExtAuthzGrpc"].includes(kindOf(p)))
      .map((p) => p.name)
    return Either.left(
      `extension provider "${name}" is not in the mesh config (ext_authz providers: ${available.length > 0 ? available.join(", ") : "none"})`,
    )
  }
  if (provider.kind === "invalid")
    return Either.left(`extension provider "${name}" is invalid: ${provider.problems.join("; ")}`)
  if (provider.kind !== "envoyExtAuthzHttp" && provider.kind !== "envoyExtAuthzGrpc")
    return Either.left(
      `extension provider "${name}" is of kind ${kindOf(provider)}, not envoyExtAuthzHttp or envoyExtAuthzGrpc`,
    )
  return Either.match(providerCluster(push, provider), {
    onLeft: (problem) => Either.left(`extension provider "${name}": ${problem}`),
    onRight: ({ hostname, cluster }) =>
      Either.right(
        provider.kind === "envoyExtAuthzHttp"
          ? { provider: name, http: httpProviderConfig(provider, hostname, cluster) }
          : { provider: name, ...grpcProviderConfigs(provider, cluster) },
      ),
  })
}

// ---------------------------------------------------------------------------------------------
// Filters

/** Matches the policy id the shadow rules leave in `filter`'s metadata when a CUSTOM rule matches. */
const enabledByShadowRules = (filter: string): MetadataMatcher => ({
  filter,
  path: [{ key: `${EXT_AUTHZ_SHADOW_STAT_PREFIX}${SHADOW_EFFECTIVE_POLICY_ID}` }],
  value: { string_match: { prefix: EXT_AUTHZ_POLICY_PREFIX } },
})

// DENY as the shadow action: a matching rule is what selects the request, and a rule's fields
// the chain cannot see (HTTP-only on TCP) are dropped so it selects more, not less.
const shadowRules = (policies: Readonly<Record<string, Policy>>): Config_Rbac_RBAC => ({ action: "DENY", policies })

/** The HTTP chain's pair: shadow RBAC, then ext_authz. */
export const httpExtAuthzFilters = (
  resolved: ResolvedExtAuthz,
  policies: Readonly<Record<string, Policy>>,
): ReadonlyArray<HttpFilter> => [
  {
    name: Filter.rbac,
    typed_config: typed(TypedConfig.rbac, {
      shadow_rules: shadowRules(policies),
      shadow_rules_stat_prefix: EXT_AUTHZ_SHADOW_STAT_PREFIX,
    }),
  },
  {
    name: EXT_AUTHZ_FILTER,
    typed_config: typed(EXT_AUTHZ_TYPE, {
      ...resolved.http,
      filter_enabled_metadata: enabledByShadowRules(Filter.rbac),
    }),
  },
]

/** The TCP chain's pair (gRPC providers): shadow network RBAC, then the network ext_authz. */
export const networkExtAuthzFilters = (
  tcp: Network_ExtAuthz_ExtAuthz,
  policies: Readonly<Record<string, Policy>>,
): ReadonlyArray<Listener_Filter> => [
  {
    name: Filter.networkRbac,
    typed_config: typed(TypedConfig.networkRbac, {
      shadow_rules: shadowRules(policies),
      stat_prefix: "tcp.",
      shadow_rules_stat_prefix: EXT_AUTHZ_SHADOW_STAT_PREFIX,
    }),
  },
  {
    name: NETWORK_EXT_AUTHZ_FILTER,
    typed_config: typed(NETWORK_EXT_AUTHZ_TYPE, {
      ...tcp,
      filter_enabled_metadata: enabledByShadowRules(Filter.networkRbac),
    }),
  },
]
