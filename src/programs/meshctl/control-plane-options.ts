/**
 * The flags of commands that contact the control plane (spec part 3 §4.3 `proxy-status`,
 * `experimental version`; §5 rule 2). Cheap to load: what they mean in practice is described
 * in control-plane-access.ts, which is loaded only when a command runs.
 */
import { Options } from "@effect/cli"
import { boolFlag, durationFlag, textFlag, uint16Flag } from "../shared/options.js"

/** The control plane's TLS xDS port (`--xds-port` default). */
export const DEFAULT_XDS_PORT = 15012

/** The label of the control-plane pods when `--xds-label` is not given. */
export const DEFAULT_CONTROL_PLANE_LABEL = "app=meshd"

export const controlPlaneOptions = {
  authority: textFlag("authority").pipe(
    Options.withDescription("XDS subject alternative name (default meshd[-<revision>].<mesh namespace>.svc)"),
  ),
  certDir: textFlag("cert-dir").pipe(
    Options.withDescription(
      "XDS endpoint certificate directory: root-cert.pem, and cert-chain.pem with key.pem for a client certificate",
    ),
  ),
  insecure: boolFlag("insecure").pipe(Options.withDescription("Skip server certificate and domain verification")),
  plaintext: boolFlag("plaintext").pipe(
    Options.withDescription("Use plain-text HTTP/2 when connecting to the server (the 15010 xDS listener)"),
  ),
  timeout: durationFlag("timeout", "30s").pipe(Options.withDescription("The duration to wait before failing")),
  xdsAddress: textFlag("xds-address").pipe(
    Options.withDescription(
      "XDS endpoint host:port (skips the orchestrator); http://host:port asks the monitoring listener instead",
    ),
  ),
  xdsLabel: textFlag("xds-label", DEFAULT_CONTROL_PLANE_LABEL).pipe(
    Options.withDescription("Control-plane pod label selector"),
  ),
  xdsPort: uint16Flag("xds-port", DEFAULT_XDS_PORT).pipe(
    Options.withDescription("Control-plane XDS port, used with the pods found by --xds-label"),
  ),
  revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
}
