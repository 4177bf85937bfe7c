/**
 * Everything the templates need from one pod, read once: its annotations (either spelling,
 * validated — an invalid value refuses the injection, naming the annotation), the values and the
 * proxy config. Annotation over values over defaults, as the reference's templates do.
 */
import { Either } from "effect"
import type { EffectiveProxyConfig } from "../mesh-config/index.js"
import { asObject, asObjects, asStringMap, type Obj, stringAt } from "../orchestrator/json.js"
import { type AliasedReader, type AliasedValue, aliasedReader } from "./aliased-metadata.js"
import * as check from "./annotation-values.js"
import type { InjectionConfig, InjectionInput } from "./contract.js"
import { BUILTIN_TEMPLATES, ContainerNames, InjectAnnotations, TemplateNames } from "./names.js"
import { injectedProxyConfig } from "./proxy-config.js"
import { type ValuesView, valuesView } from "./values.js"

export interface CaptureSettings {
  readonly includeOutboundIPRanges: string
  readonly excludeOutboundIPRanges: string
  readonly includeInboundPorts: string
  /** The user's exclusions only; the proxy's own ports are added by the capture template. */
  readonly excludeInboundPorts: string
  /** Undefined when neither the annotation nor the values set it (the flag is then omitted). */
  readonly includeOutboundPorts: string | undefined
  readonly excludeOutboundPorts: string | undefined
  readonly excludeInterfaces: string | undefined
  /** `-k`: reroute-virtual-interfaces, else kubevirtInterfaces; undefined when neither is set. */
  readonly virtualInterfaces: string | undefined
}

export interface PodSettings {
  readonly values: ValuesView
  readonly annotations: Readonly<Record<string, string>>
  readonly labels: Readonly<Record<string, string>>
  /** Built-in template names to apply, in order, without duplicates. */
  readonly templates: ReadonlyArray<string>
  /** The injector ConfigMap's own templates to run after the built-in ones, in order (custom-templates.ts). */
  readonly customTemplates: ReadonlyArray<string>
  readonly proxyConfig: EffectiveProxyConfig
  readonly interceptionMode: check.InterceptionMode
  readonly capture: CaptureSettings
  readonly resources: Obj
  readonly proxyImage: string
  /**
   * The capture container's image: `sidecar.mesh.io/proxyImage` (it applies to both), else the
   * values' `global.proxy_init.image` — never `global.proxy.image`, as in the reference.
   */
  readonly proxyInitImage: string
  readonly rewriteAppProbes: boolean
  readonly holdApplicationUntilProxyStarts: boolean
  readonly nativeSidecar: boolean
  readonly proxyLogLevel: string
  readonly proxyComponentLogLevel: string
  readonly agentLogLevel: string
  readonly mergeMetrics: boolean
  /** The agent's status port: `status.sidecar.mesh.io/port` over the proxy config; 0 = none. */
  readonly statusPort: number
  readonly readiness: {
    readonly initialDelaySeconds: number
    readonly periodSeconds: number
    readonly failureThreshold: number
  }
  /** `sidecar.mesh.io/userVolume` and `userVolumeMount`, as named entries. */
  readonly userVolumes: ReadonlyArray<Obj>
  readonly userVolumeMounts: ReadonlyArray<Obj>
  /** `spec.serviceAccountName` ("" when unset). */
  readonly serviceAccountName: string
  /** The ConfigMap of `sidecar.mesh.io/bootstrapOverride`. */
  readonly bootstrapOverride: string | undefined
  readonly warnings: ReadonlyArray<string>
}

const invalid = (found: AliasedValue, problem: string): string =>
  `invalid annotation ${found.key}=${JSON.stringify(found.value)}: ${problem}`

/** The annotation's value checked by `parse`; undefined when the pod does not set it. */
const checked = <A>(
  reader: AliasedReader,
  key: string,
  parse: (text: string) => Either.Either<A, string>,
): Either.Either<A | undefined, string> => {
  const found = reader.get(key)
  if (found === undefined) return Either.right(undefined)
  return Either.mapLeft(parse(found.value), (problem) => invalid(found, problem))
}

/** The selected templates: the pod's list (or the config's default), aliases expanded once. */
const selectTemplates = (
  reader: AliasedReader,
  config: InjectionConfig,
): Either.Either<
  {
    readonly names: ReadonlyArray<string>
    readonly custom: ReadonlyArray<string>
    readonly warnings: ReadonlyArray<string>
  },
  string
