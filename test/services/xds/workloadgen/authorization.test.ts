/** AuthorizationPolicies as the node proxy enforces them (L4): our own cases from the reference's rules. */
import { describe, expect, it } from "vitest"
import type { ConfigResource } from "../../../../src/services/config-model/resource.js"
import type { AuthorizationPolicySpec } from "../../../../src/services/config-model/schemas/authorization-policy.js"
import {
  stringMatch,
  translatePolicy,
  waypointAllowPolicy,
  waypointPolicyName,
} from "../../../../src/services/xds/workloadgen/authorization.js"

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages, read field by field
type Decoded = any

const policy = (
  namespace: string,
  spec: AuthorizationPolicySpec,
  annotations: Record<string, string> = {},
): ConfigResource<AuthorizationPolicySpec> => ({
  group: "security.mesh.io",
  version: "v1",
  kind: "AuthorizationPolicy",
  meta: { name: "p", namespace, labels: {}, annotations },
  spec,
})

describe("translatePolicy", () => {
  it("scope: GLOBAL in the root namespace, NAMESPACE without a selector, WORKLOAD_SELECTOR with one", () => {
    expect(translatePolicy(policy("mesh-system", {} as never), "mesh-system").authorization?.scope).toBe("GLOBAL")
    expect(translatePolicy(policy("app", {} as never), "mesh-system").authorization?.scope).toBe("NAMESPACE")
    const selected = translatePolicy(policy("app", { selector: { matchLabels: { app: "a" } } } as never), "mesh-system")
    expect(selected.authorization?.scope).toBe("WORKLOAD_SELECTOR")
    expect(selected.authorization?.matchLabels).toEqual({ app: "a" })
    expect(selected.authorization?.key).toBe("app/p")
  })

  it("sources and operations become rules of one group; service accounts default to the policy's namespace", () => {
    const t = translatePolicy(
      policy("app", {
        action: "DENY",
        rules: [
          {
            from: [
              { source: { namespaces: ["other"], principals: ["cluster.local/ns/x/sa/*"], ipBlocks: ["10.0.0.0/8"] } },
              { source: { serviceAccounts: ["web", "ops/admin"] } },
            ],
            to: [{ operation: { ports: ["8080", "bogus"], notPorts: ["9090"] } }],
          },
        ],
      } as never),
      "mesh-system",
    )
    expect(t.notice).toBeUndefined()
    const message = t.authorization!.message as Decoded
    expect(message.action).toBe("DENY")
    expect(message.groups).toHaveLength(1)
    const [to, from] = message.groups[0].rules
    expect(to.matches).toEqual([{ destination_ports: [8080], not_destination_ports: [9090] }])
    expect(from.matches[0].namespaces).toEqual([{ exact: "other" }])
    expect(from.matches[0].principals).toEqual([{ prefix: "cluster.local/ns/x/sa/" }])
    expect(from.matches[0].source_ips).toEqual([{ address: Uint8Array.from([10, 0, 0, 0]), length: 8 }])
    expect(from.matches[1].service_accounts).toEqual([
      { namespace: "app", serviceAccount: "web" },
      { namespace: "ops", serviceAccount: "admin" },
    ])
  })

  it("an ALLOW rule with L7 fields never matches (its group is dropped) and the notice names the fields", () => {
    const t = translatePolicy(
      policy("app", {
        action: "ALLOW",
        rules: [
          { to: [{ operation: { methods: ["GET"], paths: ["/x"] } }] },
          { from: [{ source: { namespaces: ["a"] } }] },
        ],
      } as never),
      "mesh-system",
    )
    const groups = (t.authorization!.message as Decoded).groups
    expect(groups).toHaveLength(1)
    expect(groups[0].rules[0].matches[0].namespaces).toEqual([{ exact: "a" }])
    expect(t.notice).toContain("methods, paths")
    expect(t.notice).toContain("never match")
  })

  it("a DENY rule with L7 fields keeps its L4 part (denies more, never less)", () => {
    const t = translatePolicy(
      policy("app", {
        action: "DENY",
        rules: [
          {
            to: [{ operation: { ports: ["80"], methods: ["POST"] } }],
            when: [{ key: "request.headers[x]", values: ["1"] }],
          },
        ],
      } as never),
      "mesh-system",
    )
    const groups = (t.authorization!.message as Decoded).groups
    expect(groups[0].rules[0].matches).toEqual([{ destination_ports: [80] }])
    expect(groups[0].rules[1].matches).toEqual([{}])
    expect(t.notice).toContain("methods, request.headers[x]")
  })

  it("L4 when keys translate, negated ones into not_ fields", () => {
    const t = translatePolicy(
      policy("app", {
        rules: [
          {
            when: [
              { key: "source.namespace", notValues: ["bad"] },
              { key: "destination.port", values: ["443"] },
            ],
          },
        ],
      } as never),
      "mesh-system",
    )
    const rules = (t.authorization!.message as Decoded).groups[0].rules
    expect(rules[0].matches).toEqual([{ not_namespaces: [{ exact: "bad" }] }])
    expect(rules[1].matches).toEqual([{ destination_ports: [443] }])
    expect(t.notice).toBeUndefined()
  })

  it("an empty rule matches everything; a policy without rules has no groups", () => {
    expect(
      (translatePolicy(policy("app", { rules: [{}] } as never), "x").authorization!.message as Decoded).groups,
    ).toEqual([{ rules: [] }])
    expect((translatePolicy(policy("app", {} as never), "x").authorization!.message as Decoded).groups).toEqual([])
  })

  it("targetRef policies are the waypoint's; AUDIT/CUSTOM and dry-run are not served", () => {
    expect(translatePolicy(policy("app", { targetRefs: [{ kind: "Service", name: "s" }] } as never), "x")).toEqual({})
    expect(translatePolicy(policy("app", { action: "CUSTOM" } as never), "x").notice).toContain("CUSTOM")
    const dry = translatePolicy(policy("app", {} as never, { "mesh.io/dry-run": "true" }), "x")
    expect(dry.authorization).toBeUndefined()
    expect(dry.notice).toContain("dry-run")
  })

  it("string matches: *, prefix*, *suffix, exact", () => {
    expect(["*", "a*", "*b", "c"].map(stringMatch)).toEqual([
      { presence: {} },
      { prefix: "a" },
      { suffix: "b" },
      { exact: "c" },
    ])
  })
})

describe("waypointAllowPolicy", () => {
  it("allows the waypoint's identities; none without known pods", () => {
    expect(waypointAllowPolicy("app", "wp", [], "cluster.local")).toBeUndefined()
    const p = waypointAllowPolicy("app", "wp", ["wp", "alt"], "cluster.local")!
    expect(p.key).toBe(`app/${waypointPolicyName("app", "wp")}`)
    expect((p.message as Decoded).groups[0].rules[0].matches[0].principals).toEqual([
      { exact: "cluster.local/ns/app/sa/alt" },
      { exact: "cluster.local/ns/app/sa/wp" },
    ])
  })
})
