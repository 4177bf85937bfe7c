/** authn.BlockedCIDRsAnalyzer (MSH0175): JWKS fetches unrestricted while RequestAuthentications exist. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, summary } from "./support.js"

const NAME = "authn.BlockedCIDRsAnalyzer"
const meshd = (env = "[]") =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: meshd, namespace: mesh-system, labels: {app: meshd}}\nspec:\n  selector: {matchLabels: {app: meshd}}\n  template:\n    metadata: {labels: {app: meshd}}\n    spec: {containers: [{name: discovery, image: meshd:1, env: ${env}}]}\n`
const requestAuth = (name: string) =>
  mesh("RequestAuthentication", name, "{jwtRules: [{issuer: example.com}]}", "default", "security.mesh.io/v1")

describe("authn.BlockedCIDRsAnalyzer", () => {
  it("reports the control plane without the setting, naming up to five policies", () => {
    const found = analyze(NAME, meshd(), ...["a", "b", "c", "d", "e", "f", "g"].map(requestAuth))
    expect(summary(found)).toEqual(["MSH0175 Deployment/mesh-system/meshd"])
    expect(found[0]?.text).toBe(
      "BLOCKED_CIDRS_IN_JWKS_URIS is not configured but 7 RequestAuthentication resource(s) exist (default/a, default/b, default/c, default/d, default/e, and 2 more). Consider configuring it to restrict JWKS URI fetches to trusted networks.",
    )
  })

  it("is satisfied by a non-empty setting, and silent without RequestAuthentications", () => {
    expect(analyze(NAME, meshd("[{name: BLOCKED_CIDRS_IN_JWKS_URIS, value: '10.0.0.0/8'}]"), requestAuth("a"))).toEqual(
      [],
    )
    expect(summary(analyze(NAME, meshd("[{name: BLOCKED_CIDRS_IN_JWKS_URIS, value: ''}]"), requestAuth("a")))).toEqual([
      "MSH0175 Deployment/mesh-system/meshd",
    ])
    expect(analyze(NAME, meshd())).toEqual([])
  })
})
