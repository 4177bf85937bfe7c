/**
 * The downstream TLS context of a Gateway server that terminates TLS (SIMPLE, MUTUAL,
 * OPTIONAL_MUTUAL, ISTIO_MUTUAL), as the reference writes it:
 *
 * - `credentialName` (or `credentialNames`): the certificate from SDS secret
 *   `kubernetes://<name>` over ADS (the control plane serves gateway credentials), and for
 *   MUTUAL the client CA from `kubernetes://<name>-cacert`; `sds://<name>` from the mesh
 *   config's SDS provider instead (external-sds.ts).
 * - file paths (`serverCertificate`/`privateKey`/`caCertificates`, or `tlsCertificates`): the
 *   agent's SDS serves the files as `file-cert:<cert>~<key>` and `file-root:<ca>`.
 * - ISTIO_MUTUAL: the workload certificate `default` and the mesh root `ROOTCA` from the agent.
 *
 * Then `minProtocolVersion`/`maxProtocolVersion`/`cipherSuites` for SIMPLE and MUTUAL, and
 * `subjectAltNames` as the client certificate's SAN matchers.
 */

import { fileCertName, fileRootName } from "../../../credentials/file-secret-name.js"
import { type Draft, typed } from "../../protocol/typed-any.js"
import type {
  CertificateValidationContext,
  CommonTlsContext,
  DownstreamTlsContext,
  SdsSecretConfig,
  SubjectAltNameMatcher,
  TlsParameters,
  TlsParameters_TlsProtocol,
  TransportSocket,
} from "../../protocol/xds-types.js"
import { agentSdsSecret } from "../sds.js"
import { SDS_DEFAULT, SDS_ROOT, TypedConfig } from "../well-known.js"
import type { ServerTls } from "./merge.js"

/** The SDS secret config of a gateway credential by name (external-sds.ts's `credentialSecret`, bound to a push). */
export type CredentialSecret = (name: string) => SdsSecretConfig

/** Suffix of the SDS name of a credential's CA bundle (the reference's spelling). */
export const SDS_CA_SUFFIX = "-cacert"
export const TLS_TRANSPORT_SOCKET = "envoy.transport_sockets.tls"

/** ALPN a terminating HTTPS server offers; TCP servers terminating mesh mTLS add the peer exchange. */
const ALPN_HTTP = ["h2", "http/1.1"] as const
const ALPN_MESH_TCP = ["istio-peer-exchange", "h2", "http/1.1"] as const

const TLS_VERSION: Readonly<Record<string, TlsParameters_TlsProtocol>> = {
  TLS_AUTO: "TLS_AUTO",
  TLSV1_0: "TLSv1_0",
  TLSV1_1: "TLSv1_1",
  TLSV1_2: "TLSv1_2",
  TLSV1_3: "TLSv1_3",
}

/**
 * SAN matchers for `subjectAltNames`: each name as a DNS and as a URI SAN (either matches), the
 * typed form of the reference's (deprecated) untyped exact matchers.
 */
const sanMatchers = (sans: ReadonlyArray<string>): ReadonlyArray<SubjectAltNameMatcher> =>
  sans.flatMap(
    (san): ReadonlyArray<SubjectAltNameMatcher> => [
      { san_type: "DNS", matcher: { exact: san } },
      { san_type: "URI", matcher: { exact: san } },
    ],
  )

const withSans = (sans: ReadonlyArray<string>): CertificateValidationContext =>
  sans.length > 0 ? { match_typed_subject_alt_names: sanMatchers(sans) } : {}

const nonEmpty = (v: string | undefined): v is string => v !== undefined && v !== ""

