/**
 * The flags of commands that contact the control plane (spec part 3 §4.3 `proxy-status`,
 * `experimental version`; §5 rule 2). Cheap to load: what they mean in practice is described
 * in control-plane-access.ts, which is loaded only when a command runs.
 */
import { Options } from "@effect/cli"
import { boolFlag, durationFlag, textFlag, uint16Flag } from "../shared/options.js"

/** The label of the control-plane pods when `--xds-label` is not given. */
export const DEFAULT_CONTROL_PLANE_LABEL = "app=meshd"

export const controlPlaneOptions = {
  authority: textFlag("authority").pipe(
    Options.withDescription("XDS subject alternative name (accepted; the monitoring listener has no TLS)"),
  ),
  certDir: textFlag("cert-dir").pipe(
    Options.withDescription("XDS endpoint certificate directory (accepted; the monitoring listener has no TLS)"),
  ),
  insecure: boolFlag("insecure").pipe(Options.withDescription("Skip server certificate and domain verification")),
  plaintext: boolFlag("plaintext").pipe(Options.withDescription("Use plain-text HTTP when connecting to the server")),
  timeout: durationFlag("timeout", "30s").pipe(Options.withDescription("The duration to wait before failing")),
  xdsAddress: textFlag("xds-address").pipe(
    Options.withDescription("The control plane's monitoring address host:port (skips the orchestrator)"),
  ),
  xdsLabel: textFlag("xds-label", DEFAULT_CONTROL_PLANE_LABEL).pipe(
    Options.withDescription("Control-plane pod label selector"),
  ),
  xdsPort: uint16Flag("xds-port", 15012).pipe(Options.withDescription("Control-plane XDS port (accepted; unused)")),
  revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
}
