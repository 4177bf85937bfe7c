/** The pure CA decisions: serving certificate names, TLS policy, the CA's own settings. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Either } from "effect"
import { CaConfig } from "../../../src/services/ca/config.js"
import { caServerTls, caSettingsFromConfig, serverDnsNames } from "../../../src/services/ca/settings.js"

describe("CA settings", () => {
  it("names the serving certificate meshd.<ns>.svc, the revision and MESHD_CUSTOM_HOST", () => {
    expect(serverDnsNames({ MESHD_CUSTOM_HOST: "a.example, b.example,", REVISION: "" }, "mesh-system")).toEqual([
      "meshd.mesh-system.svc",
      "a.example",
      "b.example",
    ])
    expect(serverDnsNames({ MESHD_CUSTOM_HOST: "", REVISION: "canary" }, "ns")).toEqual([
      "meshd.ns.svc",
      "meshd-canary.ns.svc",
    ])
  })

  it("maps --tls-cipher-suites to OpenSSL names and refuses unknown suites and policies", () => {
    expect(caServerTls("", [])).toEqual(Either.right({}))
    expect(caServerTls("", ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"])).toEqual(
      Either.right({ ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }),
    )
    expect(Either.isLeft(caServerTls("", ["TLS_NOPE"]))).toBe(true)
    expect(Either.isLeft(caServerTls("pqc-maybe", []))).toBe(true)
  })

  it("takes the CA's settings from the table defaults and the fields", () => {
    const settings = caSettingsFromConfig({ ...CaConfig.defaults(), trustDomain: "example.org", stateDir: "/s" })
    expect(settings).toMatchObject({
      trustDomain: "example.org",
      rootCaDir: "./etc/cacerts",
      stateDir: "/s",
      rsaKeySize: 2048,
      rotation: { gracePeriodPercentile: 20, enableJitter: true },
    })
    expect(Duration.toHours(settings.policy.defaultTtl)).toBe(24)
    expect(Duration.toHours(settings.selfSignedTtl)).toBe(87600)
  })
})
