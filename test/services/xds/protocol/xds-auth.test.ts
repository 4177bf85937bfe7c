/** xDS authentication and authorization decisions (spec 000 §5 rules 1, 2, 7). */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { Authenticator } from "../../../../src/services/ca/authenticate.js"
import { clientCertAuthenticator } from "../../../../src/services/ca/authenticate.js"
import { AuthenticationError } from "../../../../src/services/ca/errors.js"
import type { ProxyInfo } from "../../../../src/services/xds/cache/responder.js"
import {
  authorizeProxy,
  makeXdsGuard,
  openGuard,
  proxyNamespace,
} from "../../../../src/services/xds/protocol/xds-auth.js"

const proxy = (id: string, metadata: Record<string, unknown> = {}): ProxyInfo => ({ id, generator: "", metadata })
const settings = { skipValidateTrustDomain: false, trustDomain: "cluster.local", trustDomainAliases: ["old.local"] }
const ctx = (uris?: ReadonlyArray<string>) => ({ metadata: () => [], verifiedPeerUris: uris })

describe("proxyNamespace", () => {
  it("prefers the NAMESPACE metadata, then the id's pod.ns, then the DNS domain", () => {
    expect(proxyNamespace(proxy("sidecar~10.0.0.1~a.b~b.svc.cluster.local", { NAMESPACE: "meta" }))).toBe("meta")
    expect(proxyNamespace(proxy("sidecar~10.0.0.1~app-1.shop~shop.svc.cluster.local"))).toBe("shop")
    expect(proxyNamespace(proxy("sidecar~10.0.0.1~app~shop.svc.cluster.local"))).toBe("shop")
    expect(proxyNamespace(proxy("just-a-name"))).toBeUndefined()
    expect(proxyNamespace(proxy("sidecar~10.0.0.1~app~"))).toBeUndefined()
  })
})

describe("authorizeProxy", () => {
  const node = proxy("sidecar~10.0.0.1~app.shop~shop.svc.cluster.local")

  it("allows an identity of the proxy's namespace in the trust domain or an alias", () => {
    expect(Either.isRight(authorizeProxy(["spiffe://cluster.local/ns/shop/sa/app"], node, settings))).toBe(true)
    expect(Either.isRight(authorizeProxy(["spiffe://old.local/ns/shop/sa/app"], node, settings))).toBe(true)
  })

  it("denies another namespace, naming both", () => {
    const result = authorizeProxy(["spiffe://cluster.local/ns/foo/sa/app"], node, settings)
    expect(Either.isLeft(result) && result.left.code).toBe(7)
    expect(Either.isLeft(result) && result.left.message).toMatch(/namespace shop.*ns\/foo\/sa\/app is of namespace foo/)
  })

  it("denies a foreign trust domain unless PILOT_SKIP_VALIDATE_TRUST_DOMAIN", () => {
    const foreign = ["spiffe://other.domain/ns/shop/sa/app"]
    const denied = authorizeProxy(foreign, node, settings)
    expect(Either.isLeft(denied) && denied.left.message).toMatch(
      /trust domain other\.domain, not the mesh's cluster\.local or old\.local/,
    )
    expect(Either.isRight(authorizeProxy(foreign, node, { ...settings, skipValidateTrustDomain: true }))).toBe(true)
  })

  it("denies a node that names no namespace, and a caller with no identities", () => {
    const none = authorizeProxy(["spiffe://cluster.local/ns/shop/sa/app"], proxy("x"), settings)
    expect(Either.isLeft(none) && none.left.message).toMatch(/names no namespace/)
    const empty = authorizeProxy([], node, settings)
    expect(Either.isLeft(empty) && empty.left.message).toMatch(/no identities/)
  })
})

describe("makeXdsGuard", () => {
  const failing: Authenticator = {
    name: "Never",
    authenticate: () => Effect.fail(new AuthenticationError({ reason: "nope" })),
  }
  const guardSettings = { ...settings, authenticate: true, identityCheck: true }

  it.effect("is open when authentication is off", () =>
    Effect.gen(function* () {
      const guard = makeXdsGuard([failing], { ...guardSettings, authenticate: false })
      expect(guard).toBe(openGuard)
      const grant = yield* guard.admit(ctx())
      expect(Either.isRight(grant.authorize(proxy("x")))).toBe(true)
    }),
  )

  it.effect("refuses an unauthenticated stream with UNAUTHENTICATED and every authenticator's reason", () =>
    Effect.gen(function* () {
      const guard = makeXdsGuard([clientCertAuthenticator(), failing], guardSettings)
      const refusal = yield* Effect.flip(guard.admit(ctx()))
      expect(refusal.code).toBe(16)
      expect(refusal.message).toBe(
        "authentication failed: Authenticator ClientCertAuthenticator: no verified client certificate is presented; Authenticator Never: nope",
      )
    }),
  )

  it.effect("checks the namespace only with PILOT_ENABLE_XDS_IDENTITY_CHECK", () =>
    Effect.gen(function* () {
      const uris = ["spiffe://cluster.local/ns/foo/sa/app"]
      const bar = proxy("sidecar~10.0.0.1~app.bar~bar.svc.cluster.local")
      const checked = yield* makeXdsGuard([clientCertAuthenticator()], guardSettings).admit(ctx(uris))
      expect(checked.identities).toEqual(uris)
      expect(Either.isLeft(checked.authorize(bar))).toBe(true)
      const unchecked = yield* makeXdsGuard([clientCertAuthenticator()], {
        ...guardSettings,
        identityCheck: false,
      }).admit(ctx(uris))
      expect(Either.isRight(unchecked.authorize(bar))).toBe(true)
    }),
  )
})
