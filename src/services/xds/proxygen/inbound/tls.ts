/**
 * The TLS a sidecar's inbound chains terminate: the mesh's mutual TLS (the workload certificate
 * and the mesh root, both served by the agent over SDS, a client certificate required), or the
 * workload's own certificates named by a Sidecar ingress `tls` (files in the proxy's container,
 * which the agent's SDS reads and serves as `file-cert:`/`file-root:` secrets).
 * And the ALPN values the chains match to tell mesh mTLS from other TLS and plaintext HTTP from
 * other plaintext.
 */

import type { ServerTLSSettings } from "../../../config-model/schemas/gateway.js"
import { typed } from "../../protocol/typed-any.js"
import type { CertificateValidationContext, DownstreamTlsContext, TransportSocket } from "../../protocol/xds-types.js"
import { downstreamTlsContext, tlsTransportSocket } from "../gateway/tls.js"
import { adsSdsSecret, agentSdsSecret } from "../sds.js"
import { MESH_ALPN_HTTP, MESH_ALPN_TCP, SDS_DEFAULT, SDS_ROOT, TypedConfig } from "../well-known.js"

/**
 * The ALPN values a mesh peer's mTLS carries, and nothing else: a chain matching them terminates
 * the mesh's mTLS, so a client speaking its own TLS (plain `h2`/`http/1.1`, no mesh certificate)
 * must never match it — on a PERMISSIVE port such a client is passed through to the workload.
 *
 * On a port whose protocol is declared (HTTP or TCP) any of them means a mesh peer.
 */
export const MTLS_ALPN_ANY: ReadonlyArray<string> = [...MESH_ALPN_TCP.slice().reverse(), ...MESH_ALPN_HTTP]
/** On an auto-detected port the peer's ALPN tells which chain: HTTP it detected... */
export const MTLS_ALPN_HTTP: ReadonlyArray<string> = MESH_ALPN_HTTP
/** ...or traffic it could not tell, which goes to the TCP chain. */
export const MTLS_ALPN_TCP: ReadonlyArray<string> = MESH_ALPN_TCP
/**
 * What the HTTP inspector reports for plaintext HTTP the HTTP chain of an auto port takes.
 * HTTP/1.0 only when the mesh accepts it (`PILOT_HTTP10`): otherwise the connection manager
 * would refuse it, while the TCP chain at least passes it through.
 */
export const plaintextAlpnHttp = (http10: boolean): ReadonlyArray<string> =>
  http10 ? ["http/1.0", "http/1.1", "h2c"] : ["http/1.1", "h2c"]

/** What the server offers back in the handshake. */
const SERVER_ALPN_HTTP: ReadonlyArray<string> = ["h2", "http/1.1"]
const SERVER_ALPN_TCP: ReadonlyArray<string> = [MESH_ALPN_TCP[0], "h2", "http/1.1"]

const transportSocket = (context: DownstreamTlsContext): TransportSocket => ({
  name: "envoy.transport_sockets.tls",
  typed_config: typed(TypedConfig.downstreamTls, context),
})

/** The mesh's mTLS, terminated for an HTTP (`http`) or TCP (`tcp`) chain. */
export const meshMtlsSocket = (kind: "http" | "tcp"): TransportSocket =>
  transportSocket({
    common_tls_context: {
      tls_params: { tls_minimum_protocol_version: "TLSv1_2", tls_maximum_protocol_version: "TLSv1_3" },
      alpn_protocols: kind === "http" ? SERVER_ALPN_HTTP : SERVER_ALPN_TCP,
      tls_certificate_sds_secret_configs: [agentSdsSecret(SDS_DEFAULT)],
      combined_validation_context: {
        default_validation_context: {},
        validation_context_sds_secret_config: agentSdsSecret(SDS_ROOT),
      },
    },
    require_client_certificate: { value: true },
  })

const nonEmpty = (v: string | undefined): v is string => v !== undefined && v !== ""

/**
 * A Sidecar ingress `tls` (SIMPLE, MUTUAL or OPTIONAL_MUTUAL with certificate files): the socket,
 * or a reason it cannot be served (other modes, credentials by name, missing files).
 *
 * Built as a Gateway server's (the reference uses one builder for both): the files are named
 * over the agent's SDS as `file-cert:<cert>~<key>` and `file-root:<ca>`, so the agent reads them,
 * checks them and pushes each rotation; the server offers h2 and http/1.1 whatever the protocol
 * inside. Unlike the reference, `verifyCertificateSpki`/`verifyCertificateHash` are kept as
 * client-certificate pins (the reference drops them with files; a pin silently dropped would
 * let through clients the operator meant to refuse).
 */
export const ingressTlsSocket = (tls: ServerTLSSettings): TransportSocket | string => {
  const mode = tls.mode ?? "PASSTHROUGH"
  if (mode !== "SIMPLE" && mode !== "MUTUAL" && mode !== "OPTIONAL_MUTUAL")
    return `tls.mode ${mode} is not served by sidecar ingress (SIMPLE, MUTUAL, OPTIONAL_MUTUAL)`
  if (nonEmpty(tls.credentialName) || (tls.credentialNames ?? []).some(nonEmpty))
    return "credentials by name are not served by sidecar ingress: name the files"
  // As the Gateway builder picks them: `tlsCertificates` when given, else the single pair.
  const pairs =
    (tls.tlsCertificates?.length ?? 0) > 0
      ? tls.tlsCertificates!.filter((c) => nonEmpty(c.serverCertificate) && nonEmpty(c.privateKey))
      : nonEmpty(tls.serverCertificate) && nonEmpty(tls.privateKey)
        ? [tls]
        : []
  if (pairs.length === 0) return "tls.serverCertificate and tls.privateKey are required"
  const ca = nonEmpty(tls.caCertificates) || pairs.some((p) => nonEmpty(p.caCertificates))
  if (mode !== "SIMPLE" && !ca) return `tls.caCertificates is required with mode ${mode}`
  const context = downstreamTlsContext(tls, false, adsSdsSecret)
  const pins: CertificateValidationContext = {
    ...((tls.verifyCertificateSpki?.length ?? 0) > 0 ? { verify_certificate_spki: tls.verifyCertificateSpki } : {}),
    ...((tls.verifyCertificateHash?.length ?? 0) > 0 ? { verify_certificate_hash: tls.verifyCertificateHash } : {}),
  }
  const common = context.common_tls_context ?? {}
  const combined = common.combined_validation_context
  if (combined === undefined || Object.keys(pins).length === 0) return tlsTransportSocket(context)
  const validation = combined.default_validation_context ?? {}
  return tlsTransportSocket({
    ...context,
    common_tls_context: {
      ...common,
      combined_validation_context: { ...combined, default_validation_context: { ...validation, ...pins } },
    },
  })
}
