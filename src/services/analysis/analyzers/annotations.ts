/**
 * Annotations of the mesh's domains (and the ingress class) on Namespaces, Services, Pods,
 * Deployments and Ingresses, as the reference checks them: unknown keys (MSH0108), keys on a
 * kind they do not apply to (MSH0107), invalid values of keys in their place (MSH0125),
 * deprecated (MSH0135) and alpha (MSH0136) ones. Annotations the mesh writes itself are not
 * reported; neither are alpha redirection annotations the injector wrote on a pod whose
 * redirection the CNI plugin sets up.
 */
import { MESH_DOMAIN } from "../../constants.js"
import type { Analyzer } from "../analyzer.js"
import { type MessageType, MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, rec, type Snapshot, str } from "../snapshot.js"
import { ANNOTATION_TABLE } from "./annotation-table.js"

type Value = "bool" | "int" | "ports" | "any"

interface AnnotationInfo {
  readonly kinds: ReadonlyArray<string>
  readonly value: Value
  readonly deprecated?: boolean
  readonly alpha?: boolean
}

const d = MESH_DOMAIN

/** Value checks of the annotations the injector validates. */
const VALUE_CHECKS: ReadonlyMap<string, Value> = new Map<string, Value>([
  [`sidecar.${d}/inject`, "bool"],
  [`sidecar.${d}/rewriteAppHTTPProbers`, "bool"],
  [`sidecar.${d}/enableCoreDump`, "bool"],
  [`sidecar.${d}/nativeSidecar`, "bool"],
  [`traffic.sidecar.${d}/excludeInboundPorts`, "ports"],
  [`traffic.sidecar.${d}/includeOutboundPorts`, "ports"],
  [`traffic.sidecar.${d}/excludeOutboundPorts`, "ports"],
  [`readiness.status.sidecar.${d}/applicationPorts`, "ports"],
  [`readiness.status.sidecar.${d}/initialDelaySeconds`, "int"],
  [`readiness.status.sidecar.${d}/periodSeconds`, "int"],
  [`readiness.status.sidecar.${d}/failureThreshold`, "int"],
  [`status.sidecar.${d}/port`, "int"],
  [`prometheus.${d}/merge-metrics`, "bool"],
  [`${d}/dry-run`, "bool"],
])

/** The mesh's annotations and where they apply (annotation-table.ts), with their value checks. */
export const KNOWN_ANNOTATIONS: ReadonlyMap<string, AnnotationInfo> = new Map(
  ANNOTATION_TABLE.map(([name, status, deprecated, kinds]) => [
    name,
    { kinds, value: VALUE_CHECKS.get(name) ?? "any", deprecated, alpha: status === "A" },
  ]),
)

/** Annotations the mesh writes itself: never reported. */
const ALWAYS_IGNORED = new Set([`sidecar.${d}/status`, `gateway.${d}/controller-version`, `${d}/rev`])
/** Alpha annotations the injector writes on pods when it (not the CNI plugin) sets up redirection. */
const IGNORED_ALPHA_WITHOUT_CNI = new Set([
  `sidecar.${d}/interceptionMode`,
  `traffic.sidecar.${d}/includeInboundPorts`,
  `traffic.sidecar.${d}/excludeInboundPorts`,
  `traffic.sidecar.${d}/includeOutboundIPRanges`,
])
const INGRESS_CLASS = "kubernetes.io/ingress.class"
/** The kinds whose annotations are checked (the reference's, and Ingress). */
const ANNOTATED_KINDS = ["Namespace", "Service", "Pod", "Deployment", "Ingress"]

/** An annotation of the mesh's domains (the first segment ending in it), or the ingress class. */
const isMeshAnnotation = (key: string): boolean => key === INGRESS_CLASS || (key.split("/")[0] ?? "").endsWith(d)

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
  for (const kind of ANNOTATED_KINDS)
    for (const entry of snapshot.ofKind(kind)) {
      if (entry.group !== "" && entry.group !== "apps" && entry.group !== "networking.k8s.io") continue
      for (const [key, value] of Object.entries(entry.annotations)) {
        if (!isMeshAnnotation(key) || ALWAYS_IGNORED.has(key)) continue
        out.push({ entry, kind, key, value, info: KNOWN_ANNOTATIONS.get(key), path: ["metadata", "annotations", key] })
      }
    }
  return out
}

/** Whether a pod's redirection is set up by an init container of the injector (not the CNI plugin). */
const injectorRedirects = (pod: Entry): boolean =>
  arr(rec(pod.body.spec).initContainers).some((c) => ["mesh-init", "istio-init"].includes(str(rec(c).name)))

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

const SIDECAR_INJECT = `sidecar.${d}/inject`

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
      f.info !== undefined && !f.info.kinds.includes("Any") && !f.info.kinds.includes(f.kind)
        ? `Misplaced annotation: ${f.key} can only be applied to ${f.info.kinds.join(", ")}`
        : undefined,
  ),
  analyzer(
    "annotations.InvalidAnnotationAnalyzer",
    "Checks the values of the mesh's annotations",
    MessageTypes.InvalidAnnotation,
    (f) => {
      // Only an annotation in its place is validated (the reference stops at a misplaced one).
      if (f.info === undefined || f.info.kinds.includes("Any") || !f.info.kinds.includes(f.kind)) return undefined
      const problem = invalidValue(f.info.value, f.value)
      return problem === undefined ? undefined : `Invalid annotation ${f.key}: ${problem}, got "${f.value}"`
    },
  ),
  analyzer(
    "annotations.DeprecatedAnnotationAnalyzer",
    "Reports deprecated annotations",
    MessageTypes.DeprecatedAnnotation,
    (f) => {
      if (f.info?.deprecated !== true) return undefined
      // The inject annotation beside the inject label is left alone: the label wins.
      if (f.key === SIDECAR_INJECT && f.entry.labels[SIDECAR_INJECT] !== undefined) return undefined
      const extra = f.key === SIDECAR_INJECT ? ` in favor of the "${SIDECAR_INJECT}" label` : ""
      return `Annotation "${f.key}" has been deprecated${extra} and may not work in future mesh versions.`
    },
  ),
  analyzer(
    "annotations.AlphaAnalyzer",
    "Reports alpha annotations (the reference's maturity analyzer: not run unless named with --analyzer)",
    MessageTypes.AlphaAnnotation,
    (f) =>
      f.info?.alpha === true &&
      !(f.kind === "Pod" && !injectorRedirects(f.entry) && IGNORED_ALPHA_WITHOUT_CNI.has(f.key))
        ? `Annotation "${f.key}" is part of an alpha-phase feature and may be incompletely supported.`
        : undefined,
  ),
]
