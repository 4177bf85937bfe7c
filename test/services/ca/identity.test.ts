import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import {
  checkCsrIdentities,
  makeNodeAuthorizer,
  noPodLocator,
  type PodLocator,
  parseSpiffeId,
  parseTrustedNodeAccounts,
  spiffeId,
} from "../../../src/services/ca/identity.js"

const ID = spiffeId("cluster.local", "default", "sleep")

describe("SPIFFE identities", () => {
  it("formats and parses spiffe://<td>/ns/<ns>/sa/<sa>", () => {
    expect(ID).toBe("spiffe://cluster.local/ns/default/sa/sleep")
    expect(parseSpiffeId(ID)).toEqual(
      Either.right({ trustDomain: "cluster.local", namespace: "default", serviceAccount: "sleep" }),
    )
    expect(Either.isLeft(parseSpiffeId("https://cluster.local/ns/default/sa/sleep"))).toBe(true)
    expect(Either.isLeft(parseSpiffeId("spiffe://cluster.local/ns/default"))).toBe(true)
    expect(Either.isLeft(parseSpiffeId("spiffe://cluster.local/ns//sa/x"))).toBe(true)
    expect(Either.isLeft(parseSpiffeId("spiffe://cluster.local/ns/a/sa/b/extra"))).toBe(true)
  })
})

describe("CSR identities must be the caller's", () => {
  it("accepts exactly the caller's identity", () => {
    expect(checkCsrIdentities([ID], [ID])).toEqual(Either.right([ID]))
  })

  it("refuses a CSR without a URI SAN", () => {
    const result = checkCsrIdentities([], [ID])
    expect(Either.isLeft(result) && result.left).toMatch(/no identity/)
  })

  it("refuses another identity, also alongside the caller's", () => {
    const other = spiffeId("cluster.local", "kube-system", "admin")
    expect(Either.isLeft(checkCsrIdentities([other], [ID]))).toBe(true)
    const both = checkCsrIdentities([ID, other], [ID])
    expect(Either.isLeft(both) && both.left).toContain(other)
  })
})

describe("node impersonation (CA_TRUSTED_NODE_ACCOUNTS)", () => {
  const accounts = Either.getOrThrow(parseTrustedNodeAccounts("mesh-system/node-proxy, other/agent"))
  const pods = [
    { node: "node-1", ns: "shop", sa: "cart", pod: "cart-1" },
    { node: "node-1", ns: "mesh-system", sa: "node-proxy", pod: "node-proxy-a" },
  ]
  const locator: PodLocator = {
    nodeOfPod: (ns, pod) => Effect.succeed(Option.fromNullable(pods.find((p) => p.ns === ns && p.pod === pod)?.node)),
    hasPodOnNode: (node, ns, sa) => Effect.succeed(pods.some((p) => p.node === node && p.ns === ns && p.sa === sa)),
  }
  const authorizer = makeNodeAuthorizer(accounts, locator, "cluster.local")
  const cart = spiffeId("cluster.local", "shop", "cart")
  const caller = { namespace: "mesh-system", serviceAccount: "node-proxy", podName: "node-proxy-a" }

  it("parses ns/sa pairs and refuses malformed entries", () => {
    expect(accounts).toEqual([
      { namespace: "mesh-system", serviceAccount: "node-proxy" },
      { namespace: "other", serviceAccount: "agent" },
    ])
    expect(Either.isLeft(parseTrustedNodeAccounts("justname"))).toBe(true)
  })

  it.effect("allows a trusted node agent to ask for a workload on its node", () =>
    Effect.gen(function* () {
      yield* authorizer.authorize(caller, cart)
      yield* authorizer.authorize({ namespace: "mesh-system", serviceAccount: "node-proxy", nodeName: "node-1" }, cart)
    }),
  )

  it.effect("refuses untrusted callers, workloads on other nodes, unknown nodes and foreign trust domains", () =>
    Effect.gen(function* () {
      const refused = (c: Parameters<typeof authorizer.authorize>[0], id: string) =>
        Effect.map(Effect.flip(authorizer.authorize(c, id)), (why) => `${why.kind}: ${why.message}`)
      expect(yield* refused({ namespace: "shop", serviceAccount: "cart", podName: "cart-1" }, cart)).toMatch(
        /^untrusted_account: .*not in CA_TRUSTED_NODE_ACCOUNTS/,
      )
      expect(yield* refused(caller, spiffeId("cluster.local", "shop", "payments"))).toMatch(
        /^not_on_node: no pod of shop\/payments runs on node node-1/,
      )
      expect(yield* refused({ ...caller, podName: "gone" }, cart)).toMatch(/node of the caller's pod is unknown/)
      expect(yield* refused(caller, spiffeId("other.domain", "shop", "cart"))).toMatch(/not in trust domain/)
      expect(yield* refused(undefined, cart)).toMatch(/no orchestrator identity/)
      const blind = makeNodeAuthorizer(accounts, noPodLocator, "cluster.local")
      expect((yield* Effect.flip(blind.authorize({ ...caller, nodeName: "node-1" }, cart))).message).toMatch(/no pod/)
    }),
  )
})
