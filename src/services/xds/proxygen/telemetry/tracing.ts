/**
 * The `tracing` block of an HTTP connection manager from the mesh config and the Telemetry API.
 *
 * Without a Telemetry `tracing` entry for the direction, the mesh config decides: `enableTracing`
 * → sampling at `PILOT_TRACE_SAMPLING`. With entries (root → namespace → workload), each field is
 * taken from the most specific entry setting it: `randomSamplingPercentage` (else the
 * `PILOT_TRACE_SAMPLING` default), `customTags` (replaced whole, as the reference does),
 * `disableSpanReporting` (sampling 0: requests still carry ids, no span is reported).
 *
 * No `provider` is written: the reference takes the tracer's config from mesh config
 * `extensionProviders`, which the PushContext does not carry; named providers are reported and
 * the proxy keeps the tracer its bootstrap declares (the legacy mesh config path).
 */
import type { ProtoObject } from "../../cache/resource-spec.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { ProxyGenOptions } from "../../model/push-context.js"
import { type Direction, matchesMode } from "./access-log.js"
import type { TelemetryResource } from "./telemetry-selection.js"

type TracingSpec = NonNullable<TelemetryResource["spec"]["tracing"]>[number]
type CustomTagSpec = NonNullable<TracingSpec["customTags"]>[string]

const percent = (value: number): ProtoObject => ({ value: Math.min(100, Math.max(0, value)) })

/** One Telemetry custom tag as an Envoy `CustomTag`; undefined when it sets no kind. */
const customTag = (tag: string, spec: CustomTagSpec): ProtoObject | undefined => {
  if (spec.literal !== undefined && (spec.literal.value ?? "") !== "")
    return { tag, literal: { value: spec.literal.value } }
  if (spec.environment !== undefined && (spec.environment.name ?? "") !== "")
    return {
      tag,
      environment: {
        name: spec.environment.name,
        ...(spec.environment.defaultValue !== undefined ? { default_value: spec.environment.defaultValue } : {}),
      },
    }
  if (spec.header !== undefined && (spec.header.name ?? "") !== "")
    return {
      tag,
      request_header: {
        name: spec.header.name,
        ...(spec.header.defaultValue !== undefined ? { default_value: spec.header.defaultValue } : {}),
      },
    }
  return undefined
}

const tracingBlock = (sampling: number, tags: ReadonlyArray<ProtoObject>): ProtoObject => ({
  client_sampling: percent(100),
  random_sampling: percent(sampling),
  overall_sampling: percent(100),
  ...(tags.length > 0 ? { custom_tags: tags } : {}),
})

/** The tracing block for one direction of a proxy (undefined: no tracing), and what was skipped. */
export const tracingFor = (
  telemetries: ReadonlyArray<TelemetryResource>,
  direction: Direction,
  options: ProxyGenOptions,
): { readonly tracing?: ProtoObject; readonly warnings: ReadonlyArray<GeneratorNotice> } => {
  const entries = telemetries.flatMap((t) =>
    (t.spec.tracing ?? [])
      .map((entry, index) => ({ t, entry, index }))
      .filter(({ entry }) => matchesMode(entry.match?.mode, direction)),
  )
  if (entries.length === 0)
    return options.enableTracing ? { tracing: tracingBlock(options.traceSampling, []), warnings: [] } : { warnings: [] }

  let sampling = options.traceSampling
  let disabled = false
  let tags: Readonly<Record<string, CustomTagSpec>> = {}
  const warnings: Array<GeneratorNotice> = []
  for (const { t, entry, index } of entries) {
    if (entry.randomSamplingPercentage !== undefined) sampling = entry.randomSamplingPercentage
    if (entry.disableSpanReporting !== undefined) disabled = entry.disableSpanReporting
    if (entry.customTags !== undefined && Object.keys(entry.customTags).length > 0) tags = entry.customTags
    const named = (entry.providers ?? []).map((p) => p.name).filter((n) => n !== "")
    if (named.length > 0)
      warnings.push({
        level: "warning",
        scope: "model",
        message: `Telemetry ${t.meta.namespace}/${t.meta.name} field tracing[${index}].providers: provider config for ${named.join(", ")} is not applied (mesh config extensionProviders are not carried to the generators): only sampling and custom tags are, the proxy keeps its bootstrap tracer`,
      })
  }
  const customTags = Object.keys(tags)
    .sort()
    .flatMap((name) => {
      const tag = customTag(name, tags[name] as CustomTagSpec)
      return tag === undefined ? [] : [tag]
    })
  return { tracing: tracingBlock(disabled ? 0 : sampling, customTags), warnings }
}