/** The parts of CommonTlsContext the server's certificates and client validation make. */
const certificates = (
  tls: ServerTls,
  mode: string,
  validateClient: boolean,
  credentialSecret: CredentialSecret,
): CommonTlsContext => {
  const sans = tls.subjectAltNames ?? []
  if (mode === "ISTIO_MUTUAL") {
    return {
      tls_certificate_sds_secret_configs: [agentSdsSecret(SDS_DEFAULT)],
      ...(validateClient
        ? {
            combined_validation_context: {
              default_validation_context: withSans(sans),
              validation_context_sds_secret_config: agentSdsSecret(SDS_ROOT),
            },
          }
        : {}),
    }
  }
  const credentials = [
    ...(nonEmpty(tls.credentialName) ? [tls.credentialName] : []),
    ...(tls.credentialNames ?? []).filter(nonEmpty),
  ]
  if (credentials.length > 0) {
    const first = credentials[0]!
    const mutual = mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL"
    return {
      tls_certificate_sds_secret_configs: [...new Set(credentials)].map(credentialSecret),
      ...(mutual
        ? {
            combined_validation_context: {
              default_validation_context: {
                ...withSans(sans),
                ...((tls.verifyCertificateSpki?.length ?? 0) > 0
                  ? { verify_certificate_spki: tls.verifyCertificateSpki }
                  : {}),
                ...((tls.verifyCertificateHash?.length ?? 0) > 0
                  ? { verify_certificate_hash: tls.verifyCertificateHash }
                  : {}),
              },
              validation_context_sds_secret_config: credentialSecret(`${first}${SDS_CA_SUFFIX}`),
            },
          }
        : sans.length > 0
          ? { validation_context: withSans(sans) }
          : {}),
    }
  }
  const pairs =
    (tls.tlsCertificates?.length ?? 0) > 0
      ? tls.tlsCertificates!.filter((c) => nonEmpty(c.serverCertificate) && nonEmpty(c.privateKey))
      : nonEmpty(tls.serverCertificate) && nonEmpty(tls.privateKey)
        ? [{ serverCertificate: tls.serverCertificate, privateKey: tls.privateKey, caCertificates: tls.caCertificates }]
        : []
  const ca = nonEmpty(tls.caCertificates)
    ? tls.caCertificates
    : pairs.find((p) => nonEmpty(p.caCertificates))?.caCertificates
  return {
    tls_certificate_sds_secret_configs:
      pairs.length > 0
        ? pairs.map((p) => agentSdsSecret(fileCertName(p.serverCertificate!, p.privateKey!)))
        : [agentSdsSecret(SDS_DEFAULT)],
    ...(validateClient
      ? {
          combined_validation_context: {
            default_validation_context: withSans(sans),
            validation_context_sds_secret_config: agentSdsSecret(nonEmpty(ca) ? fileRootName(ca) : SDS_ROOT),
          },
        }
      : {}),
  }
}

const tlsParams = (tls: ServerTls): TlsParameters | undefined => {
  const params: Draft<TlsParameters> = {}
  const min = tls.minProtocolVersion
  const max = tls.maxProtocolVersion
  if (min !== undefined && min !== "TLS_AUTO") params.tls_minimum_protocol_version = TLS_VERSION[min]
  if (max !== undefined && max !== "TLS_AUTO") params.tls_maximum_protocol_version = TLS_VERSION[max]
  const ciphers = [...new Set((tls.cipherSuites ?? []).filter(nonEmpty))]
  if (ciphers.length > 0) params.cipher_suites = ciphers
  return Object.keys(params).length > 0 ? params : undefined
}

/**
 * The DownstreamTlsContext of a terminating server; `tcpServer` for a TLS (not HTTPS) server,
 * which offers the mesh's peer-exchange ALPN when it terminates ISTIO_MUTUAL.
 */
export const downstreamTlsContext = (
  tls: ServerTls,
  tcpServer: boolean,
  credentialSecret: CredentialSecret,
): DownstreamTlsContext => {
  const mode = tls.mode ?? "PASSTHROUGH"
  const requireClient = mode === "MUTUAL" || mode === "ISTIO_MUTUAL"
  const validateClient = requireClient || mode === "OPTIONAL_MUTUAL"
  const simpleOrMutual = mode === "SIMPLE" || mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL"
  const params = simpleOrMutual ? tlsParams(tls) : undefined
  return {
    common_tls_context: {
      ...(params !== undefined ? { tls_params: params } : {}),
      ...certificates(tls, mode, validateClient, credentialSecret),
      alpn_protocols: tcpServer && mode === "ISTIO_MUTUAL" ? ALPN_MESH_TCP : ALPN_HTTP,
    },
    require_client_certificate: { value: requireClient },
  }
}

/** The transport socket of a terminating filter chain. */
export const tlsTransportSocket = (context: DownstreamTlsContext): TransportSocket => ({
  name: TLS_TRANSPORT_SOCKET,
  typed_config: typed(TypedConfig.downstreamTls, context),
})
