/**
 * The injector ConfigMap's `values` key (the reference's Helm values, as JSON or YAML): the
 * defaults used without a ConfigMap, parsing (a given file is deep-merged over the defaults, so
 * a partial `--valuesFile` works), and the typed view the templates read.
 */
import { Either } from "effect"
import { SYSTEM_NAMESPACE } from "../constants.js"
import { asObject, deepMerge, isObject, type Obj, valueAt } from "../orchestrator/json.js"
import { parseYamlObject } from "./config.js"
import type { InjectionValues } from "./contract.js"
import { CRL_CONFIGMAP } from "./names.js"

/** The reference chart's defaults for the fields the templates read, renamed. */
export const defaultInjectionValues: InjectionValues = {
  revision: "",
  global: {
    hub: "docker.io/mesh",
    tag: "latest",
    imagePullPolicy: "",
    imagePullSecrets: [],
    caAddress: "",
    meshID: "",
    trustDomain: "",
    network: "",
    multiCluster: { clusterName: "" },
    logAsJson: false,
    logging: { level: "default:info" },
    sds: { token: { aud: "mesh-ca" } },
    proxy: {
      image: "proxyv2",
      clusterDomain: "cluster.local",
      logLevel: "warning",
      componentLogLevel: "misc:error",
      privileged: false,
      holdApplicationUntilProxyStarts: false,
      includeIPRanges: "*",
      excludeIPRanges: "",
      includeInboundPorts: "*",
      excludeInboundPorts: "",
      includeOutboundPorts: "",
      excludeOutboundPorts: "",
      readinessInitialDelaySeconds: 0,
      readinessPeriodSeconds: 15,
      readinessFailureThreshold: 4,
      startupProbe: { enabled: true, failureThreshold: 600 },
      resources: {
        requests: { cpu: "100m", memory: "128Mi" },
        limits: { cpu: "2000m", memory: "1024Mi" },
      },
    },
    proxy_init: { image: "proxyv2" },
  },
  sidecarInjectorWebhook: { rewriteAppHTTPProbe: true, enableNamespacesByDefault: false },
  cni: { enabled: false },
  meshConfig: {},
}

/** The fields the templates read, each checked for its type. */
const FIELD_TYPES: ReadonlyArray<readonly [string, "string" | "boolean" | "number" | "object" | "list"]> = [
  ["revision", "string"],
  ["global.hub", "string"],
  ["global.tag", "string"],
  ["global.imagePullPolicy", "string"],
  ["global.imagePullSecrets", "list"],
  ["global.meshNamespace", "string"],
  ["global.istioNamespace", "string"],
  ["global.caAddress", "string"],
  ["global.meshID", "string"],
  ["global.trustDomain", "string"],
  ["global.network", "string"],
  ["global.multiCluster.clusterName", "string"],
  ["global.logAsJson", "boolean"],
  ["global.logging.level", "string"],
  ["global.sds.token.aud", "string"],
  ["global.proxy.image", "string"],
  ["global.proxy.clusterDomain", "string"],
  ["global.proxy.logLevel", "string"],
  ["global.proxy.componentLogLevel", "string"],
  ["global.proxy.privileged", "boolean"],
  ["global.proxy.holdApplicationUntilProxyStarts", "boolean"],
  ["global.proxy.includeIPRanges", "string"],
  ["pilot.crlConfigMapName", "string"],
  ["global.proxy.excludeIPRanges", "string"],
  ["global.proxy.includeInboundPorts", "string"],
  ["global.proxy.excludeInboundPorts", "string"],
  ["global.proxy.includeOutboundPorts", "string"],
  ["global.proxy.excludeOutboundPorts", "string"],
  ["global.proxy.readinessInitialDelaySeconds", "number"],
  ["global.proxy.readinessPeriodSeconds", "number"],
  ["global.proxy.readinessFailureThreshold", "number"],
  ["global.proxy.startupProbe.enabled", "boolean"],
  ["global.proxy.startupProbe.failureThreshold", "number"],
  ["global.proxy.resources", "object"],
  ["global.proxy.statusPort", "number"],
  ["global.mountMtlsCerts", "boolean"],
  ["gateways.securityContext", "object"],
  ["global.proxy_init.image", "string"],
  ["sidecarInjectorWebhook.rewriteAppHTTPProbe", "boolean"],
  ["sidecarInjectorWebhook.enableNamespacesByDefault", "boolean"],
  ["cni.enabled", "boolean"],
  ["istio_cni.enabled", "boolean"],
  ["cni.chained", "boolean"],
  ["istio_cni.chained", "boolean"],
  ["cni.provider", "string"],
  ["istio_cni.provider", "string"],
  ["meshConfig", "object"],
]

const typeOk = (value: unknown, type: (typeof FIELD_TYPES)[number][1]): boolean =>
  type === "object" ? isObject(value) : type === "list" ? Array.isArray(value) : typeof value === type

