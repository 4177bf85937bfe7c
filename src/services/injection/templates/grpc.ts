/**
 * Proxyless gRPC templates, as the reference ships them (its grpc-agent and grpc-simple).
 *
 * `grpc-agent`: the agent alone, no proxy (`DISABLE_PROXY`, metadata `GENERATOR=grpc`, DNS
 * capture off: gRPC resolves `xds:///` names itself), writing the workload certificates to its
 * data directory (`OUTPUT_CERTS`) and serving xDS/SDS over the shared `mesh-xds` directory. Its
 * status port is the readiness probe's and is declared as `mesh-metrics` (no proxy serves 15021
 * or 15090 here); a postStart `mesh-agent wait` on that port holds the application until the
 * agent is ready. No security context (the reference sets none for it) and no capture. The
 * application containers get `GRPC_XDS_BOOTSTRAP` (the bootstrap the agent writes), xDS
 * security support, and the data, xDS and workload-certificate mounts.
 *
 * `grpc-simple`: no agent at all: an init container writes a plaintext bootstrap naming this
 * revision's discovery server in the mesh namespace (`MESH_NAMESPACE`), and the application
 * containers read it, with grpc-go's logging turned up as the reference does.
 *
 * Both leave application probes alone (no agent stands between the kubelet and the application's
 * ports), and the mTLS-mode label is left to the user: the application decides whether it uses
 * mTLS.
 */

import type { Obj } from "../../orchestrator/json.js"
import { normalRevision } from "../decision.js"
import type { EnvVar } from "../env-var.js"
import type { Fragment, Template, TemplateContext } from "../fragment.js"
import { emptyFragment } from "../fragment.js"
import {
  ContainerNames,
  DEFAULT_STATUS_PORT,
  InjectAnnotations,
  Paths,
  ProxyEnv,
  READINESS_PATH,
  VolumeNames,
} from "../names.js"
import { canonicalLabels, defaultContainerAnnotations, revisionAnnotation } from "../pod-metadata.js"
import { agentArgs, resourcesField } from "../proxy-container.js"
import { downwardApiEnv, proxyEnv } from "../proxy-env.js"
import { agentVolumes, mtlsCertsVolumes } from "../volumes.js"

const noProbeRewrite = { [InjectAnnotations.rewriteAppHTTPProbers]: "false" }

/** The agent's environment: the reference's order, its metadata first and the proxy switches last. */
const agentEnv = (context: TemplateContext): ReadonlyArray<EnvVar> => {
  const settings = context.settings
  const common = proxyEnv({ ...context, capture: false }).filter(
    // No proxy: no proxy CPU limit to size it by; DNS capture is set off below.
    (e) => e.name !== "MESH_CPU_LIMIT" && e.name !== ProxyEnv.dnsCapture,
  )
  return [
    { name: ProxyEnv.generator, value: "grpc" },
    { name: "OUTPUT_CERTS", value: Paths.data },
    ...common,
    { name: ProxyEnv.dnsCapture, value: "false" },
    { name: "DISABLE_PROXY", value: "true" },
    ...(settings.statusPort !== DEFAULT_STATUS_PORT
      ? [{ name: ProxyEnv.statusPort, value: String(settings.statusPort) }]
      : []),
  ]
}

const agentMounts = (context: TemplateContext): ReadonlyArray<Obj> => [
  { name: VolumeNames.workloadSocket, mountPath: Paths.workloadSocket },
  { name: VolumeNames.workloadCerts, mountPath: Paths.workloadCerts },
  { name: VolumeNames.caCert, mountPath: Paths.caCert },
  { name: VolumeNames.data, mountPath: Paths.data },
  // The xDS/SDS channel with the gRPC application.
  { name: VolumeNames.grpcXds, mountPath: Paths.proxyConfig },
  { name: VolumeNames.token, mountPath: Paths.tokens },
  ...(context.settings.values.mountMtlsCerts
    ? [{ name: VolumeNames.mtlsCerts, mountPath: Paths.mtlsCerts, readOnly: true }]
    : []),
  { name: VolumeNames.podInfo, mountPath: Paths.podInfo },
  ...context.settings.userVolumeMounts,
]

