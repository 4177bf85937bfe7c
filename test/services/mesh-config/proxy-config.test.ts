/** ProxyConfig resolution: mesh config defaultConfig ← PROXY_CONFIG ← annotation, field by field. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { defaultProxyConfig } from "../../../src/services/mesh-config/index.js"
import { resolveProxyConfig } from "../../../src/services/mesh-config/proxy-config.js"

const base = { ...defaultProxyConfig(), proxyMetadata: { A: "mesh", B: "mesh" } }

const ok = (overrides: Parameters<typeof resolveProxyConfig>[1]) => {
  const out = resolveProxyConfig(base, overrides)
  if (Either.isLeft(out)) throw new Error(out.left.join("; "))
  return out.right
}

const problems = (overrides: Parameters<typeof resolveProxyConfig>[1]) => {
  const out = resolveProxyConfig(base, overrides)
  if (Either.isRight(out)) throw new Error("expected problems")
  return out.left
}

describe("resolveProxyConfig", () => {
  it("without overrides is the mesh config's defaultConfig", () => {
    expect(ok([]).value).toEqual(base)
    expect(ok([{ source: "PROXY_CONFIG", text: "  " }]).value).toEqual(base)
  })

  it("merges YAML field by field; proxyMetadata key by key", () => {
    const { value, warnings } = ok([
      { source: "PROXY_CONFIG", text: "concurrency: 4\nproxyMetadata:\n  B: env\n  C: env\n" },
    ])
    expect(value.concurrency).toBe(4)
    expect(value.drainDuration).toBe(base.drainDuration)
    expect(value.proxyMetadata).toEqual({ A: "mesh", B: "env", C: "env" })
    expect(warnings).toEqual([])
  })

  it("reads JSON too, and a later source wins over an earlier one", () => {
    const { value } = ok([
      { source: "PROXY_CONFIG", text: '{"concurrency": 4, "proxyAdminPort": 15100}' },
      { source: "proxy.mesh.io/config", text: "concurrency: 8" },
    ])
    expect(value.concurrency).toBe(8)
    expect(value.proxyAdminPort).toBe(15100)
  })

  it("invalid YAML is an error naming the variable", () => {
    const [first] = problems([{ source: "PROXY_CONFIG", text: "concurrency: [1\n" }])
    expect(first).toMatch(/^PROXY_CONFIG: YAML syntax error/)
  })

  it("a non-mapping is an error naming the variable", () => {
    expect(problems([{ source: "PROXY_CONFIG", text: "- 1\n- 2\n" }])).toEqual(["PROXY_CONFIG: must be a YAML mapping"])
  })

  it("a schema error names the variable and the field", () => {
    expect(problems([{ source: "PROXY_CONFIG", text: "concurrency: -1\n" }])).toEqual([
      "PROXY_CONFIG: field concurrency: concurrency must be greater than or equal to 0",
    ])
    expect(problems([{ source: "PROXY_CONFIG", text: "discoveryAddress: nohost\n" }])[0]).toMatch(
      /^PROXY_CONFIG: field discoveryAddress: invalid address "nohost"/,
    )
    expect(problems([{ source: "PROXY_CONFIG", text: "proxyAdminPort: abc\n" }])[0]).toMatch(
      /^PROXY_CONFIG: field proxyAdminPort: /,
    )
  })

  it("a conflict between sources is caught on the merged result", () => {
    const out = problems([
      { source: "PROXY_CONFIG", text: "statusPort: 15100\n" },
      { source: "proxy.mesh.io/config", text: "proxyAdminPort: 15100\n" },
    ])
    expect(out).toEqual(["merged proxy config: field statusPort: statusPort 15100 conflicts with proxyAdminPort"])
  })

  it("unknown fields are warnings naming the variable", () => {
    const { value, warnings } = ok([{ source: "PROXY_CONFIG", text: "concurency: 3\n" }])
    expect(warnings).toEqual(["PROXY_CONFIG: unknown field concurency ignored"])
    expect(value.concurrency).toBe(base.concurrency)
  })
})
