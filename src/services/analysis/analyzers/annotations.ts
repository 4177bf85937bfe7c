/**
 * Annotations of the mesh's domains on orchestrator objects: unknown keys (MSH0108), keys on a
 * kind they do not apply to (MSH0107), invalid values (MSH0125), deprecated (MSH0135) and alpha
 * (MSH0136) ones. Pod annotations are also read from Deployment pod templates.
 */
import { MESH_DOMAIN } from "../../constants.js"
import type { Analyzer } from "../analyzer.js"
import { type MessageType, MessageTypes } from "../message-types.js"
import { type Entry, type Message, message, rec, type Snapshot, stringMap } from "../snapshot.js"

type Value = "bool" | "int" | "ports" | "any"

interface AnnotationInfo {
  readonly kinds: ReadonlyArray<string>
  readonly value: Value
  readonly deprecated?: boolean
  readonly alpha?: boolean
}

const d = MESH_DOMAIN
const pod = (value: Value = "any", extra: Partial<AnnotationInfo> = {}): AnnotationInfo => ({
  kinds: ["Pod"],
  value,
  ...extra,
})

/** The mesh's annotations (the reference's, under the mesh domain) and where they apply. */
export const KNOWN_ANNOTATIONS: ReadonlyMap<string, AnnotationInfo> = new Map<string, AnnotationInfo>([
  [`sidecar.${d}/inject`, pod("bool", { deprecated: true })],
  [`sidecar.${d}/status`, pod()],
  [`sidecar.${d}/proxyCPU`, pod()],
  [`sidecar.${d}/proxyCPULimit`, pod()],
  [`sidecar.${d}/proxyMemory`, pod()],
  [`sidecar.${d}/proxyMemoryLimit`, pod()],
  [`sidecar.${d}/proxyImage`, pod()],
  [`sidecar.${d}/proxyImageType`, pod()],
  [`sidecar.${d}/interceptionMode`, pod()],
  [`sidecar.${d}/rewriteAppHTTPProbers`, pod("bool")],
  [`sidecar.${d}/logLevel`, pod()],
  [`sidecar.${d}/componentLogLevel`, pod()],
  [`sidecar.${d}/agentLogLevel`, pod()],
  [`sidecar.${d}/bootstrapOverride`, pod()],
  [`sidecar.${d}/discoveryAddress`, pod()],
  [`sidecar.${d}/enableCoreDump`, pod("bool")],
  [`sidecar.${d}/userVolume`, pod()],
  [`sidecar.${d}/userVolumeMount`, pod()],
  [`sidecar.${d}/statsInclusionPrefixes`, pod("any", { deprecated: true })],
  [`sidecar.${d}/statsInclusionSuffixes`, pod("any", { deprecated: true })],
  [`sidecar.${d}/statsInclusionRegexps`, pod("any", { deprecated: true })],
  [`sidecar.${d}/statsHistogramBuckets`, pod("any", { alpha: true })],
  [`sidecar.${d}/extraStatTags`, pod()],
  [`sidecar.${d}/nativeSidecar`, pod("bool")],
  [`traffic.sidecar.${d}/includeOutboundIPRanges`, pod()],
  [`traffic.sidecar.${d}/excludeOutboundIPRanges`, pod()],
  [`traffic.sidecar.${d}/includeInboundPorts`, pod()],
  [`traffic.sidecar.${d}/excludeInboundPorts`, pod("ports")],
  [`traffic.sidecar.${d}/includeOutboundPorts`, pod("ports")],
  [`traffic.sidecar.${d}/excludeOutboundPorts`, pod("ports")],
  [`traffic.sidecar.${d}/excludeInterfaces`, pod()],
  [`traffic.sidecar.${d}/kubevirtInterfaces`, pod()],
  [`readiness.status.sidecar.${d}/applicationPorts`, pod("ports")],
  [`readiness.status.sidecar.${d}/initialDelaySeconds`, pod("int")],
  [`readiness.status.sidecar.${d}/periodSeconds`, pod("int")],
  [`readiness.status.sidecar.${d}/failureThreshold`, pod("int")],
  [`status.sidecar.${d}/port`, pod("int")],
  [`proxy.${d}/config`, pod()],
  [`proxy.${d}/overrides`, pod()],
  [`inject.${d}/templates`, pod()],
  [`prometheus.${d}/merge-metrics`, pod("bool")],
  [`ambient.${d}/redirection`, pod()],
  [`networking.${d}/exportTo`, { kinds: ["Service"], value: "any" }],
  [`networking.${d}/traffic-distribution`, { kinds: ["Service"], value: "any", alpha: true }],
  [`${d}/dry-run`, { kinds: ["AuthorizationPolicy"], value: "bool", alpha: true }],
  [`topology.${d}/controlPlaneClusters`, { kinds: ["Namespace"], value: "any" }],
  [`policy.${d}/check`, pod("any", { deprecated: true })],
])

