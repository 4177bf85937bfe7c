/**
 * Puts the selected templates' fragments into the pod: customisations merged, containers placed
 * (the proxy last so `kubectl exec` keeps defaulting to the application, first when the
 * application must wait for it, or as a native sidecar right after capture), `mesh-init` after
 * the pod's own init containers (they may need the network before capture starts), the CNI
 * mode's `mesh-validation` before them (none may run before capture is in place), application
 * probes moved to the agent, metrics merged, labels, annotations and the status recorded.
 */
import { Either } from "effect"
import { asObject, asObjects, asStringMap, cloneJson, type Obj, stringAt } from "../orchestrator/json.js"
import { adjustCaptureUser } from "./capture-user.js"
import type { InjectionInput, Json } from "./contract.js"
import { AUTO_IMAGE, customizeContainer } from "./customization.js"
import { normalRevision } from "./decision.js"
import { emptyFragment, type Fragment, type TemplateContext } from "./fragment.js"
import { ContainerNames, InjectAnnotations, InjectLabels, ProxyEnv } from "./names.js"
import { workloadOwnerOf } from "./owner.js"
import { podNetwork } from "./pod-metadata.js"
import type { PodSettings } from "./pod-settings.js"
import { rewriteAppProbes } from "./probes.js"
import { metricsMerge } from "./prometheus-merge.js"
import { withEnv } from "./proxy-env.js"
import type { Stripped } from "./reinjection.js"
import { renderStatus } from "./status.js"
import { builtinTemplates } from "./templates/index.js"

const nameOf = (o: Obj): string => stringAt(o.name) ?? ""

