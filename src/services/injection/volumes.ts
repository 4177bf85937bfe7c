/**
 * The volumes an injected agent needs and where it mounts them: the workload identity sockets
 * and certificate directory, the proxy's config directory (or, proxyless, the xDS channel shared
 * with the gRPC application), its data directory, the pod's labels and annotations, a projected
 * service-account token for the CA, and the CA's root certificate ConfigMap. The sidecar template
 * also mounts the CA's revocation list (an optional ConfigMap, so pods start before any CRL exists).
 */
import type { Obj } from "../orchestrator/json.js"
import { mtlsCertsSecret, Paths, ROOT_CERT_CONFIGMAP, TOKEN_FILE, VolumeNames } from "./names.js"
import type { PodSettings } from "./pod-settings.js"

/** Token lifetime the orchestrator is asked for (12h, as the reference). */
const TOKEN_EXPIRATION_SECONDS = 43200

/** `proxyless`: the config directory is the xDS/SDS channel with the application (`mesh-xds`). */
export type AgentKind = "proxy" | "proxyless"

const configVolume = (kind: AgentKind): string => (kind === "proxy" ? VolumeNames.proxyConfig : VolumeNames.grpcXds)

export const agentVolumes = (kind: AgentKind, tokenAudience: string): ReadonlyArray<Obj> => [
  { name: VolumeNames.workloadSocket, emptyDir: {} },
  { name: VolumeNames.credentialSocket, emptyDir: {} },
  { name: VolumeNames.workloadCerts, emptyDir: {} },
  { name: configVolume(kind), emptyDir: { medium: "Memory" } },
  { name: VolumeNames.data, emptyDir: {} },
  {
    name: VolumeNames.podInfo,
    downwardAPI: {
      items: [
        { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
        { path: "annotations", fieldRef: { fieldPath: "metadata.annotations" } },
      ],
    },
  },
  {
    name: VolumeNames.token,
    projected: {
      sources: [
        {
          serviceAccountToken: {
            path: TOKEN_FILE,
            expirationSeconds: TOKEN_EXPIRATION_SECONDS,
            audience: tokenAudience,
          },
        },
      ],
    },
  },
  { name: VolumeNames.caCert, configMap: { name: ROOT_CERT_CONFIGMAP } },
]

/** The sidecar template's revocation-list volume (`crlConfigMap`: the values' pilot.crlConfigMapName). */
export const crlVolume = (crlConfigMap: string): Obj => ({
  name: VolumeNames.caCrl,
  configMap: { name: crlConfigMap, optional: true },
})

/**
 * `global.mountMtlsCerts` (sidecar and gateway): the user's key and certificates, an optional
 * Secret so that the pod starts without it, as the reference's templates add it.
 */
export const mtlsCertsVolumes = (settings: PodSettings): ReadonlyArray<Obj> =>
  settings.values.mountMtlsCerts
    ? [
        {
          name: VolumeNames.mtlsCerts,
          secret: { optional: true, secretName: mtlsCertsSecret(settings.serviceAccountName) },
        },
      ]
    : []

export interface AgentMounts {
  /** The sidecar template's revocation list. */
  readonly crl?: boolean
  /** `global.mountMtlsCerts`. */
  readonly mtlsCerts?: boolean
}

export const agentVolumeMounts = (kind: AgentKind, extra: AgentMounts = {}): ReadonlyArray<Obj> => [
  { name: VolumeNames.workloadSocket, mountPath: Paths.workloadSocket },
  { name: VolumeNames.credentialSocket, mountPath: Paths.credentialSocket },
  { name: VolumeNames.workloadCerts, mountPath: Paths.workloadCerts },
  { name: VolumeNames.caCert, mountPath: Paths.caCert },
  ...(extra.crl === true ? [{ name: VolumeNames.caCrl, mountPath: Paths.caCrl }] : []),
  { name: VolumeNames.data, mountPath: Paths.data },
  { name: configVolume(kind), mountPath: Paths.proxyConfig },
  { name: VolumeNames.token, mountPath: Paths.tokens },
  ...(extra.mtlsCerts === true ? [{ name: VolumeNames.mtlsCerts, mountPath: Paths.mtlsCerts, readOnly: true }] : []),
  { name: VolumeNames.podInfo, mountPath: Paths.podInfo },
]

/**
 * What pod annotations add for the proxy: the user's volumes (`sidecar.mesh.io/userVolume`) and
 * the bootstrap override's ConfigMap (`sidecar.mesh.io/bootstrapOverride`).
 */
export const userVolumes = (settings: PodSettings): ReadonlyArray<Obj> => [
  ...(settings.bootstrapOverride === undefined
    ? []
    : [{ name: VolumeNames.customBootstrap, configMap: { name: settings.bootstrapOverride } }]),
  ...settings.userVolumes,
]

/** Where the proxy mounts them: the user's mounts (`sidecar.mesh.io/userVolumeMount`) and the override. */
export const userVolumeMounts = (settings: PodSettings): ReadonlyArray<Obj> => [
  ...(settings.bootstrapOverride === undefined
    ? []
    : [{ name: VolumeNames.customBootstrap, mountPath: Paths.customBootstrapDir }]),
  ...settings.userVolumeMounts,
]
