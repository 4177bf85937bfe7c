/**
 * Who may open an ADS stream, and as which proxy (spec 000 §5 rules 1, 2 and 7).
 *
 * - Authentication (`XDS_AUTH`; on the plaintext port only with `XDS_AUTH_PLAINTEXT`): the
 *   stream must carry a verified mesh client certificate or a valid bearer token — the CA's
 *   authenticators decide, tried in order.
 * - Authorization (`PILOT_ENABLE_XDS_IDENTITY_CHECK`): once the first request names the node,
 *   the proxy's namespace must be the namespace of one of the caller's SPIFFE identities, and
 *   (unless `PILOT_SKIP_VALIDATE_TRUST_DOMAIN`) that identity must be in the mesh's trust domain
 *   or one of its aliases.
 *
 * Pure decisions over the transport's `AuthContext`; the ADS layer turns a refusal into the
 * stream's gRPC status.
 */
import { Effect, Either } from "effect"
import { type AuthContext, type Authenticator, authenticateWith } from "../../ca/authenticate.js"
import { GrpcCode } from "../../ca/errors.js"
import { parseSpiffeId } from "../../ca/identity.js"
import type { ProxyInfo } from "../cache/responder.js"

export interface XdsRefusal {
  readonly code: typeof GrpcCode.UNAUTHENTICATED | typeof GrpcCode.PERMISSION_DENIED
  readonly message: string
}

export interface XdsAuthSettings {
  /** Require an authenticated caller on this listener (`XDS_AUTH` / `XDS_AUTH_PLAINTEXT`). */
  readonly authenticate: boolean
  /** `PILOT_ENABLE_XDS_IDENTITY_CHECK` (only meaningful when `authenticate`). */
  readonly identityCheck: boolean
  /** `PILOT_SKIP_VALIDATE_TRUST_DOMAIN` */
  readonly skipValidateTrustDomain: boolean
  readonly trustDomain: string
  readonly trustDomainAliases: ReadonlyArray<string>
}

/** What a stream is allowed once authenticated. */
export interface XdsGrant {
  /** SPIFFE identities of the caller; empty when authentication is off. */
  readonly identities: ReadonlyArray<string>
  /** Whether the caller may act as this proxy (checked on the stream's first request). */
  readonly authorize: (proxy: ProxyInfo) => Either.Either<void, XdsRefusal>
}

/** The stream guard of one listener. */
export interface XdsGuard {
  readonly admit: (ctx: AuthContext) => Effect.Effect<XdsGrant, XdsRefusal>
}

const allowAll: XdsGrant = { identities: [], authorize: () => Either.void }

/** A guard that lets every stream through (no `XDS_AUTH`, or the plaintext port by default). */
export const openGuard: XdsGuard = { admit: () => Effect.succeed(allowAll) }

/**
 * The namespace a node asks configuration for: its metadata `NAMESPACE`, else the node id's
 * `pod.ns` part (`type~ip~pod.ns~ns.svc.<domain>`), else the first label of its DNS domain.
 */
export const proxyNamespace = (proxy: ProxyInfo): string | undefined => {
  const fromMetadata = proxy.metadata.NAMESPACE
  if (typeof fromMetadata === "string" && fromMetadata !== "") return fromMetadata
  const parts = proxy.id.split("~")
  if (parts.length !== 4) return undefined
  const podDotNs = parts[2]!
  const dot = podDotNs.indexOf(".")
  if (dot > 0 && dot < podDotNs.length - 1) return podDotNs.slice(dot + 1)
  const domainNs = parts[3]!.split(".")[0]
  return domainNs === undefined || domainNs === "" ? undefined : domainNs
}

/** Whether one of `identities` may act as a proxy of `proxy`'s namespace; why not otherwise. */
export const authorizeProxy = (
  identities: ReadonlyArray<string>,
  proxy: ProxyInfo,
  settings: Pick<XdsAuthSettings, "skipValidateTrustDomain" | "trustDomain" | "trustDomainAliases">,
): Either.Either<void, XdsRefusal> => {
  const namespace = proxyNamespace(proxy)
  const denied = (why: string): Either.Either<void, XdsRefusal> =>
    Either.left({
      code: GrpcCode.PERMISSION_DENIED,
      message: `authorization failed: ${why} (node ${proxy.id || "<empty>"})`,
    })
  if (namespace === undefined) {
    return denied("the node names no namespace (neither NAMESPACE metadata nor a type~ip~pod.ns~domain id)")
  }
  const domains = new Set([settings.trustDomain, ...settings.trustDomainAliases])
  const reasons: Array<string> = []
  for (const raw of identities) {
    const parsed = parseSpiffeId(raw)
    if (Either.isLeft(parsed)) {
      reasons.push(`${raw} is not a SPIFFE identity`)
      continue
    }
    const id = parsed.right
    if (!settings.skipValidateTrustDomain && !domains.has(id.trustDomain)) {
      reasons.push(`${raw} is in trust domain ${id.trustDomain}, not the mesh's ${[...domains].join(" or ")}`)
      continue
    }
    if (id.namespace !== namespace) {
      reasons.push(`${raw} is of namespace ${id.namespace}`)
      continue
    }
    return Either.void
  }
  return denied(
    `no identity of the caller may act as a proxy of namespace ${namespace}: ${reasons.join("; ") || "no identities"}`,
  )
}

/** The guard of a listener from its settings and the CA's authenticators. */
export const makeXdsGuard = (authenticators: ReadonlyArray<Authenticator>, settings: XdsAuthSettings): XdsGuard => {
  if (!settings.authenticate) return openGuard
  return {
    admit: (ctx) =>
      authenticateWith(authenticators, ctx).pipe(
        Effect.mapError(
          (e): XdsRefusal => ({ code: GrpcCode.UNAUTHENTICATED, message: `authentication failed: ${e.reason}` }),
        ),
        Effect.map(
          (caller): XdsGrant => ({
            identities: caller.identities,
            authorize: settings.identityCheck
              ? (proxy) => authorizeProxy(caller.identities, proxy, settings)
              : () => Either.void,
          }),
        ),
      ),
  }
}
