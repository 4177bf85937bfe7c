import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  POD_NAME_EXTRA,
  POD_UID_EXTRA,
  readTokenReview,
  reviewCacheUntilMs,
  type TokenReviewStatus,
  tokenReviewRequest,
} from "../../../src/services/ca/token-review.js"

const ok: TokenReviewStatus = {
  authenticated: true,
  user: {
    username: "system:serviceaccount:default:sleep",
    groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    extra: { [POD_NAME_EXTRA]: ["sleep-1"], [POD_UID_EXTRA]: ["uid-1"] },
  },
  audiences: ["mesh-ca"],
}
const refused = (status: TokenReviewStatus | undefined, audiences = ["mesh-ca"]) =>
  Either.getLeft(readTokenReview(status, audiences, "cluster.local"))

describe("TokenReview", () => {
  it("asks for the accepted audiences", () => {
    expect(tokenReviewRequest("tok", ["a", "b"])).toMatchObject({
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      spec: { token: "tok", audiences: ["a", "b"] },
    })
  })

  it("maps the service account user to the SPIFFE identity and the pod facts", () => {
    expect(readTokenReview(ok, ["other", "mesh-ca"], "td.example")).toEqual(
      Either.right({
        identity: "spiffe://td.example/ns/default/sa/sleep",
        orchestrator: { namespace: "default", serviceAccount: "sleep", podName: "sleep-1", podUid: "uid-1" },
      }),
    )
    const unbound = readTokenReview({ ...ok, user: { ...ok.user, extra: {} } }, ["mesh-ca"], "cluster.local")
    expect(Either.getOrThrow(unbound).orchestrator).toEqual({ namespace: "default", serviceAccount: "sleep" })
  })

  it("refuses errors, unauthenticated tokens, other audiences, non service accounts, bad usernames", () => {
    expect(refused(undefined)).toEqual(expect.objectContaining({ value: expect.stringContaining("no status") }))
    expect(refused({ ...ok, error: "token expired" })).toMatchObject({
      value: expect.stringContaining("token expired"),
    })
    expect(refused({ authenticated: false })).toMatchObject({ value: "the token is not authenticated" })
    expect(refused({ ...ok, audiences: ["api"] })).toMatchObject({
      value: "the token audience [api] is not one of the accepted audiences [mesh-ca]",
    })
    // No audience in the answer: the token is only good for the API server itself.
    expect(refused({ ...ok, audiences: [] })._tag).toBe("Some")
    expect(refused({ ...ok, user: { ...ok.user, groups: ["system:authenticated"] } })).toMatchObject({
      value: expect.stringContaining("not a service account"),
    })
    for (const username of [
      "alice",
      "system:serviceaccount:default",
      "system:serviceaccount::sa",
      "system:serviceaccount:a:b:c",
    ]) {
      expect(refused({ ...ok, user: { ...ok.user, username } })).toMatchObject({
        value: expect.stringContaining("invalid username"),
      })
    }
  })

  it("caches a positive answer for the TTL, never past the token's exp", () => {
    const jwt = (exp: number) => `h.${Buffer.from(JSON.stringify({ exp })).toString("base64url")}.s`
    expect(reviewCacheUntilMs("opaque", 1_000, 60_000)).toBe(61_000)
    expect(reviewCacheUntilMs(jwt(30), 1_000, 60_000)).toBe(30_000)
    expect(reviewCacheUntilMs(jwt(1), 1_000, 60_000)).toBeUndefined()
    expect(reviewCacheUntilMs("opaque", 1_000, 0)).toBeUndefined()
  })
})
