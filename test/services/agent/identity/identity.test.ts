/** Pure rules of the workload identity: key type from the environment, renewal timing, backoff caps. */
import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import {
  caSettingsProblem,
  DEFAULT_RETRY,
  expirySeconds,
  keySpecFrom,
  renewalDelayMs,
  retryCapFor,
  tokenPathFor,
} from "../../../../src/services/agent/identity/identity.js"

const env = (o: Partial<{ WORKLOAD_RSA_KEY_SIZE: number; ECC_SIGNATURE_ALGORITHM: string; ECC_CURVE: string }>) => ({
  WORKLOAD_RSA_KEY_SIZE: 2048,
  ECC_SIGNATURE_ALGORITHM: "",
  ECC_CURVE: "P256",
  ...o,
})

describe("keySpecFrom", () => {
  it.each([
    [{}, { kind: "RSA", bits: 2048 }],
    [{ WORKLOAD_RSA_KEY_SIZE: 4096 }, { kind: "RSA", bits: 4096 }],
    [{ ECC_SIGNATURE_ALGORITHM: "ECDSA" }, { kind: "EC", curve: "P-256" }],
    [
      { ECC_SIGNATURE_ALGORITHM: "ecdsa", ECC_CURVE: "P384" },
      { kind: "EC", curve: "P-384" },
    ],
    [
      { ECC_SIGNATURE_ALGORITHM: "ECDSA", ECC_CURVE: "" },
      { kind: "EC", curve: "P-256" },
    ],
  ])("%j → %j", (input, expected) => {
    expect(keySpecFrom(env(input))).toEqual(expected)
  })

  it.each([
    [{ WORKLOAD_RSA_KEY_SIZE: 1024 }, /between 2048 and 8192/],
    [{ ECC_SIGNATURE_ALGORITHM: "ED25519" }, /only ECDSA/],
    [{ ECC_SIGNATURE_ALGORITHM: "ECDSA", ECC_CURVE: "P521" }, /one of P256, P384/],
  ])("%j is refused", (input, message) => {
    expect(keySpecFrom(env(input))).toMatch(message)
  })
})

describe("renewal timing", () => {
  const cert = { notBefore: new Date(0), notAfter: new Date(3_600_000) }

  it("renews at half of the lifetime without jitter", () => {
    expect(renewalDelayMs(cert, 0, { graceRatio: 0.5, jitter: 0 }, 0.3)).toBe(1_800_000)
    expect(renewalDelayMs(cert, 1_000_000, { graceRatio: 0.5, jitter: 0 }, 0.3)).toBe(800_000)
  })

  it("moves by at most ± jitter of the lifetime", () => {
    const policy = { graceRatio: 0.5, jitter: 0.01 }
    expect(renewalDelayMs(cert, 0, policy, 0)).toBe(1_800_000 - 36_000)
    expect(renewalDelayMs(cert, 0, policy, 0.5)).toBe(1_800_000)
    expect(renewalDelayMs(cert, 0, policy, 0.999999)).toBeLessThanOrEqual(1_800_000 + 36_000)
  })

  it("is immediate once past the renewal point", () => {
    expect(renewalDelayMs(cert, 3_000_000, { graceRatio: 0.5, jitter: 0 }, 0)).toBe(0)
  })

  it("expiry seconds go negative after notAfter", () => {
    expect(expirySeconds(cert, 3_000_000)).toBe(600)
    expect(expirySeconds(cert, 3_700_000)).toBe(-100)
  })

  it("caps retry backoff at a tenth of the remaining lifetime, never below the base", () => {
    expect(Duration.toMillis(retryCapFor(DEFAULT_RETRY, 3_600_000).max)).toBe(30_000)
    expect(Duration.toMillis(retryCapFor(DEFAULT_RETRY, 60_000).max)).toBe(6_000)
    expect(Duration.toMillis(retryCapFor(DEFAULT_RETRY, 1_000).max)).toBe(500)
  })

  it("third-party-jwt reads the projected token, first-party-jwt the service-account token", () => {
    expect(tokenPathFor("third-party-jwt")).toBe("./var/run/secrets/tokens/mesh-token")
    expect(tokenPathFor("first-party-jwt")).toContain("serviceaccount/token")
  })
})

describe("caSettingsProblem (CA_PROVIDER, CREDENTIAL_FETCHER_TYPE)", () => {
  const ca = (CA_PROVIDER: string, CREDENTIAL_FETCHER_TYPE = "JWT") =>
    caSettingsProblem({ CA_PROVIDER, CREDENTIAL_FETCHER_TYPE })

  it("accepts the built-in CA (default MeshCA, the reference's Citadel, empty) with the JWT fetcher", () => {
    expect(ca("MeshCA")).toBeUndefined()
    expect(ca("Citadel")).toBeUndefined()
    expect(ca("")).toBeUndefined()
    expect(ca("MeshCA", "")).toBeUndefined()
  })

  it("refuses cloud CAs, naming the supported values", () => {
    expect(ca("GoogleCA")).toMatch(/^CA_PROVIDER "GoogleCA" is not supported: use MeshCA or Citadel/)
    expect(ca("meshca")).toMatch(/^CA_PROVIDER "meshca" is not supported/)
  })

  it("refuses the cloud-VM credential fetcher and unknown fetchers, naming JWT", () => {
    expect(ca("MeshCA", "GoogleComputeEngine")).toMatch(
      /^CREDENTIAL_FETCHER_TYPE "GoogleComputeEngine" is not supported: use JWT/,
    )
    expect(ca("MeshCA", "Token")).toMatch(/^CREDENTIAL_FETCHER_TYPE "Token" is not supported/)
  })
})