const uniqueBy = <A>(items: ReadonlyArray<A>, key: (a: A) => unknown): ReadonlyArray<A> => {
  const seen = new Set<unknown>()
  return items.filter((item) => {
    const k = key(item)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

/** Fragments in template order; for a name given twice, the earlier template's entry is kept. */
export const mergeFragments = (fragments: ReadonlyArray<Fragment>): Fragment =>
  fragments.reduce<Fragment>(
    (acc, f) => ({
      initContainers: uniqueBy([...acc.initContainers, ...f.initContainers], nameOf),
      containers: uniqueBy([...acc.containers, ...f.containers], nameOf),
      volumes: uniqueBy([...acc.volumes, ...f.volumes], nameOf),
      imagePullSecrets: uniqueBy([...acc.imagePullSecrets, ...f.imagePullSecrets], (s) => s),
      labels: { ...acc.labels, ...f.labels },
      annotations: { ...acc.annotations, ...f.annotations },
      appEnv: [...acc.appEnv, ...f.appEnv],
      appVolumeMounts: uniqueBy([...acc.appVolumeMounts, ...f.appVolumeMounts], (m) => m.mountPath),
      keepAppProbes: acc.keepAppProbes || f.keepAppProbes,
      podSecurityContext: { ...acc.podSecurityContext, ...f.podSecurityContext },
    }),
    emptyFragment,
  )

const withMounts = (container: Obj, mounts: ReadonlyArray<Obj>): Obj => {
  if (mounts.length === 0) return container
  const existing = asObjects(container.volumeMounts)
  const added = mounts.filter((m) => !existing.some((e) => e.mountPath === m.mountPath))
  return { ...container, volumeMounts: [...existing, ...added] }
}

export interface Assembled {
  readonly pod: Json
  readonly warnings: ReadonlyArray<string>
  /** Why the pod cannot be injected as asked (an unusable scrape configuration). */
  readonly refused?: string
}

/** Nothing carried over: a pod injected for the first time. */
const firstInjection: Stripped = { pod: {}, reinjected: false, probers: {}, prometheusAnnotations: undefined }

/** JSON with keys in sorted order, as the reference writes a Go map. */
const sortedJson = (entries: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(
    Object.fromEntries(
      Object.keys(entries)
        .sort()
        .map((k) => [k, entries[k]]),
    ),
  )

/** `proxy.mesh.io/overrides`: the declared customisations, where their containers were placed. */
const overridesOf = (declared: ReadonlyMap<string, Obj>, initNames: ReadonlyArray<string>): string | undefined => {
  if (declared.size === 0) return undefined
  // `image: auto` means "the injected image": nothing to record.
  const recorded = [...declared.values()].map(({ image, ...rest }) =>
    image === undefined || image === AUTO_IMAGE ? rest : { ...rest, image },
  )
  const containers = recorded.filter((c) => !initNames.includes(nameOf(c)))
  const initContainers = recorded.filter((c) => initNames.includes(nameOf(c)))
  return JSON.stringify({
    ...(containers.length > 0 ? { containers } : {}),
    ...(initContainers.length > 0 ? { initContainers } : {}),
  })
}

export const assemblePod = (
  input: InjectionInput,
  settings: PodSettings,
  previous: Stripped = firstInjection,
): Assembled => {
  const pod = cloneJson(input.pod) as Obj
  const metadata = asObject(pod.metadata)
  const spec = asObject(pod.spec)
  const podContainers = asObjects(spec.containers)
  const podInitContainers = asObjects(spec.initContainers)
  const context: TemplateContext = {
    settings,
    appContainers: podContainers.filter((c) => nameOf(c) !== ContainerNames.proxy),
    podContainers,
    owner: input.owner ?? workloadOwnerOf(input.pod),
    namespace: input.namespace.name,
    revision: input.revision,
    meshConfig: input.meshConfig,
    compliancePolicy: input.compliancePolicy ?? "",
  }
  const merged = mergeFragments(settings.templates.map((name) => builtinTemplates[name]?.(context) ?? emptyFragment))
  const warnings: Array<string> = []

  // Containers the pod declares under an injected name customise the injected ones.
  const generatedNames = new Set([...merged.initContainers, ...merged.containers].map(nameOf))
  const declared = new Map(
    [...podContainers, ...podInitContainers].filter((c) => generatedNames.has(nameOf(c))).map((c) => [nameOf(c), c]),
  )
  const customize = (c: Obj) => customizeContainer(c, declared.get(nameOf(c)))
  // A declared proxy runAsUser moves the capture's uid exemption with it (capture-user.ts).
  const adjusted = adjustCaptureUser({
    declaredProxy: declared.get(ContainerNames.proxy),
    tproxy: settings.interceptionMode === "TPROXY",
    initContainers: merged.initContainers.map(customize),
    proxy: merged.containers.map(customize)[0],
  })
  const generatedInit = adjusted.initContainers
  let proxy = adjusted.proxy
  let apps: ReadonlyArray<Obj> = podContainers
    .filter((c) => !generatedNames.has(nameOf(c)))
    .map((c) =>
      withMounts(
        { ...c, ...(merged.appEnv.length > 0 ? { env: withEnv(c.env, merged.appEnv) } : {}) },
        merged.appVolumeMounts,
      ),
    )

  let userInit = podInitContainers.filter((c) => !generatedNames.has(nameOf(c)))

  const statusPort = settings.statusPort
  if (proxy !== undefined && settings.rewriteAppProbes && !merged.keepAppProbes && statusPort !== 0) {
    // The pod's own native sidecars (init containers that keep running) are probed too.
    const rewritten = rewriteAppProbes([...apps, ...userInit], statusPort)
    apps = rewritten.containers.slice(0, apps.length)
    userInit = rewritten.containers.slice(apps.length)
    warnings.push(...rewritten.warnings)
    // On re-injection a path already handed over keeps its first prober, as in the reference.
    const probers = { ...rewritten.probers, ...previous.probers }
    if (Object.keys(probers).length > 0) {
      proxy = { ...proxy, env: withEnv(proxy.env, [{ name: ProxyEnv.appProbers, value: sortedJson(probers) }]) }
    }
  }

  const annotations: Record<string, string> = { ...asStringMap(metadata.annotations), ...merged.annotations }
  if (proxy !== undefined) {
    const scraping = metricsMerge(annotations, input.meshConfig, settings.mergeMetrics, statusPort)
    if (Either.isLeft(scraping)) return { pod: input.pod, warnings, refused: scraping.left }
    const merge = scraping.right
    if (merge !== undefined) {
      for (const key of merge.removed) delete annotations[key]
      Object.assign(annotations, merge.annotations)
      warnings.push(...merge.warnings)
    }
    // A re-injected pod already points at the agent: its first scrape target is carried over.
    const scrapeTarget = merge?.envValue ?? previous.prometheusAnnotations
    if (scrapeTarget !== undefined) {
      proxy = { ...proxy, env: withEnv(proxy.env, [{ name: ProxyEnv.prometheusAnnotations, value: scrapeTarget }]) }
    }
  }

  const named = (name: string) => generatedInit.filter((c) => nameOf(c) === name)
  const capture = named(ContainerNames.init)
  const validation = named(ContainerNames.validation)
  const otherGeneratedInit = generatedInit.filter(
    (c) => nameOf(c) !== ContainerNames.init && nameOf(c) !== ContainerNames.validation,
  )
  const native = proxy !== undefined && settings.nativeSidecar
  // Validation first, so no user init container runs before capture is known to work.
  const initContainers = native
    ? [...capture, ...validation, { ...proxy, restartPolicy: "Always" }, ...userInit, ...otherGeneratedInit]
    : [...validation, ...userInit, ...otherGeneratedInit, ...capture]
  const containers =
    proxy === undefined || native
      ? apps
      : settings.holdApplicationUntilProxyStarts
        ? [proxy, ...apps]
        : [...apps, proxy]

  const podVolumes = asObjects(spec.volumes)
  const volumes = [...podVolumes, ...merged.volumes.filter((v) => !podVolumes.some((p) => nameOf(p) === nameOf(v)))]
  const podSecrets = asObjects(spec.imagePullSecrets)
  const secrets = [
    ...podSecrets,
    ...merged.imagePullSecrets.filter((s) => !podSecrets.some((p) => nameOf(p) === s)).map((name) => ({ name })),
  ]

  const injectedInit = initContainers.filter((c) => generatedNames.has(nameOf(c))).map(nameOf)
  const overrides = previous.reinjected ? undefined : overridesOf(declared, injectedInit)
  if (overrides !== undefined) annotations[InjectAnnotations.overrides] = overrides
  annotations[InjectAnnotations.status] = renderStatus({
    initContainers: injectedInit,
    containers: containers.filter((c) => generatedNames.has(nameOf(c))).map(nameOf),
    volumes: merged.volumes.map(nameOf),
    imagePullSecrets: merged.imagePullSecrets,
    revision: normalRevision(input.revision),
  })
  Object.assign(annotations, input.config.injectedAnnotations)

  const network = podNetwork(settings)
  const labels = {
    ...asStringMap(metadata.labels),
    ...merged.labels,
    ...(network === "" ? {} : { [InjectLabels.network]: network }),
  }
  pod.metadata = {
    ...metadata,
    ...(Object.keys(labels).length > 0 || metadata.labels !== undefined ? { labels } : {}),
    annotations,
  }
  const securityContext =
    Object.keys(merged.podSecurityContext).length > 0
      ? { securityContext: { ...asObject(spec.securityContext), ...merged.podSecurityContext } }
      : {}
  pod.spec = {
    ...spec,
    ...securityContext,
    ...(initContainers.length > 0 ? { initContainers } : {}),
    containers,
    ...(volumes.length > 0 ? { volumes } : {}),
    ...(secrets.length > 0 ? { imagePullSecrets: secrets } : {}),
  }
  // Templates share values (resources, mounts) between containers; the caller gets an unshared tree.
  return { pod: cloneJson(pod), warnings }
}