> => {
  const given = reader.get(InjectAnnotations.templates)
  const requested =
    given === undefined
      ? config.defaultTemplates
      : given.value
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== "")
  const expanded = requested.flatMap((name) => config.aliases[name] ?? [name])
  const names: Array<string> = []
  const custom: Array<string> = []
  const warnings: Array<string> = []
  for (const name of expanded) {
    if (BUILTIN_TEMPLATES.includes(name)) {
      if (!names.includes(name)) names.push(name)
    } else if (config.executableTemplates?.[name] !== undefined) {
      if (!custom.includes(name)) custom.push(name)
    } else {
      const where = given === undefined ? "the injector config's defaultTemplates" : `annotation ${given.key}`
      return Either.left(
        `unknown template "${name}" in ${where} (known: ${[...BUILTIN_TEMPLATES, ...config.customTemplates].join(", ")})`,
      )
    }
  }
  return Either.right({ names, custom, warnings })
}

/** A full reference (with a registry path) is used as is; a bare name is taken from the values' hub at their tag. */
const image = (name: string, values: ValuesView): string =>
  name.includes("/") ? name : `${values.hub}/${name}:${values.tag}`

const RESOURCE_ANNOTATIONS = [
  ["requests", "cpu", InjectAnnotations.proxyCPU],
  ["requests", "memory", InjectAnnotations.proxyMemory],
  ["limits", "cpu", InjectAnnotations.proxyCPULimit],
  ["limits", "memory", InjectAnnotations.proxyMemoryLimit],
] as const

/**
 * The proxy's resources. As in the reference, any of the four annotations replaces the values'
 * resources entirely (requests from proxyCPU/proxyMemory, limits from the *Limit ones).
 */
const proxyResources = (reader: AliasedReader, values: ValuesView): Either.Either<Obj, string> =>
  Either.gen(function* () {
    const out: Record<string, Record<string, string>> = {}
    for (const [section, resource, key] of RESOURCE_ANNOTATIONS) {
      const value = yield* checked(reader, key, check.quantity)
      if (value !== undefined) out[section] = { ...out[section], [resource]: value }
    }
    return Object.keys(out).length > 0 ? out : values.resources
  })