/** Parses the `values` key over the defaults; a Left names the first mistyped field. */
export const parseInjectionValues = (text: string): Either.Either<InjectionValues, string> =>
  Either.flatMap(parseYamlObject(text, "injection values"), (raw) => {
    for (const [path, type] of FIELD_TYPES) {
      const parts = path.split(".")
      for (let i = 1; i < parts.length; i++) {
        const parent = parts.slice(0, i).join(".")
        const section = valueAt(raw, parent)
        if (section !== undefined && section !== null && !isObject(section)) {
          return Either.left(`injection values: ${parent} must be a mapping, got ${JSON.stringify(section)}`)
        }
      }
      const value = valueAt(raw, path)
      // The chart renders unset values as null: the default applies.
      if (value !== undefined && value !== null && !typeOk(value, type)) {
        return Either.left(`injection values: ${path} must be a ${type}, got ${JSON.stringify(value)}`)
      }
    }
    const merged = deepMerge(defaultInjectionValues, dropNulls(raw)) as InjectionValues
    return Either.right(withNullResources(merged, raw))
  })

/**
 * A `null` under `global.proxy.resources` removes that default (`limits.cpu: null`: no CPU
 * limit), as Helm's merge and the reference template's `omitNil` do; `resources: null` removes
 * them all. Elsewhere a null keeps the default (the chart renders unset values as null).
 */
const withNullResources = (merged: InjectionValues, raw: Obj): InjectionValues => {
  const proxy = valueAt(raw, "global.proxy")
  if (!isObject(proxy) || !Object.hasOwn(proxy, "resources")) return merged
  const given = proxy.resources
  const resources =
    given === null ? {} : mergeDeletingNulls(valueAt(defaultInjectionValues, "global.proxy.resources"), given)
  const global = valueAt(merged, "global") as Obj
  return {
    ...merged,
    global: { ...global, proxy: { ...(global.proxy as Obj), resources } },
  } as InjectionValues
}

const mergeDeletingNulls = (base: unknown, over: unknown): unknown => {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over
  const out: Obj = { ...base }
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key]
    else out[key] = mergeDeletingNulls(base[key], value)
  }
  // A section left empty is no section (`requests: {}` would still be written).
  for (const [key, value] of Object.entries(out))
    if (isObject(value) && Object.keys(value).length === 0) delete out[key]
  return out
}

const dropNulls = (value: unknown): unknown => {
  if (!isObject(value)) return value
  const out: Obj = {}
  for (const [key, v] of Object.entries(value)) if (v !== null) out[key] = dropNulls(v)
  return out
}

/** The typed values the templates read; any missing or mistyped field falls back to its default. */
export interface ValuesView {
  readonly revision: string
  readonly hub: string
  readonly tag: string
  readonly imagePullPolicy: string
  readonly imagePullSecrets: ReadonlyArray<string>
  readonly meshNamespace: string
  readonly caAddress: string
  readonly meshId: string
  readonly trustDomain: string
  readonly network: string
  readonly clusterName: string
  readonly logAsJson: boolean
  readonly logLevel: string
  readonly tokenAudience: string
  readonly proxyImage: string
  readonly proxyInitImage: string
  readonly clusterDomain: string
  readonly proxyLogLevel: string
  readonly proxyComponentLogLevel: string
  readonly privileged: boolean
  readonly holdApplicationUntilProxyStarts: boolean
  readonly includeIPRanges: string
  readonly excludeIPRanges: string
  readonly includeInboundPorts: string
  readonly excludeInboundPorts: string
  readonly includeOutboundPorts: string
  readonly excludeOutboundPorts: string
  readonly readinessInitialDelaySeconds: number
  readonly readinessPeriodSeconds: number
  readonly readinessFailureThreshold: number
  readonly startupProbeEnabled: boolean
  readonly startupProbeFailureThreshold: number
  /** Empty when the values removed every default (the containers then carry no `resources`). */
  readonly resources: Obj
  /** `global.proxy.statusPort` when the values set it (0: no status port); else the proxy config's. */
  readonly statusPort: number | undefined
  /** `gateways.securityContext`: a gateway pod's security context instead of the unprivileged-port sysctl. */
  readonly gatewaySecurityContext: Obj
  /** `global.mountMtlsCerts`: the proxy mounts the `mesh.<service account>` Secret at /etc/certs/. */
  readonly mountMtlsCerts: boolean
  readonly rewriteAppHTTPProbe: boolean
  readonly enableNamespacesByDefault: boolean
  readonly cniEnabled: boolean
  /**
   * The CNI plugin runs as its own Multus network rather than chained after the cluster's
   * (`cni.chained: false` or `cni.provider: multus`): pods then ask Multus for it.
   */
  readonly cniMultus: boolean
  /** `meshConfig.defaultConfig.proxyMetadata` of the values (the chart's mesh config). */
  readonly proxyMetadata: Readonly<Record<string, string>>
  /** `pilot.crlConfigMapName`: the CA revocation list's ConfigMap ("" or unset: CRL_CONFIGMAP). */
  readonly crlConfigMapName: string
}

