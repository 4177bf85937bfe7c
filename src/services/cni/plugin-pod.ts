/**
 * What the CNI plugin reads of a pod: its labels and annotations, its container names, and the
 * injected proxy container's arguments, environment and user. The proxy container may be a
 * regular container or (native sidecar) an init container.
 */
import { ContainerNames, PROXY_CONTAINER_NAMES } from "../injection/names.js"

export interface PodContainer {
  readonly name: string
  readonly args?: ReadonlyArray<string>
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value?: string }>
  readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number }
}

/** The fields of a Pod the plugin reads (wire JSON). */
export interface PluginPod {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly uid?: string
    readonly labels?: Readonly<Record<string, string>>
    readonly annotations?: Readonly<Record<string, string>>
  }
  readonly spec?: {
    readonly serviceAccountName?: string
    readonly hostNetwork?: boolean
    readonly containers?: ReadonlyArray<PodContainer>
    readonly initContainers?: ReadonlyArray<PodContainer>
  }
}

export interface PodFacts {
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  readonly containers: ReadonlyArray<string>
  readonly initContainers: ReadonlyArray<string>
  /** The injected proxy container, when there is one. */
  readonly proxy:
    | {
        readonly name: string
        /** `sidecar` or `router` (its `proxy <type>` arguments); "" when not given. */
        readonly proxyType: string
        /** Its literal environment values (values from references are not resolved here). */
        readonly env: Readonly<Record<string, string>>
        readonly runAsUser: number | undefined
        readonly runAsGroup: number | undefined
      }
    | undefined
}

const isProxy = (container: PodContainer) => PROXY_CONTAINER_NAMES.includes(container.name)

export const podFacts = (pod: PluginPod): PodFacts => {
  const containers = pod.spec?.containers ?? []
  const initContainers = pod.spec?.initContainers ?? []
  const proxy = containers.find(isProxy) ?? initContainers.find(isProxy)
  const args = proxy?.args ?? []
  return {
    labels: pod.metadata.labels ?? {},
    annotations: pod.metadata.annotations ?? {},
    containers: containers.map((c) => c.name),
    initContainers: initContainers.map((c) => c.name),
    proxy:
      proxy === undefined
        ? undefined
        : {
            name: proxy.name,
            proxyType: args[0] === "proxy" && args[1] !== undefined ? args[1] : "",
            env: Object.fromEntries((proxy.env ?? []).map((e) => [e.name, e.value ?? ""])),
            runAsUser: proxy.securityContext?.runAsUser,
            runAsGroup: proxy.securityContext?.runAsGroup,
          },
  }
}

/** The init container that programs capture itself when the mesh runs without CNI (ours and the reference's). */
export const CAPTURE_INIT_CONTAINER_NAMES: ReadonlyArray<string> = [ContainerNames.init, "istio-init"]

/** Go's strconv.ParseBool, which the reference uses for these values; undefined when unparsable. */
export const parseGoBool = (text: string): boolean | undefined => {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false
  return undefined
}
