/**
 * The `mesh-proxy` container: `mesh-agent proxy sidecar|router` (the image's entrypoint is
 * `mesh-agent`), its environment, probes on the agent's readiness port, the non-root security
 * context (root with NET_ADMIN only for TPROXY capture), resources and the agent's mounts.
 *
 * Two shapes, as the reference's templates: `sidecar`; `router` (gateways: security context
 * and resources come from the gateway deployment's own `mesh-proxy` container, merged over this
 * one). The proxyless gRPC agent is templates/grpc.ts's own container.
 */
import type { Obj } from "../orchestrator/json.js"
import type { EnvVar } from "./env-var.js"
import {
  ContainerNames,
  DEFAULT_STATUS_PORT,
  Paths,
  PROXY_METRICS_PORT,
  PROXY_UID,
  ProxyEnv,
  READINESS_PATH,
  READINESS_PORT,
} from "./names.js"
import type { PodSettings } from "./pod-settings.js"
import { type ProxyEnvInputs, proxyEnv } from "./proxy-env.js"
import { agentVolumeMounts, userVolumeMounts } from "./volumes.js"

export type ProxyShape = "sidecar" | "router"

const readinessProbe = (inputs: ProxyEnvInputs): Obj => ({
  httpGet: { path: READINESS_PATH, port: READINESS_PORT },
  initialDelaySeconds: inputs.settings.readiness.initialDelaySeconds,
  periodSeconds: inputs.settings.readiness.periodSeconds,
  timeoutSeconds: 3,
  failureThreshold: inputs.settings.readiness.failureThreshold,
})

/** Polls every second until the proxy is ready: with native sidecars this holds back the app containers. */
const startupProbe = (inputs: ProxyEnvInputs): Obj => ({
  httpGet: { path: READINESS_PATH, port: READINESS_PORT },
  initialDelaySeconds: 0,
  periodSeconds: 1,
  timeoutSeconds: 3,
  failureThreshold: inputs.settings.values.startupProbeFailureThreshold,
})

/** TPROXY needs NET_ADMIN and uid 0 (transparent sockets); otherwise the proxy runs as 1337 with no capabilities. */
export const proxySecurityContext = (inputs: ProxyEnvInputs): Obj => {
  const privileged = inputs.settings.values.privileged
  const tproxy = inputs.settings.interceptionMode === "TPROXY"
  return {
    allowPrivilegeEscalation: privileged,
    capabilities: tproxy ? { add: ["NET_ADMIN"], drop: ["ALL"] } : { drop: ["ALL"] },
    privileged,
    readOnlyRootFilesystem: true,
    runAsGroup: PROXY_UID,
    runAsNonRoot: !tproxy,
    runAsUser: tproxy ? 0 : PROXY_UID,
  }
}

/**
 * postStart `mesh-agent wait` holds the next containers until the proxy is ready; a native
 * sidecar is ordered by its startup probe instead and drains its proxy on preStop.
 */
const lifecycle = (inputs: ProxyEnvInputs): Obj | undefined =>
  inputs.settings.nativeSidecar
    ? {
        preStop: {
          exec: {
            command: ["mesh-agent", "request", `--debug-port=${inputs.settings.statusPort}`, "POST", "drain"],
          },
        },
      }
    : inputs.settings.holdApplicationUntilProxyStarts
      ? { postStart: { exec: { command: ["mesh-agent", "wait"] } } }
      : undefined

/** The agent's own settings a pod annotation changed: its status port, the bootstrap override file. */
const userEnv = (inputs: ProxyEnvInputs): ReadonlyArray<EnvVar> => [
  ...(inputs.settings.statusPort !== DEFAULT_STATUS_PORT
    ? [{ name: ProxyEnv.statusPort, value: String(inputs.settings.statusPort) }]
    : []),
  ...(inputs.settings.bootstrapOverride !== undefined
    ? [{ name: ProxyEnv.bootstrapOverride, value: Paths.customBootstrapFile }]
    : []),
]

/** `resources`, left out when the values removed every request and limit (the reference writes none then). */
export const resourcesField = (settings: PodSettings): Obj =>
  Object.keys(settings.resources).length > 0 ? { resources: settings.resources } : {}

/** `mesh-agent proxy <mode>` with the pod's domain and log levels (the gRPC agent's too). */
export const agentArgs = (settings: PodSettings, mode: "sidecar" | "router"): ReadonlyArray<string> => [
  "proxy",
  mode,
  "--domain",
  `$(POD_NAMESPACE).svc.${settings.values.clusterDomain}`,
  `--proxyLogLevel=${settings.proxyLogLevel}`,
  `--proxyComponentLogLevel=${settings.proxyComponentLogLevel}`,
  `--log_output_level=${settings.agentLogLevel}`,
  ...(settings.values.logAsJson ? ["--log_as_json"] : []),
]

export const proxyContainer = (inputs: ProxyEnvInputs, shape: ProxyShape): Obj => {
  const settings = inputs.settings
  const values = settings.values
  const probesOn = settings.statusPort !== 0
  const env = [...proxyEnv(inputs, shape === "sidecar"), ...userEnv(inputs)]
  const hooks = shape === "router" ? undefined : lifecycle(inputs)
  const container: Obj = {
    name: ContainerNames.proxy,
    image: settings.proxyImage,
    ports: [{ containerPort: PROXY_METRICS_PORT, protocol: "TCP", name: "http-envoy-prom" }],
    args: agentArgs(settings, shape === "router" ? "router" : "sidecar"),
    ...(hooks === undefined ? {} : { lifecycle: hooks }),
    env,
    ...(values.imagePullPolicy === "" ? {} : { imagePullPolicy: values.imagePullPolicy }),
    ...(probesOn ? { readinessProbe: readinessProbe(inputs) } : {}),
    ...(probesOn && shape === "sidecar" && values.startupProbeEnabled ? { startupProbe: startupProbe(inputs) } : {}),
    // A gateway's deployment gives the rest of its security context and its resources.
    ...(shape === "router"
      ? { securityContext: { runAsUser: PROXY_UID, runAsGroup: PROXY_UID } }
      : { securityContext: proxySecurityContext(inputs), ...resourcesField(settings) }),
    volumeMounts: [
      ...agentVolumeMounts("proxy", { crl: shape === "sidecar", mtlsCerts: values.mountMtlsCerts }),
      ...userVolumeMounts(inputs.settings),
    ],
  }
  return container
}
