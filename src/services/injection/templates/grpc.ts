/**
 * Proxyless gRPC templates. `grpc-agent`: the agent alone (`DISABLE_PROXY`, metadata
 * `GENERATOR=grpc`) serving xDS and certificates to the application over a shared directory,
 * whose containers get `GRPC_XDS_BOOTSTRAP` pointing at the bootstrap the agent writes there; no
 * capture. `grpc-simple`: no agent at all — an init container writes a plaintext bootstrap
 * naming the discovery server, and the application containers read it. Both leave application
 * probes alone (no agent stands between the kubelet and the application's ports), and the
 * mTLS-mode label is left to the user, as the gRPC application decides whether it uses mTLS.
 */

import { normalRevision } from "../decision.js"
import type { Fragment, Template } from "../fragment.js"
import { emptyFragment } from "../fragment.js"
import { ContainerNames, InjectAnnotations, Paths, VolumeNames } from "../names.js"
import { canonicalLabels, defaultContainerAnnotations, revisionAnnotation } from "../pod-metadata.js"
import { proxyContainer } from "../proxy-container.js"
import { downwardApiEnv } from "../proxy-env.js"
import { agentVolumes } from "../volumes.js"

const noProbeRewrite = { [InjectAnnotations.rewriteAppHTTPProbers]: "false" }

export const grpcAgentTemplate: Template = (context): Fragment => ({
  ...emptyFragment,
  containers: [proxyContainer({ ...context, capture: false }, "proxyless")],
  volumes: agentVolumes("proxyless", context.settings.values.tokenAudience),
  imagePullSecrets: context.settings.values.imagePullSecrets,
  labels: canonicalLabels(context),
  annotations: { ...revisionAnnotation(context), ...defaultContainerAnnotations(context), ...noProbeRewrite },
  appEnv: [
    { name: "GRPC_XDS_EXPERIMENTAL_SECURITY_SUPPORT", value: "true" },
    { name: "GRPC_XDS_BOOTSTRAP", value: Paths.grpcAgentBootstrap },
  ],
  appVolumeMounts: [
    { name: VolumeNames.data, mountPath: Paths.data },
    { name: VolumeNames.grpcXds, mountPath: Paths.proxyConfig },
  ],
  keepAppProbes: true,
})

/** The image that writes the bootstrap (any image with a POSIX shell; the reference uses this one). */
export const GRPC_BOOTSTRAP_IMAGE = "busybox:1.28"

/** The bootstrap for a plaintext connection to the discovery server (xDS 15010), node id as the agent forms it. */
const bootstrapScript = (discovery: string, clusterDomain: string): string =>
  [
    `NODE_ID="sidecar~\${INSTANCE_IP}~\${POD_NAME}.\${POD_NAMESPACE}~\${POD_NAMESPACE}.svc.${clusterDomain}"`,
    `cat > ${Paths.grpcSimpleBootstrap} <<EOF`,
    `{"xds_servers":[{"server_uri":"dns:///${discovery}","channel_creds":[{"type":"insecure"}],"server_features":["xds_v3"]}],` +
      `"node":{"id":"\${NODE_ID}","metadata":{"GENERATOR":"grpc"}}}`,
    "EOF",
  ].join("\n")

export const grpcSimpleTemplate: Template = (context): Fragment => {
  const values = context.settings.values
  const revision = normalRevision(context.revision)
  const discovery = `meshd${revision === "default" ? "" : `-${context.revision}`}.${values.meshNamespace}.svc:15010`
  return {
    ...emptyFragment,
    initContainers: [
      {
        name: ContainerNames.grpcBootstrapInit,
        image: GRPC_BOOTSTRAP_IMAGE,
        command: ["sh", "-c", bootstrapScript(discovery, values.clusterDomain)],
        env: downwardApiEnv.filter((e) => ["INSTANCE_IP", "POD_NAME", "POD_NAMESPACE"].includes(e.name)),
        volumeMounts: [{ name: VolumeNames.grpcBootstrap, mountPath: Paths.grpcSimpleDir }],
      },
    ],
    volumes: [{ name: VolumeNames.grpcBootstrap, emptyDir: {} }],
    annotations: noProbeRewrite,
    appEnv: [{ name: "GRPC_XDS_BOOTSTRAP", value: Paths.grpcSimpleBootstrap }],
    appVolumeMounts: [{ name: VolumeNames.grpcBootstrap, mountPath: Paths.grpcSimpleDir }],
    keepAppProbes: true,
  }
}
