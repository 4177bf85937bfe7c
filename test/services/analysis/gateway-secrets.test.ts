/** gateway.SecretAnalyzer (MSH0101/MSH0161): the credentials a Gateway's servers name exist and hold a valid certificate. */
import { describe, expect, it } from "@effect/vitest"
import { selfSigned } from "../gateway-api/tls-fixtures.js"
import { analyzeWith, mesh, pod, summary } from "./support.js"

const NAME = "gateway.SecretAnalyzer"
const NOW_VALID = Date.parse("2026-06-01T00:00:00Z")
const AFTER_EXPIRY = Date.parse("2035-01-01T00:00:00Z")
const gateway = (credential: string, selector = "{app: gw}") =>
  mesh(
    "Gateway",
    "gw",
    `{selector: ${selector}, servers: [{port: {number: 443, name: https, protocol: HTTPS}, hosts: ['*'], tls: {mode: SIMPLE, credentialName: ${credential}}}]}`,
  )
const gatewayPod = pod("gw-0", "{app: gw}", "", "ingress")
const b64 = (text: string) => Buffer.from(text).toString("base64")
const secret = (name: string, data: Record<string, string>, namespace = "ingress") =>
  `apiVersion: v1\nkind: Secret\nmetadata: {name: ${name}, namespace: ${namespace}}\ndata: ${JSON.stringify(
    Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  )}\n`

describe("gateway.SecretAnalyzer", async () => {
  const { cert, key } = await selfSigned("gw.example.com")

  it("accepts a valid key pair in the gateway pods' namespace (tls.* or generic keys)", () => {
    const now = { now: NOW_VALID }
    expect(
      analyzeWith(NAME, now, gateway("good"), gatewayPod, secret("good", { "tls.crt": cert, "tls.key": key })),
    ).toEqual([])
    expect(analyzeWith(NAME, now, gateway("good"), gatewayPod, secret("good", { cert, key }))).toEqual([])
  })

  it("reports a missing Secret (looked up where the gateway pods run) and no gateway pod", () => {
    const elsewhere = secret("good", { "tls.crt": cert, "tls.key": key }, "default")
    const found = analyzeWith(NAME, { now: NOW_VALID }, gateway("good"), gatewayPod, elsewhere)
    expect(summary(found)).toEqual(["MSH0101 Gateway/default/gw"])
    expect(found[0]?.text).toBe('Referenced credentialName not found: "good"')
    const noPod = analyzeWith(NAME, { now: NOW_VALID }, gateway("good", "{app: none}"))
    expect(noPod.map((m) => m.text)).toEqual(['Referenced selector not found: "app=none"'])
  })

  it("reports an expired certificate, a garbled one and a missing key as invalid", () => {
    const good = secret("good", { "tls.crt": cert, "tls.key": key })
    const expired = analyzeWith(NAME, { now: AFTER_EXPIRY }, gateway("good"), gatewayPod, good)
    expect(summary(expired)).toEqual(["MSH0161 Gateway/default/gw"])
    expect(expired[0]?.text).toBe(
      "The credential referenced by the Gateway gw in namespace ingress is invalid, which can cause the traffic not to work as expected.",
    )
    const garbled = secret("good", {
      "tls.crt": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
      "tls.key": key,
    })
    expect(summary(analyzeWith(NAME, { now: NOW_VALID }, gateway("good"), gatewayPod, garbled))).toEqual([
      "MSH0161 Gateway/default/gw",
    ])
    const noKey = secret("good", { "tls.crt": cert })
    expect(summary(analyzeWith(NAME, { now: NOW_VALID }, gateway("good"), gatewayPod, noKey))).toEqual([
      "MSH0161 Gateway/default/gw",
    ])
  })
})
