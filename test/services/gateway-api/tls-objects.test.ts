/**
 * Issue 36 group 3: the Secrets and ConfigMaps a listener references are checked when known. A
 * missing or malformed certificate Secret leaves the listener unserved (ResolvedRefs
 * InvalidCertificateRef, Programmed Invalid); a missing or malformed CA bundle also makes it not
 * Accepted (NoValidCACertificate); a CA reference of another kind is InvalidCACertificateKind.
 */

import { describe, expect, it } from "@effect/vitest"
import type { TlsObjects } from "../../../src/services/gateway-api/tls-objects.js"
import { conditionOf, convert, gatewayStatusOf, listenerOf, schemaProblems, simpleGateway } from "./fixtures.js"
import { httpsListener, selfSigned, tlsSecret } from "./tls-fixtures.js"

describe("referenced Secrets and ConfigMaps", async () => {
  const good = await selfSigned("good.example.com")
  const other = await selfSigned("other.example.com")
  const objects: TlsObjects = {
    secrets: new Map([
      ["infra/good", tlsSecret("good", { "tls.crt": good.cert, "tls.key": good.key })],
      // A key that is not the certificate's.
      ["infra/mismatched", tlsSecret("mismatched", { "tls.crt": good.cert, "tls.key": other.key })],
      ["infra/garbage", tlsSecret("garbage", { "tls.crt": "not a certificate", "tls.key": "not a key" })],
      ["infra/ca-secret", tlsSecret("ca-secret", { "ca.crt": other.cert })],
    ]),
    configMaps: new Map([
      ["infra/ca", { "ca.crt": other.cert }],
      ["infra/bad-ca", { "ca.crt": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" }],
      ["infra/empty-ca", {}],
    ]),
  }

  const listeners = [
    httpsListener("ok", "good"),
    httpsListener("missing", "ghost"),
    httpsListener("mismatched", "mismatched"),
    httpsListener("garbage", "garbage"),
    httpsListener("mtls", "good", { kind: "ConfigMap", name: "ca" }),
    httpsListener("mtls-secret", "good", { kind: "Secret", name: "ca-secret" }),
    httpsListener("ca-missing", "good", { kind: "ConfigMap", name: "nope" }),
    httpsListener("ca-bad", "good", { kind: "ConfigMap", name: "bad-ca" }),
    httpsListener("ca-empty", "good", { kind: "ConfigMap", name: "empty-ca" }),
    httpsListener("ca-kind", "good", { kind: "Service", name: "ca" }),
  ]
  const out = convert({ gateways: [simpleGateway(listeners)], tlsObjects: objects })
  const status = gatewayStatusOf(out)
  const conditions = (name: string) => {
    const c = listenerOf(status, name).conditions
    return [
      `${conditionOf(c, "Accepted").status}/${conditionOf(c, "Accepted").reason}`,
      `${conditionOf(c, "ResolvedRefs").status}/${conditionOf(c, "ResolvedRefs").reason}`,
      `${conditionOf(c, "Programmed").status}/${conditionOf(c, "Programmed").reason}`,
    ]
  }

  it("only listeners whose certificate and CA bundle are usable are served", () => {
    expect(schemaProblems(out)).toEqual([])
    expect(out.gateways[0]!.spec.servers.map((s) => s.port.name)).toEqual(["ok", "mtls", "mtls-secret"])
    expect(out.gateways[0]!.spec.servers.map((s) => s.tls?.mode)).toEqual(["SIMPLE", "MUTUAL", "MUTUAL"])
  })

  it("a missing, mismatched or unparseable certificate Secret: InvalidCertificateRef, not programmed", () => {
    for (const name of ["missing", "mismatched", "garbage"])
      expect(conditions(name)).toEqual(["True/Accepted", "False/InvalidCertificateRef", "False/Invalid"])
    const message = (name: string) =>
      listenerOf(status, name).conditions.find((c) => c.type === "ResolvedRefs")!.message
    expect(message("missing")).toBe("invalid certificate reference Secret infra/ghost, secret infra/ghost not found")
    expect(message("mismatched")).toMatch(/the private key does not match/)
    expect(message("garbage")).toMatch(/the certificate is malformed/)
  })

  it("a missing or malformed CA bundle: not accepted (NoValidCACertificate), InvalidCACertificateRef", () => {
    for (const name of ["ca-missing", "ca-bad", "ca-empty"])
      expect(conditions(name)).toEqual(["False/NoValidCACertificate", "False/InvalidCACertificateRef", "False/Invalid"])
    expect(conditions("ca-kind")).toEqual([
      "False/NoValidCACertificate",
      "False/InvalidCACertificateKind",
      "False/Invalid",
    ])
  })

  it("without the objects (not known), only the references themselves are checked", () => {
    const unchecked = convert({ gateways: [simpleGateway(listeners.slice(0, 4))] })
    expect(unchecked.gateways[0]!.spec.servers.map((s) => s.port.name)).toEqual([
      "ok",
      "missing",
      "mismatched",
      "garbage",
    ])
  })
})