const MESH_DOMAIN_KEY = new RegExp(`(^|\\.)${d.replace(".", "\\.")}/`)

interface Found {
  readonly entry: Entry
  readonly kind: string
  readonly key: string
  readonly value: string
  readonly info: AnnotationInfo | undefined
  readonly path: ReadonlyArray<string>
}

const found = (snapshot: Snapshot): ReadonlyArray<Found> => {
  const out: Array<Found> = []
  const add = (
    entry: Entry,
    kind: string,
    annotations: Readonly<Record<string, string>>,
    path: ReadonlyArray<string>,
  ) => {
    for (const [key, value] of Object.entries(annotations)) {
      if (!MESH_DOMAIN_KEY.test(key)) continue
      out.push({ entry, kind, key, value, info: KNOWN_ANNOTATIONS.get(key), path: [...path, key] })
    }
  }
  for (const entry of snapshot.entries) {
    add(entry, entry.kind, entry.annotations, ["metadata", "annotations"])
    if (entry.kind === "Deployment")
      add(entry, "Pod", stringMap(rec(rec(rec(rec(entry.body.spec).template).metadata).annotations)), [
        "spec",
        "template",
        "metadata",
        "annotations",
      ])
  }
  return out
}

const invalidValue = (value: Value, text: string): string | undefined => {
  switch (value) {
    case "bool":
      return /^(true|false)$/i.test(text) ? undefined : "expected true or false"
    case "int":
      return /^\d+$/.test(text) ? undefined : "expected a non-negative integer"
    case "ports":
      return text === "*" || text.split(",").every((p) => /^\s*\d+\s*$/.test(p) && Number(p) <= 65535) || text === ""
        ? undefined
        : "expected a comma-separated list of ports"
    default:
      return undefined
  }
}

const analyzer = (
  name: string,
  description: string,
  type: MessageType,
  pick: (f: Found) => string | undefined,
): Analyzer => ({
  name,
  description,
  types: [type],
  run: (snapshot) =>
    found(snapshot).flatMap((f): Array<Message> => {
      const text = pick(f)
      return text === undefined ? [] : [message(type, f.entry, text, f.path)]
    }),
})

export const annotationAnalyzers: ReadonlyArray<Analyzer> = [
  analyzer(
    "annotations.UnknownAnnotationAnalyzer",
    "Checks the mesh's annotations are known",
    MessageTypes.UnknownAnnotation,
    (f) => (f.info === undefined ? `Unknown annotation: ${f.key}` : undefined),
  ),
  analyzer(
    "annotations.MisplacedAnnotationAnalyzer",
    "Checks the mesh's annotations are on the kinds they apply to",
    MessageTypes.MisplacedAnnotation,
    (f) =>
      f.info !== undefined && !f.info.kinds.includes(f.kind)
        ? `Misplaced annotation: ${f.key} can only be applied to ${f.info.kinds.join(", ")}`
        : undefined,
  ),
  analyzer(
    "annotations.InvalidAnnotationAnalyzer",
    "Checks the values of the mesh's annotations",
    MessageTypes.InvalidAnnotation,
    (f) => {
      const problem = f.info === undefined ? undefined : invalidValue(f.info.value, f.value)
      return problem === undefined ? undefined : `Invalid annotation ${f.key}: ${problem}, got "${f.value}"`
    },
  ),
  analyzer(
    "annotations.DeprecatedAnnotationAnalyzer",
    "Reports deprecated annotations",
    MessageTypes.DeprecatedAnnotation,
    (f) =>
      f.info?.deprecated === true
        ? `Annotation "${f.key}" has been deprecated and may not work in future releases.`
        : undefined,
  ),
  analyzer("annotations.AlphaAnnotationAnalyzer", "Reports alpha annotations", MessageTypes.AlphaAnnotation, (f) =>
    f.info?.alpha === true
      ? `Annotation "${f.key}" is part of an alpha-phase feature and may be incompletely supported.`
      : undefined,
  ),
]
