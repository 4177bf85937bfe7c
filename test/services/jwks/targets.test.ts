import { describe, expect, it } from "vitest"
import type { RequestAuthenticationSpec } from "../../../src/services/config-model/schemas/request-authentication.js"
import {
  jwksHostPort,
  jwksKey,
  meshServiceLookup,
  ruleTimeoutNanos,
  serverFetchTargets,
} from "../../../src/services/jwks/targets.js"

type Rule = NonNullable<RequestAuthenticationSpec["jwtRules"]>[number]
const ra = (...jwtRules: Array<Rule>) => ({ spec: { jwtRules } })

const external: Rule = { issuer: "https://login.example.com", jwksUri: "https://login.example.com/keys" }
const inMesh: Rule = { issuer: "auth", jwksUri: "http://auth.default.svc.cluster.local:8080/jwks" }
const inline: Rule = { issuer: "inline", jwks: '{"keys":[]}' }
const discovered: Rule = { issuer: "https://accounts.example.org" }
const isMeshService = meshServiceLookup([
  { hostname: "auth.default.svc.cluster.local", ports: [{ port: 8080 }] },
  { hostname: "reviews.default.svc.cluster.local", ports: [{ port: 9080 }] },
])

describe("resolved map keys", () => {
  it("are the jwksUri, or the issuer prefixed with issuer: for discovery", () => {
    expect(jwksKey(external)).toBe("https://login.example.com/keys")
    expect(jwksKey(discovered)).toBe("issuer:https://accounts.example.org")
    expect(jwksKey({ issuer: "https://a.example.com", jwksUri: "" })).toBe("issuer:https://a.example.com")
  })
})

describe("JWKS URI host and port", () => {
  it("default the port by scheme", () => {
    expect(jwksHostPort("https://keys.example.com/jwks")).toEqual({ host: "keys.example.com", port: 443 })
    expect(jwksHostPort("http://keys.example.com/jwks")).toEqual({ host: "keys.example.com", port: 80 })
    expect(jwksHostPort("http://keys.example.com:8080/jwks")).toEqual({ host: "keys.example.com", port: 8080 })
  })

  it("are undefined for other schemes and non-URLs", () => {
    expect(jwksHostPort("ftp://keys.example.com/jwks")).toBeUndefined()
    expect(jwksHostPort("keys.example.com/jwks")).toBeUndefined()
  })
})

describe("rule timeout", () => {
  it("is the rule's, or 5 s", () => {
    expect(ruleTimeoutNanos({ timeout: "2.5s" })).toBe(2_500_000_000n)
    expect(ruleTimeoutNanos({})).toBe(5_000_000_000n)
    expect(ruleTimeoutNanos({ timeout: "soon" })).toBe(5_000_000_000n)
  })
})

describe("mesh service lookup", () => {
  it("matches host and service port", () => {
    expect(isMeshService("auth.default.svc.cluster.local", 8080)).toBe(true)
    expect(isMeshService("auth.default.svc.cluster.local", 80)).toBe(false)
    expect(isMeshService("login.example.com", 443)).toBe(false)
  })
})

describe("what the server fetches", () => {
  const all = [ra(external, inMesh), ra(inline, discovered)]
  const keysOf = (mode: "server" | "hybrid" | "proxy") => serverFetchTargets(all, mode, isMeshService).map((t) => t.key)

  it("in server mode: every rule without inline jwks", () => {
    expect(keysOf("server")).toEqual([
      "https://login.example.com/keys",
      "http://auth.default.svc.cluster.local:8080/jwks",
      "issuer:https://accounts.example.org",
    ])
  })

  it("in hybrid mode: rules whose JWKS host is not a mesh service, and discovery", () => {
    expect(keysOf("hybrid")).toEqual(["https://login.example.com/keys", "issuer:https://accounts.example.org"])
  })

  it("in proxy mode: only discovery, which the proxy cannot do", () => {
    expect(keysOf("proxy")).toEqual(["issuer:https://accounts.example.org"])
  })

  it("describes each target: issuer, URI (none for discovery), timeout", () => {
    const targets = serverFetchTargets([ra({ ...external, timeout: "2s" }, discovered)], "server", isMeshService)
    expect(targets).toEqual([
      {
        key: "https://login.example.com/keys",
        issuer: "https://login.example.com",
        jwksUri: "https://login.example.com/keys",
        timeoutMs: 2000,
      },
      { key: "issuer:https://accounts.example.org", issuer: "https://accounts.example.org", timeoutMs: 5000 },
    ])
  })

  it("fetches a URI shared by several rules once, with the longest timeout", () => {
    const targets = serverFetchTargets(
      [ra({ ...external, timeout: "1s" }), ra({ ...external, issuer: "other", timeout: "3s" }, external)],
      "server",
      isMeshService,
    )
    expect(targets).toHaveLength(1)
    expect(targets[0]).toMatchObject({ key: external.jwksUri, issuer: external.issuer, timeoutMs: 5000 })
  })

  it("skips what cannot be fetched: an unusable jwksUri, an issuer that is not a URL", () => {
    const targets = serverFetchTargets(
      [ra({ issuer: "x", jwksUri: "ftp://keys/jwks" }, { issuer: "testing@secure.mesh.io" })],
      "server",
      isMeshService,
    )
    expect(targets).toEqual([])
  })
})