export const podSettings = (input: InjectionInput): Either.Either<PodSettings, string> =>
  Either.gen(function* () {
    const metadata = asObject(input.pod.metadata)
    const annotations = asStringMap(metadata.annotations)
    const labels = asStringMap(metadata.labels)
    const reader = aliasedReader(annotations, "annotation")
    const values = valuesView(input.values)
    const templates = yield* selectTemplates(reader, input.config)
    const proxy = yield* injectedProxyConfig(
      input.meshConfig,
      values.proxyMetadata,
      reader.get(InjectAnnotations.proxyConfig),
    )
    const mode =
      (yield* checked(reader, InjectAnnotations.interceptionMode, check.interceptionMode)) ??
      proxy.value.interceptionMode ??
      "REDIRECT"
    const fromValues = (key: string, parse: (t: string) => Either.Either<string, string>, fallback: string) =>
      Either.map(checked(reader, key, parse), (v) => v ?? fallback)
    const optional = (key: string, parse: (t: string) => Either.Either<string, string>, fallback: string) =>
      Either.map(checked(reader, key, parse), (v) => v ?? (fallback === "" ? undefined : fallback))
    const capture: CaptureSettings = {
      includeOutboundIPRanges: yield* fromValues(
        InjectAnnotations.includeOutboundIPRanges,
        check.cidrListOrWildcard,
        values.includeIPRanges,
      ),
      excludeOutboundIPRanges: yield* fromValues(
        InjectAnnotations.excludeOutboundIPRanges,
        check.cidrList,
        values.excludeIPRanges,
      ),
      includeInboundPorts: yield* fromValues(
        InjectAnnotations.includeInboundPorts,
        check.portListOrWildcard,
        values.includeInboundPorts,
      ),
      excludeInboundPorts: yield* fromValues(
        InjectAnnotations.excludeInboundPorts,
        check.portList,
        values.excludeInboundPorts,
      ),
      includeOutboundPorts: yield* optional(
        InjectAnnotations.includeOutboundPorts,
        check.portList,
        values.includeOutboundPorts,
      ),
      excludeOutboundPorts: yield* optional(
        InjectAnnotations.excludeOutboundPorts,
        check.portList,
        values.excludeOutboundPorts,
      ),
      excludeInterfaces: yield* optional(InjectAnnotations.excludeInterfaces, check.interfaceList, ""),
      virtualInterfaces:
        (yield* checked(reader, InjectAnnotations.rerouteVirtualInterfaces, check.interfaceList)) ??
        (yield* checked(reader, InjectAnnotations.kubevirtInterfaces, check.interfaceList)),
    }
    const resources = yield* proxyResources(reader, values)
    const imageAnnotation = reader.get(InjectAnnotations.proxyImage)
    if (imageAnnotation !== undefined && imageAnnotation.value.trim() === "") {
      return yield* Either.left(invalid(imageAnnotation, "an image reference is required"))
    }
    const rewrite = yield* checked(reader, InjectAnnotations.rewriteAppHTTPProbers, check.boolean)
    const hold = yield* checked(reader, InjectAnnotations.holdApplicationUntilProxyStarts, check.boolean)
    const native = yield* checked(reader, InjectAnnotations.nativeSidecar, check.boolean)
    const merge = yield* checked(reader, InjectAnnotations.mergeMetrics, check.boolean)
    const text = (key: string, fallback: string) => reader.get(key)?.value ?? fallback
    // Annotation, else the values' global.proxy.statusPort, else the proxy config's.
    const statusPort =
      (yield* checked(reader, InjectAnnotations.statusPort, check.integerIn(0, 65535))) ??
      values.statusPort ??
      proxy.value.statusPort
    const seconds = (key: string, fallback: number) =>
      Either.map(checked(reader, key, check.integerIn(0, 2_147_483_647)), (v) => v ?? fallback)
    const readiness = {
      initialDelaySeconds: yield* seconds(
        InjectAnnotations.readinessInitialDelaySeconds,
        values.readinessInitialDelaySeconds,
      ),
      periodSeconds: yield* seconds(InjectAnnotations.readinessPeriodSeconds, values.readinessPeriodSeconds),
      failureThreshold: yield* seconds(InjectAnnotations.readinessFailureThreshold, values.readinessFailureThreshold),
    }
    const userVolumes = (yield* checked(reader, InjectAnnotations.userVolume, check.namedObjects)) ?? []
    const userVolumeMounts = (yield* checked(reader, InjectAnnotations.userVolumeMount, check.namedObjects)) ?? []
    const bootstrapOverride = yield* checked(reader, InjectAnnotations.bootstrapOverride, check.objectName)
    return {
      values,
      annotations,
      labels,
      templates: templates.names,
      customTemplates: templates.custom,
      // The annotation's port travels in PROXY_CONFIG too, so the agent and the templates agree.
      proxyConfig: statusPort === proxy.value.statusPort ? proxy.value : { ...proxy.value, statusPort },
      interceptionMode: mode,
      capture,
      resources,
      proxyImage: image(imageAnnotation?.value.trim() ?? values.proxyImage, values),
      proxyInitImage: image(imageAnnotation?.value.trim() ?? values.proxyInitImage, values),
      rewriteAppProbes: rewrite ?? values.rewriteAppHTTPProbe,
      holdApplicationUntilProxyStarts:
        hold ?? (proxy.value.holdApplicationUntilProxyStarts || values.holdApplicationUntilProxyStarts),
      // A gateway's proxy is its main container, never a native sidecar; nor is a proxy without an application.
      nativeSidecar:
        (native ?? input.nativeSidecars ?? false) &&
        !templates.names.includes(TemplateNames.gateway) &&
        asObjects(asObject(input.pod.spec).containers).some((c) => c.name !== ContainerNames.proxy),
      proxyLogLevel: text(InjectAnnotations.logLevel, values.proxyLogLevel),
      proxyComponentLogLevel: text(InjectAnnotations.componentLogLevel, values.proxyComponentLogLevel),
      agentLogLevel: text(InjectAnnotations.agentLogLevel, values.logLevel),
      mergeMetrics: merge ?? true,
      statusPort,
      readiness,
      userVolumes,
      userVolumeMounts,
      bootstrapOverride,
      serviceAccountName: stringAt(asObject(input.pod.spec).serviceAccountName) ?? "",
      warnings: [...reader.warnings(), ...templates.warnings, ...proxy.warnings],
    }
  })
