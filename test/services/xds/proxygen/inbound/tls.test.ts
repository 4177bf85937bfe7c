/**
 * Sidecar ingress TLS (issue 44 point 3): the workload's own certificate files are named over
 * the agent's SDS (`file-cert:<cert>~<key>`, `file-root:<ca>`) exactly as a Gateway server's
 * are, never inline; what cannot be served says why.
 */
import { describe, expect, it } from "vitest"
import type { ServerTLSSettings } from "../../../../../src/services/config-model/schemas/gateway.js"
import { typed } from "../../../../../src/services/xds/protocol/typed-any.js"
import { downstreamTlsContext } from "../../../../../src/services/xds/proxygen/gateway/tls.js"
import { ingressTlsSocket } from "../../../../../src/services/xds/proxygen/inbound/tls.js"
import { adsSdsSecret } from "../../../../../src/services/xds/proxygen/sds.js"
import { TypedConfig } from "../../../../../src/services/xds/proxygen/well-known.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const FILES = { serverCertificate: "/etc/certs/cert.pem", privateKey: "/etc/certs/key.pem" }
const CA = "/etc/certs/ca.pem"

const socket = (tls: ServerTLSSettings): J => {
  const built = ingressTlsSocket(tls)
  if (typeof built === "string") throw new Error(built)
  return built
}
const names = (configs: ReadonlyArray<J>) => configs.map((c) => c.name)

describe("ingressTlsSocket", () => {
  it("SIMPLE: the certificate from the agent's file-cert: secret, no client validation", () => {
    const s = socket({ mode: "SIMPLE", ...FILES })
    expect(s.name).toBe("envoy.transport_sockets.tls")
    expect(s.typed_config["@type"]).toBe(TypedConfig.downstreamTls)
    const common = s.typed_config.common_tls_context
    expect(names(common.tls_certificate_sds_secret_configs)).toEqual([
      "file-cert:/etc/certs/cert.pem~/etc/certs/key.pem",
    ])
    // Served by the agent on its socket (the bootstrap's sds-grpc cluster), waited for as long as it takes.
    const sds = common.tls_certificate_sds_secret_configs[0].sds_config
    expect(sds.api_config_source.grpc_services).toEqual([{ envoy_grpc: { cluster_name: "sds-grpc" } }])
    expect(sds.initial_fetch_timeout).toEqual({ seconds: "0", nanos: 0 })
    expect(common.tls_certificates).toBeUndefined()
    expect(common.combined_validation_context).toBeUndefined()
    expect(common.alpn_protocols).toEqual(["h2", "http/1.1"])
    expect(s.typed_config.require_client_certificate).toEqual({ value: false })
  })

  it("MUTUAL: the client CA from the agent's file-root: secret, the pins kept, a client certificate required", () => {
    const s = socket({
      mode: "MUTUAL",
      ...FILES,
      caCertificates: CA,
      verifyCertificateSpki: ["spki"],
      verifyCertificateHash: ["hash"],
      minProtocolVersion: "TLSV1_3",
    })
    const common = s.typed_config.common_tls_context
    expect(common.combined_validation_context.validation_context_sds_secret_config.name).toBe(
      "file-root:/etc/certs/ca.pem",
    )
    expect(common.combined_validation_context.default_validation_context).toEqual({
      verify_certificate_spki: ["spki"],
      verify_certificate_hash: ["hash"],
    })
    expect(common.validation_context).toBeUndefined()
    expect(common.tls_params).toEqual({ tls_minimum_protocol_version: "TLSv1_3" })
    expect(s.typed_config.require_client_certificate).toEqual({ value: true })
  })

  it("OPTIONAL_MUTUAL validates a client certificate when one is sent, without requiring it", () => {
    const s = socket({ mode: "OPTIONAL_MUTUAL", ...FILES, caCertificates: CA })
    const common = s.typed_config.common_tls_context
    expect(common.combined_validation_context.validation_context_sds_secret_config.name).toBe(
      "file-root:/etc/certs/ca.pem",
    )
    expect(s.typed_config.require_client_certificate).toEqual({ value: false })
  })

  it("names the secrets exactly as a Gateway server with the same files", () => {
    for (const tls of [
      { mode: "SIMPLE", ...FILES },
      { mode: "MUTUAL", ...FILES, caCertificates: CA, cipherSuites: ["ECDHE-ECDSA-AES128-GCM-SHA256"] },
      {
        mode: "SIMPLE",
        tlsCertificates: [FILES, { serverCertificate: "/etc/certs/rsa.pem", privateKey: "/etc/certs/rsa.key" }],
      },
    ] as const) {
      expect(socket(tls).typed_config).toEqual(
        typed(TypedConfig.downstreamTls, downstreamTlsContext(tls, false, adsSdsSecret)),
      )
    }
    expect(
      names(
        socket({ mode: "SIMPLE", tlsCertificates: [FILES, { serverCertificate: "/r.pem", privateKey: "/r.key" }] })
          .typed_config.common_tls_context.tls_certificate_sds_secret_configs,
      ),
    ).toEqual(["file-cert:/etc/certs/cert.pem~/etc/certs/key.pem", "file-cert:/r.pem~/r.key"])
  })

  it.each([
    [{ mode: "PASSTHROUGH", ...FILES }, "tls.mode PASSTHROUGH is not served by sidecar ingress"],
    [{ mode: "ISTIO_MUTUAL" }, "tls.mode ISTIO_MUTUAL is not served by sidecar ingress"],
    [{ mode: "SIMPLE", serverCertificate: "/c.pem" }, "tls.serverCertificate and tls.privateKey are required"],
    [
      { mode: "SIMPLE", tlsCertificates: [{ serverCertificate: "/c.pem" }] },
      "tls.serverCertificate and tls.privateKey are required",
    ],
    [{ mode: "MUTUAL", ...FILES }, "tls.caCertificates is required with mode MUTUAL"],
    [{ mode: "SIMPLE", credentialName: "web-cert" }, "credentials by name are not served by sidecar ingress"],
  ] as const)("refuses %j", (tls, reason) => {
    expect(ingressTlsSocket(tls as ServerTLSSettings)).toEqual(expect.stringContaining(reason))
  })
})
