/**
 * The built-in profiles: each is the `spec` an operator resource starts from before the user's
 * files and `--set` flags are laid over it. Which components each enables follows the
 * reference's profile table: default (control plane + ingress gateway), demo (also the egress
 * gateway, access logs, full trace sampling, small resources), minimal (control plane only),
 * remote (CRDs and injection only, for a cluster run by an external control plane), empty
 * (nothing) and ambient (control plane, CNI and the node proxy).
 */
import type { Obj } from "../orchestrator/json.js"
import { deepMerge } from "./overlay.js"

export const PROFILE_NAMES = ["default", "demo", "minimal", "remote", "empty", "ambient"] as const
export type ProfileName = (typeof PROFILE_NAMES)[number]

export const isProfileName = (name: string): name is ProfileName =>
  (PROFILE_NAMES as ReadonlyArray<string>).includes(name)

const INGRESS = "mesh-ingressgateway"
const EGRESS = "mesh-egressgateway"

/** Everything the other profiles change: the default profile. */
const defaultProfile: Obj = {
  meshConfig: { defaultConfig: { proxyMetadata: {} }, enablePrometheusMerge: true },
  components: {
    base: { enabled: true },
    pilot: { enabled: true },
    cni: { enabled: false },
    ztunnel: { enabled: false },
    ingressGateways: [{ name: INGRESS, enabled: true }],
    egressGateways: [{ name: EGRESS, enabled: false }],
  },
  values: {
    global: {
      hub: "docker.io/mesh",
      tag: "latest",
      istioNamespace: "mesh-system",
      imagePullPolicy: "",
      logAsJson: false,
      meshID: "",
      network: "",
      multiCluster: { clusterName: "" },
      proxy: { image: "proxyv2" },
      defaultPodDisruptionBudget: { enabled: true },
    },
    pilot: {
      image: "pilot",
      autoscaleEnabled: true,
      autoscaleMin: 1,
      autoscaleMax: 5,
      cpu: { targetAverageUtilization: 80 },
      replicaCount: 1,
      traceSampling: 1,
      resources: { requests: { cpu: "500m", memory: "2048Mi" } },
    },
    sidecarInjectorWebhook: { rewriteAppHTTPProbe: true, enableNamespacesByDefault: false },
    cni: {
      image: "install-cni",
      chained: true,
      cniBinDir: "/opt/cni/bin",
      cniConfDir: "/etc/cni/net.d",
      logLevel: "info",
      ambient: { enabled: false },
      repair: { enabled: true },
    },
    gateways: {},
  },
}

/** What each profile changes relative to the default one (deep-merged, lists replaced). */
const overlays: Readonly<Record<ProfileName, Obj>> = {
  default: {},
  demo: {
    meshConfig: { accessLogFile: "/dev/stdout" },
    components: { egressGateways: [{ name: EGRESS, enabled: true }] },
    values: {
      pilot: { autoscaleEnabled: false, traceSampling: 100, resources: { requests: { cpu: "10m", memory: "100Mi" } } },
      global: { defaultPodDisruptionBudget: { enabled: false } },
    },
  },
  minimal: { components: { ingressGateways: [{ name: INGRESS, enabled: false }] } },
  remote: {
    components: { pilot: { enabled: false }, ingressGateways: [{ name: INGRESS, enabled: false }] },
    values: { profile: "remote" },
  },
  empty: {
    components: {
      base: { enabled: false },
      pilot: { enabled: false },
      ingressGateways: [{ name: INGRESS, enabled: false }],
    },
  },
  ambient: {
    components: {
      cni: { enabled: true },
      ztunnel: { enabled: true },
      ingressGateways: [{ name: INGRESS, enabled: false }],
    },
    values: { profile: "ambient", cni: { ambient: { enabled: true }, chained: true } },
    meshConfig: { defaultConfig: { proxyMetadata: { MESH_META_ENABLE_HBONE: "true" } } },
  },
}

/** The `spec` a profile starts from (the profile's name included). */
export const profileSpec = (name: ProfileName): Obj =>
  deepMerge(deepMerge(defaultProfile, overlays[name]), { profile: name })
