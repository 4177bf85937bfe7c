/**
 * The TokenReview authenticator against the test API server through the real client: a service
 * account token accepted (identity and pod facts), an unknown token and a token for other
 * audiences refused, an answer reused from the cache, and an API server that is down refusing
 * with a clear reason instead of failing the request path.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll } from "vitest"
import { makeTokenReviewAuthenticator } from "../../../../src/layers/ca/orchestrator/token-review.js"
import type { AuthContext } from "../../../../src/services/ca/authenticate.js"
import { POD_NAME_EXTRA, POD_UID_EXTRA } from "../../../../src/services/ca/token-review.js"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator()
  server.addToken(
    "sleep-token",
    { username: "system:serviceaccount:default:sleep", groups: ["system:serviceaccounts"] },
    ["mesh-ca"],
  )
  server.addToken(
    "api-token",
    { username: "system:serviceaccount:default:sleep", groups: ["system:serviceaccounts"] },
    ["https://kubernetes.default.svc"],
  )
  server.addToken("user-token", { username: "alice", groups: ["system:authenticated"] }, ["mesh-ca"])
})
afterAll(() => server.close())

const ctx = (token: string): AuthContext => ({
  metadata: (key) => (key === "authorization" ? [`Bearer ${token}`] : []),
  verifiedPeerUris: undefined,
})

const authenticate = (token: string, cacheTtlMs = 0) =>
  Effect.gen(function* () {
    const authenticator = yield* makeTokenReviewAuthenticator({
      audiences: ["mesh-ca"],
      trustDomain: "cluster.local",
      cacheTtlMs,
    })
    return yield* authenticator.authenticate(ctx(token))
  }).pipe(Effect.provide(orchestratorLayer(server)))

const reviews = () => server.requestCount({ verb: "create", path: /tokenreviews/ })

describe("TokenReview authenticator", () => {
  it.live("accepts a service account token for the CA's audience", () =>
    Effect.gen(function* () {
      const caller = yield* authenticate("sleep-token")
      expect(caller).toEqual({
        authSource: "IDToken",
        identities: ["spiffe://cluster.local/ns/default/sa/sleep"],
        orchestrator: { namespace: "default", serviceAccount: "sleep" },
      })
    }),
  )

  it.live("refuses an unknown token, a token for other audiences, a user that is no service account", () =>
    Effect.gen(function* () {
      const unknown = yield* Effect.flip(authenticate("nope"))
      expect(unknown.reason).toContain("invalid bearer token")
      const otherAudience = yield* Effect.flip(authenticate("api-token"))
      expect(otherAudience.reason).toMatch(/audience|not authenticated/)
      const user = yield* Effect.flip(authenticate("user-token"))
      expect(user.reason).toContain("not a service account")
    }),
  )

  it.live("reads the pod a bound token belongs to, and reuses a positive answer", () =>
    Effect.gen(function* () {
      server.setTokenReviewer((spec) =>
        spec.token === "bound"
          ? {
              authenticated: true,
              user: {
                username: "system:serviceaccount:apps:ztunnel",
                groups: ["system:serviceaccounts"],
                extra: { [POD_NAME_EXTRA]: ["ztunnel-x"], [POD_UID_EXTRA]: ["uid-7"] },
              },
              audiences: spec.audiences ?? [],
            }
          : { authenticated: false, error: "invalid bearer token" },
      )
      const before = reviews()
      const authenticator = yield* makeTokenReviewAuthenticator({ audiences: ["mesh-ca"], trustDomain: "td" }).pipe(
        Effect.provide(orchestratorLayer(server)),
      )
      const first = yield* authenticator.authenticate(ctx("bound"))
      expect(first.orchestrator).toEqual({
        namespace: "apps",
        serviceAccount: "ztunnel",
        podName: "ztunnel-x",
        podUid: "uid-7",
      })
      expect(first.identities).toEqual(["spiffe://td/ns/apps/sa/ztunnel"])
      yield* authenticator.authenticate(ctx("bound"))
      expect(reviews() - before).toBe(1)
    }),
  )

  it.live("refuses with a clear reason while the API server is down", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() => server.down())
      const exit = yield* Effect.exit(authenticate("bound"))
      yield* Effect.promise(() => server.up())
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(String(exit.cause)).toContain("the orchestrator could not review the token")
      }
    }),
  )
})