const pick = <A>(values: InjectionValues, path: string, check: (v: unknown) => v is A): A => {
  const given = valueAt(values, path)
  return check(given) ? given : (valueAt(defaultInjectionValues, path) as A)
}
const isString = (v: unknown): v is string => typeof v === "string"
const isBoolean = (v: unknown): v is boolean => typeof v === "boolean"
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v)
const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535

export const valuesView = (values: InjectionValues): ValuesView => {
  const s = (path: string) => pick(values, path, isString)
  const b = (path: string) => pick(values, path, isBoolean)
  const n = (path: string) => pick(values, path, isNumber)
  const secrets = valueAt(values, "global.imagePullSecrets")
  const metadata = valueAt(values, "meshConfig.defaultConfig.proxyMetadata")
  // The reference's chart keys are accepted too: `istioNamespace` (the mesh's `meshNamespace`,
  // which has no default so that either spelling given wins) and `istio_cni` (`cni`).
  const meshNamespace = valueAt(values, "global.meshNamespace") ?? valueAt(values, "global.istioNamespace")
  const crl = valueAt(values, "pilot.crlConfigMapName")
  const statusPort = valueAt(values, "global.proxy.statusPort")
  const cni = valueAt(values, "cni.enabled") === true || valueAt(values, "istio_cni.enabled") === true
  return {
    revision: s("revision"),
    hub: s("global.hub"),
    tag: isNumber(valueAt(values, "global.tag")) ? String(valueAt(values, "global.tag")) : s("global.tag"),
    imagePullPolicy: s("global.imagePullPolicy"),
    imagePullSecrets: Array.isArray(secrets)
      ? secrets.flatMap((x) => (isString(x) ? [x] : isObject(x) && isString(x.name) ? [x.name] : []))
      : [],
    meshNamespace: isString(meshNamespace) && meshNamespace !== "" ? meshNamespace : SYSTEM_NAMESPACE,
    caAddress: s("global.caAddress"),
    meshId: s("global.meshID"),
    trustDomain: s("global.trustDomain"),
    network: s("global.network"),
    clusterName: s("global.multiCluster.clusterName"),
    logAsJson: b("global.logAsJson"),
    logLevel: s("global.logging.level"),
    tokenAudience: s("global.sds.token.aud"),
    proxyImage: s("global.proxy.image"),
    proxyInitImage: s("global.proxy_init.image"),
    clusterDomain: s("global.proxy.clusterDomain"),
    proxyLogLevel: s("global.proxy.logLevel"),
    proxyComponentLogLevel: s("global.proxy.componentLogLevel"),
    privileged: b("global.proxy.privileged"),
    holdApplicationUntilProxyStarts: b("global.proxy.holdApplicationUntilProxyStarts"),
    includeIPRanges: s("global.proxy.includeIPRanges"),
    excludeIPRanges: s("global.proxy.excludeIPRanges"),
    includeInboundPorts: s("global.proxy.includeInboundPorts"),
    excludeInboundPorts: s("global.proxy.excludeInboundPorts"),
    includeOutboundPorts: s("global.proxy.includeOutboundPorts"),
    excludeOutboundPorts: s("global.proxy.excludeOutboundPorts"),
    readinessInitialDelaySeconds: n("global.proxy.readinessInitialDelaySeconds"),
    readinessPeriodSeconds: n("global.proxy.readinessPeriodSeconds"),
    readinessFailureThreshold: n("global.proxy.readinessFailureThreshold"),
    startupProbeEnabled: b("global.proxy.startupProbe.enabled"),
    startupProbeFailureThreshold: n("global.proxy.startupProbe.failureThreshold"),
    resources: pick(values, "global.proxy.resources", isObject),
    statusPort: isPort(statusPort) ? statusPort : undefined,
    mountMtlsCerts: valueAt(values, "global.mountMtlsCerts") === true,
    gatewaySecurityContext: asObject(valueAt(values, "gateways.securityContext")),
    rewriteAppHTTPProbe: b("sidecarInjectorWebhook.rewriteAppHTTPProbe"),
    enableNamespacesByDefault: b("sidecarInjectorWebhook.enableNamespacesByDefault"),
    cniEnabled: cni,
    cniMultus:
      cni &&
      ((valueAt(values, "cni.chained") ?? valueAt(values, "istio_cni.chained")) === false ||
        (valueAt(values, "cni.provider") ?? valueAt(values, "istio_cni.provider")) === "multus"),
    proxyMetadata: isObject(metadata)
      ? Object.fromEntries(Object.entries(metadata).filter((e): e is [string, string] => isString(e[1])))
      : {},
    crlConfigMapName: isString(crl) && crl !== "" ? crl : CRL_CONFIGMAP,
  }
}
