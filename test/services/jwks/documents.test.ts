import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { checkJwks, openIdConfigurationUrl, parseOpenIdConfiguration } from "../../../src/services/jwks/documents.js"

describe("OIDC discovery document", () => {
  it("is found under the issuer, with or without a trailing slash", () => {
    expect(openIdConfigurationUrl("https://accounts.example.com")).toBe(
      "https://accounts.example.com/.well-known/openid-configuration",
    )
    expect(openIdConfigurationUrl("https://example.com/tenant/")).toBe(
      "https://example.com/tenant/.well-known/openid-configuration",
    )
  })

  it("cannot be found for an issuer that is not an http(s) URL", () => {
    expect(openIdConfigurationUrl("testing@secure.mesh.io")).toBeUndefined()
    expect(openIdConfigurationUrl("spiffe://cluster.local")).toBeUndefined()
  })

  it("names the key set in jwks_uri", () => {
    const doc = JSON.stringify({ issuer: "https://a.example.com", jwks_uri: "https://a.example.com/keys" })
    expect(parseOpenIdConfiguration(doc)).toEqual(Either.right("https://a.example.com/keys"))
  })

  it.each([
    ["not JSON", "<html>", "not JSON"],
    ["not an object", "[1]", "not a JSON object"],
    ["without jwks_uri", "{}", "no jwks_uri"],
    ["with a jwks_uri that is not a string", '{"jwks_uri": 3}', "no jwks_uri"],
    ["with a jwks_uri of another scheme", '{"jwks_uri": "file:///etc/keys"}', "not an http(s) URL"],
  ])("is refused %s", (_, body, reason) => {
    const parsed = parseOpenIdConfiguration(body)
    expect(Either.isLeft(parsed) && parsed.left).toContain(reason)
  })
})

describe("JWKS document", () => {
  it("is kept as compact JSON, so that reformatting is not a change", () => {
    const keys = { keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y", kid: "k1" }] }
    const pretty = JSON.stringify(keys, null, 2)
    expect(checkJwks(pretty)).toEqual(Either.right(JSON.stringify(keys)))
    expect(checkJwks(pretty)).toEqual(checkJwks(JSON.stringify(keys)))
  })

  it.each([
    ["not JSON", "{", "not JSON"],
    ["an array", "[]", "not a JSON object"],
    ["without keys", '{"key": []}', "no keys array"],
    ["with keys not an array", '{"keys": {}}', "no keys array"],
    ["with a key that is not an object", '{"keys": [{"kty": "RSA"}, "k"]}', "keys[1] is not an object"],
  ])("is refused when %s", (_, body, reason) => {
    const checked = checkJwks(body)
    expect(Either.isLeft(checked) && checked.left).toContain(reason)
  })
})
