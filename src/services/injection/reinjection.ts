/**
 * Re-injecting a pod that already carries a sidecar (its `sidecar.mesh.io/status` annotation):
 * as the reference does, the containers the status lists are removed and injection runs again,
 * so the pod gets today's templates and settings instead of being left with stale ones. What
 * only the first injection could know is carried over from the removed proxy: the application
 * probers (the application's probes now point at the agent, so they cannot be read again; new
 * ones are added, an existing path keeps its first prober) and the application's own scrape
 * target. Containers the user declared to customise injected ones are recorded on first
 * injection in `proxy.mesh.io/overrides` and put back here, so a customisation survives too.
 */
import { asObject, asObjects, asStringMap, isObject, type Obj, stringAt } from "../orchestrator/json.js"
import { ContainerNames, InjectAnnotations, ProxyEnv, upstreamSpelling } from "./names.js"
import { envValue } from "./proxy-env.js"
import { parseStatus } from "./status.js"

export interface Stripped {
  /** The pod without its injected containers and status, overrides reinserted. */
  readonly pod: Obj
  /** Whether the pod had been injected (its overrides annotation is then not written again). */
  readonly reinjected: boolean
  /** MESH_ORCH_APP_PROBERS of the removed proxy, parsed. */
  readonly probers: Readonly<Record<string, unknown>>
  /** MESH_PROMETHEUS_ANNOTATIONS of the removed proxy. */
  readonly prometheusAnnotations: string | undefined
}

const statusText = (annotations: Readonly<Record<string, string>>): string | undefined =>
  annotations[InjectAnnotations.status] ?? annotations[upstreamSpelling(InjectAnnotations.status)]

const parsedProbers = (text: string | undefined): Readonly<Record<string, unknown>> => {
  if (text === undefined) return {}
  try {
    const value: unknown = JSON.parse(text)
    return isObject(value) ? value : {}
  } catch {
    return {}
  }
}

/** The declared containers recorded by the first injection (`{"containers": [...], "initContainers": [...]}`). */
const recordedOverrides = (annotations: Readonly<Record<string, string>>) => {
  const text = annotations[InjectAnnotations.overrides] ?? annotations[upstreamSpelling(InjectAnnotations.overrides)]
  if (text === undefined) return { containers: [], initContainers: [] }
  try {
    const value = asObject(JSON.parse(text))
    return { containers: asObjects(value.containers), initContainers: asObjects(value.initContainers) }
  } catch {
    return { containers: [], initContainers: [] }
  }
}

const withRecorded = (kept: ReadonlyArray<Obj>, recorded: ReadonlyArray<Obj>): ReadonlyArray<Obj> => [
  ...kept,
  ...recorded.filter((r) => !kept.some((k) => k.name === r.name)),
]

export const stripInjected = (pod: Obj): Stripped => {
  const metadata = asObject(pod.metadata)
  const annotations = asStringMap(metadata.annotations)
  const text = statusText(annotations)
  // An unreadable status is overwritten like a missing one, as in the reference.
  const status = text === undefined ? undefined : parseStatus(text)
  if (status === undefined) return { pod, reinjected: false, probers: {}, prometheusAnnotations: undefined }
  const spec = asObject(pod.spec)
  const injected = (names: ReadonlyArray<string>) => (c: Obj) => names.includes(stringAt(c.name) ?? "")
  const removed = [...asObjects(spec.containers), ...asObjects(spec.initContainers)].filter(
    injected([...status.containers, ...status.initContainers]),
  )
  const proxy = removed.find((c) => c.name === ContainerNames.proxy)
  const recorded = recordedOverrides(annotations)
  const keptAnnotations = { ...asObject(metadata.annotations) }
  delete keptAnnotations[InjectAnnotations.status]
  delete keptAnnotations[upstreamSpelling(InjectAnnotations.status)]
  const containers = withRecorded(
    asObjects(spec.containers).filter((c) => !injected(status.containers)(c)),
    recorded.containers,
  )
  const initContainers = withRecorded(
    asObjects(spec.initContainers).filter((c) => !injected(status.initContainers)(c)),
    recorded.initContainers,
  )
  return {
    pod: {
      ...pod,
      metadata: { ...metadata, annotations: keptAnnotations },
      spec: {
        ...spec,
        containers,
        ...(initContainers.length > 0 || spec.initContainers !== undefined ? { initContainers } : {}),
      },
    },
    reinjected: true,
    probers: parsedProbers(proxy === undefined ? undefined : envValue(proxy, ProxyEnv.appProbers)),
    prometheusAnnotations: proxy === undefined ? undefined : envValue(proxy, ProxyEnv.prometheusAnnotations),
  }
}
