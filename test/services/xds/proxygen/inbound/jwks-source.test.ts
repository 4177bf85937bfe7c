import { createPublicKey, type JsonWebKey } from "node:crypto"
import { describe, expect, it } from "vitest"
import type { RequestAuthenticationSpec } from "../../../../../src/services/config-model/schemas/request-authentication.js"
import type { JwksMode } from "../../../../../src/services/jwks/mode.js"
import { jwksSource, UNUSABLE_JWKS } from "../../../../../src/services/xds/proxygen/inbound/jwks-source.js"

type Rule = NonNullable<RequestAuthenticationSpec["jwtRules"]>[number]

const FETCHED = '{"keys":[{"kty":"EC","kid":"fetched"}]}'
const DISCOVERED = '{"keys":[{"kty":"EC","kid":"discovered"}]}'
const resolved = new Map([
  ["https://login.example.com/keys", FETCHED],
  ["http://auth.default.svc.cluster.local:8080/jwks", FETCHED],
  ["issuer:https://accounts.example.org", DISCOVERED],
])
const external: Rule = { issuer: "https://login.example.com", jwksUri: "https://login.example.com/keys" }
const inMesh: Rule = { issuer: "auth", jwksUri: "http://auth.default.svc.cluster.local:8080/jwks", timeout: "1.5s" }
const unfetched: Rule = { issuer: "https://other.example.com", jwksUri: "https://other.example.com/keys" }

const sees =
  (...hostPorts: Array<string>) =>
  (host: string, port: number) =>
    hostPorts.includes(`${host}:${port}`)
const source = (rule: Rule, mode: JwksMode, hasServicePort = sees()) =>
  jwksSource(rule, { mode, resolved, hasServicePort })

const remote = (uri: string, cluster: string, timeout: { seconds: string; nanos: number }) => ({
  remote_jwks: { http_uri: { uri, cluster, timeout }, cache_duration: { seconds: "300", nanos: 0 } },
})
const local = (inline: string) => ({ local_jwks: { inline_string: inline } })

describe("the unusable key set", () => {
  it("is a valid RSA public key, so the proxy loads it and no token verifies", () => {
    const { keys } = JSON.parse(UNUSABLE_JWKS) as { keys: Array<JsonWebKey> }
    expect(keys).toHaveLength(1)
    expect(createPublicKey({ key: keys[0]!, format: "jwk" }).asymmetricKeyType).toBe("rsa")
  })
})

describe("JWKS source of a provider", () => {
  it.each<JwksMode>(["server", "hybrid", "proxy"])("inlines the rule's own jwks in %s mode", (mode) => {
    expect(source({ issuer: "i", jwks: '{"keys":[]}', jwksUri: "https://login.example.com/keys" }, mode)).toEqual({
      source: local('{"keys":[]}'),
    })
  })

  it("in server mode inlines the keys the server fetched, even for a mesh service", () => {
    expect(source(external, "server")).toEqual({ source: local(FETCHED) })
    expect(source(inMesh, "server", sees("auth.default.svc.cluster.local:8080"))).toEqual({ source: local(FETCHED) })
  })

  it("in hybrid mode lets the proxy fetch through its cluster", () => {
    expect(source(inMesh, "hybrid", sees("auth.default.svc.cluster.local:8080"))).toEqual({
      source: remote(inMesh.jwksUri!, "outbound|8080||auth.default.svc.cluster.local", { seconds: "1", nanos: 5e8 }),
    })
  })

  it("in hybrid mode inlines the server's keys when the proxy has no cluster for the host", () => {
    expect(source(external, "hybrid", sees("auth.default.svc.cluster.local:8080"))).toEqual({ source: local(FETCHED) })
  })

  it("in proxy mode always lets the proxy fetch, warning when it has no cluster", () => {
    expect(source(external, "proxy", sees("login.example.com:443"))).toEqual({
      source: remote(external.jwksUri!, "outbound|443||login.example.com", { seconds: "5", nanos: 0 }),
    })
    const unseen = source(external, "proxy")
    expect(unseen.source).toEqual(
      remote(external.jwksUri!, "outbound|443||login.example.com", { seconds: "5", nanos: 0 }),
    )
    expect(unseen.warning).toBe(
      "jwksUri host login.example.com:443 is not a service the proxy sees (no cluster outbound|443||login.example.com); add a ServiceEntry for it, or tokens of issuer https://login.example.com are rejected",
    )
  })

  it.each<JwksMode>(["server", "hybrid", "proxy"])("inlines keys found by OIDC discovery in %s mode", (mode) => {
    expect(source({ issuer: "https://accounts.example.org" }, mode, sees("accounts.example.org:443"))).toEqual({
      source: local(DISCOVERED),
    })
  })

  it("rejects tokens when the server holds no keys, saying why", () => {
    const server = source(unfetched, "server")
    expect(server.source).toEqual(local(UNUSABLE_JWKS))
    expect(server.warning).toContain("the server holds no keys from jwksUri https://other.example.com/keys")
    expect(server.warning).toContain("tokens of issuer https://other.example.com are rejected")
    expect(source(unfetched, "hybrid").warning).toContain("or the host is a mesh service this proxy has no cluster for")

    const discovery = source({ issuer: "https://new.example.org/" }, "proxy")
    expect(discovery.source).toEqual(local(UNUSABLE_JWKS))
    expect(discovery.warning).toContain("https://new.example.org/.well-known/openid-configuration")

    const notUrl = source({ issuer: "testing@secure.mesh.io" }, "server")
    expect(notUrl.source).toEqual(local(UNUSABLE_JWKS))
    expect(notUrl.warning).toContain("is not an http(s) URL")

    const badUri = source({ issuer: "x", jwksUri: "ftp://keys/jwks" }, "proxy")
    expect(badUri).toEqual({
      source: local(UNUSABLE_JWKS),
      warning: "neither jwks nor a usable jwksUri; tokens of issuer x are rejected",
    })
  })
})