const agentContainer = (context: TemplateContext): Obj => {
  const settings = context.settings
  const values = settings.values
  const port = settings.statusPort
  return {
    name: ContainerNames.proxy,
    image: settings.proxyImage,
    ...(port === 0 ? {} : { ports: [{ containerPort: port, protocol: "TCP", name: "mesh-metrics" }] }),
    args: agentArgs(settings, "sidecar"),
    ...(port === 0
      ? {}
      : {
          lifecycle: {
            postStart: {
              exec: { command: ["mesh-agent", "wait", `--url=http://localhost:${port}${READINESS_PATH}`] },
            },
          },
        }),
    env: agentEnv(context),
    ...(values.imagePullPolicy === "" ? {} : { imagePullPolicy: values.imagePullPolicy }),
    ...(port === 0
      ? {}
      : {
          readinessProbe: {
            httpGet: { path: READINESS_PATH, port },
            initialDelaySeconds: settings.readiness.initialDelaySeconds,
            periodSeconds: settings.readiness.periodSeconds,
            timeoutSeconds: 3,
            failureThreshold: settings.readiness.failureThreshold,
          },
        }),
    ...resourcesField(settings),
    volumeMounts: agentMounts(context),
  }
}

/** The reference's grpc-agent volumes: the agent's, without the credential socket (no proxy uses it). */
const agentPodVolumes = (context: TemplateContext): ReadonlyArray<Obj> => {
  const settings = context.settings
  const [socket, certs, ...rest] = agentVolumes("proxyless", settings.values.tokenAudience).filter(
    (v) => v.name !== VolumeNames.credentialSocket,
  )
  return [
    socket as Obj,
    certs as Obj,
    ...(settings.bootstrapOverride === undefined
      ? []
      : [{ name: VolumeNames.customBootstrap, configMap: { name: settings.bootstrapOverride } }]),
    ...rest,
    ...mtlsCertsVolumes(settings),
    ...settings.userVolumes,
  ]
}

export const grpcAgentTemplate: Template = (context): Fragment => ({
  ...emptyFragment,
  containers: [agentContainer(context)],
  volumes: agentPodVolumes(context),
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
    { name: VolumeNames.workloadCerts, mountPath: Paths.workloadCerts },
  ],
  keepAppProbes: true,
})

/** The image that writes the bootstrap (any image with a POSIX shell; the reference uses this one). */
export const GRPC_BOOTSTRAP_IMAGE = "busybox:1.28"

/**
 * The bootstrap for a plaintext connection to the discovery server (xDS 15010) in the mesh
 * namespace the init container is given, node id as the agent forms it.
 */
const bootstrapScript = (discoveryService: string, clusterDomain: string): string =>
  [
    `NODE_ID="sidecar~\${INSTANCE_IP}~\${POD_NAME}.\${POD_NAMESPACE}~\${POD_NAMESPACE}.svc.${clusterDomain}"`,
    `SERVER_URI="dns:///${discoveryService}.\${MESH_NAMESPACE}.svc:15010"`,
    `cat > ${Paths.grpcSimpleBootstrap} <<EOF`,
    `{"xds_servers":[{"server_uri":"\${SERVER_URI}","channel_creds":[{"type":"insecure"}],"server_features":["xds_v3"]}],` +
      `"node":{"id":"\${NODE_ID}","metadata":{"GENERATOR":"grpc"}}}`,
    "EOF",
  ].join("\n")

export const grpcSimpleTemplate: Template = (context): Fragment => {
  const values = context.settings.values
  const revision = normalRevision(context.revision)
  const discovery = `meshd${revision === "default" ? "" : `-${context.revision}`}`
  return {
    ...emptyFragment,
    initContainers: [
      {
        name: ContainerNames.grpcBootstrapInit,
        image: GRPC_BOOTSTRAP_IMAGE,
        volumeMounts: [{ name: VolumeNames.grpcBootstrap, mountPath: Paths.grpcSimpleDir }],
        env: [
          // The reference's order.
          ...["INSTANCE_IP", "POD_NAME", "POD_NAMESPACE"].flatMap((name) =>
            downwardApiEnv.filter((e) => e.name === name),
          ),
          { name: "MESH_NAMESPACE", value: values.meshNamespace },
        ],
        command: ["sh", "-c", bootstrapScript(discovery, values.clusterDomain)],
      },
    ],
    volumes: [{ name: VolumeNames.grpcBootstrap, emptyDir: {} }],
    annotations: noProbeRewrite,
    appEnv: [
      { name: "GRPC_XDS_BOOTSTRAP", value: Paths.grpcSimpleBootstrap },
      { name: "GRPC_GO_LOG_VERBOSITY_LEVEL", value: "99" },
      { name: "GRPC_GO_LOG_SEVERITY_LEVEL", value: "info" },
    ],
    appVolumeMounts: [{ name: VolumeNames.grpcBootstrap, mountPath: Paths.grpcSimpleDir }],
    keepAppProbes: true,
  }
}
