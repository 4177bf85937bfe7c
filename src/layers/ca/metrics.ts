/** The `meshca_server_*` instruments (spec §6), registered through the Metrics service. */
import type { MetricsShape } from "../../services/metrics/metrics.js"

export const caMetrics = (metrics: MetricsShape) => ({
  csr: metrics.counter("meshca_server_csr_count", "CSRs received"),
  success: metrics.counter("meshca_server_success_cert_issuance_count", "Successful issuances"),
  authnError: metrics.counter("meshca_server_authentication_failure_count", "Authentication failures"),
  nodeRefusals: metrics.counter(
    "meshca_server_node_authorization_refused_count",
    "Impersonations refused by node authorization (CA_TRUSTED_NODE_ACCOUNTS), by reason; also counted as authentication failures",
    ["reason"],
  ),
  csrParsingError: metrics.counter("meshca_server_csr_parsing_err_count", "CSR parse errors"),
  idExtractionError: metrics.counter("meshca_server_id_extraction_err_count", "Errors extracting the ID from a CSR"),
  signError: metrics.counter("meshca_server_csr_sign_err_count", "CSR signing errors", ["error_type"]),
  rootExpirySeconds: metrics.gauge(
    "meshca_server_root_cert_expiry_seconds",
    "Seconds until root expires; negative = expired",
  ),
  rootExpiryTimestamp: metrics.gauge("meshca_server_root_cert_expiry_timestamp", "Unix expiry time of the root"),
  chainExpirySeconds: metrics.gauge(
    "meshca_server_cert_chain_expiry_seconds",
    "Seconds until generated cert chain expires; negative = expired",
  ),
  chainExpiryTimestamp: metrics.gauge("meshca_server_cert_chain_expiry_timestamp", "Unix expiry time of the chain"),
  bundleWatchers: metrics.gauge(
    "meshca_server_trust_bundle_watchers",
    "Agents watching the trust bundle (WatchTrustBundle streams)",
  ),
  bundleWatchersCurrent: metrics.gauge(
    "meshca_server_trust_bundle_watchers_current",
    "Agents that acknowledged the current trust bundle",
  ),
  bundleRoots: metrics.gauge("meshca_server_trust_bundle_roots", "Roots in the trust bundle"),
  keyRotationPhase: metrics.gauge(
    "meshca_server_key_rotation_phase",
    "Root key rotation: 0 idle, 1 publishing the new root, 2 old root(s) kept until their certificates expire",
  ),
})

export type CaMetrics = ReturnType<typeof caMetrics>
