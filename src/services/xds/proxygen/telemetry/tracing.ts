/**
 * The `tracing` block of an HTTP connection manager from the mesh config and the Telemetry API.
 *
 * Without a Telemetry `tracing` entry for the direction, the mesh config decides: `enableTracing`
 * → sampling at `PILOT_TRACE_SAMPLING`. With entries (root → namespace → workload), each field is
 * taken from the most specific entry setting it: `randomSamplingPercentage` (else the
 * `PILOT_TRACE_SAMPLING` default), `customTags` (replaced whole, as the reference does),
 * `disableSpanReporting` (sampling 0: requests still carry ids, no span is reported), and
 * `providers` (the first name counts: the reference takes one tracer per rule).
 *
 * A named provider from mesh config `extensionProviders` becomes the tracer (`provider`), with
 * its `maxTagLength` as `max_path_tag_length`: `zipkin` (Zipkin v2 JSON to its collector),
 * `opentelemetry` (OTLP over gRPC) and `datadog`. Without a usable one (none named, unknown, of
 * another kind, or a service the registry lacks, the latter reported) no provider is written
 * and the proxy keeps the tracer its bootstrap declares.
 */
import { Either } from "effect"
import { providerNamed, type TracingProvider } from "../../../mesh-config/extension-providers.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { ProxyGenOptions } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type { CustomTag, HttpConnectionManager_Tracing, Percent } from "../../protocol/xds-types.js"

/** The tracer part of an HttpConnectionManager.Tracing: the provider and its tag length. */
type TracerFields = Pick<HttpConnectionManager_Tracing, "provider" | "max_path_tag_length">

import { envoyGrpcService, type ProviderCluster } from "../provider-cluster.js"
import type { ClusterLookup } from "./access-log.js"
import { type Direction, matchesMode } from "./access-log.js"
import type { TelemetryResource } from "./telemetry-selection.js"

type TracingSpec = NonNullable<TelemetryResource["spec"]["tracing"]>[number]
type CustomTagSpec = NonNullable<TracingSpec["customTags"]>[string]

const percent = (value: number): Percent => ({ value: Math.min(100, Math.max(0, value)) })

/** One Telemetry custom tag as an Envoy `CustomTag`; undefined when it sets no kind. */
const customTag = (tag: string, spec: CustomTagSpec): CustomTag | undefined => {
  if (spec.literal !== undefined && (spec.literal.value ?? "") !== "")
    return { tag, literal: { value: spec.literal.value! } }
  if (spec.environment !== undefined && (spec.environment.name ?? "") !== "")
    return {
      tag,
      environment: {
        name: spec.environment.name!,
        ...(spec.environment.defaultValue !== undefined ? { default_value: spec.environment.defaultValue } : {}),
      },
    }
  if (spec.header !== undefined && (spec.header.name ?? "") !== "")
    return {
      tag,
      request_header: {
        name: spec.header.name!,
        ...(spec.header.defaultValue !== undefined ? { default_value: spec.header.defaultValue } : {}),
      },
    }
  return undefined
}

const tracingBlock = (
  sampling: number,
  tags: ReadonlyArray<CustomTag>,
  tracer?: TracerFields,
): HttpConnectionManager_Tracing => ({
  client_sampling: percent(100),
  random_sampling: percent(sampling),
  overall_sampling: percent(100),
  ...(tags.length > 0 ? { custom_tags: tags } : {}),
  ...(tracer ?? {}),
})

const TRACE = "type.googleapis.com/envoy.config.trace.v3"
export const ZIPKIN_TRACER = "envoy.tracers.zipkin"
export const OPENTELEMETRY_TRACER = "envoy.tracers.opentelemetry"
export const DATADOG_TRACER = "envoy.tracers.datadog"
/** Zipkin's v2 span collection path, where the reference sends spans. */
const ZIPKIN_SPANS_PATH = "/api/v2/spans"

/** The HCM `provider` (and path tag length) of a tracing provider reached at `at`. */
const tracerOf = (
  provider: TracingProvider,
  { hostname, cluster }: ProviderCluster,
  serviceName: string,
): TracerFields => {
  const config =
    provider.kind === "zipkin"
      ? {
          name: ZIPKIN_TRACER,
          typed_config: typed(`${TRACE}.ZipkinConfig`, {
            collector_cluster: cluster,
            collector_endpoint: ZIPKIN_SPANS_PATH,
            collector_endpoint_version: "HTTP_JSON",
            collector_hostname: hostname,
            trace_id_128bit: !provider.enable64bitTraceId,
            shared_span_context: { value: false },
          }),
        }
      : provider.kind === "opentelemetry"
        ? {
            name: OPENTELEMETRY_TRACER,
            typed_config: typed(`${TRACE}.OpenTelemetryConfig`, {
              grpc_service: envoyGrpcService(cluster, hostname),
              service_name: serviceName,
            }),
          }
        : {
            name: DATADOG_TRACER,
            typed_config: typed(`${TRACE}.DatadogConfig`, {
              collector_cluster: cluster,
              service_name: serviceName,
              collector_hostname: hostname,
            }),
          }
  return {
    provider: config,
    ...(provider.maxTagLength > 0 ? { max_path_tag_length: { value: provider.maxTagLength } } : {}),
  }
}

/** What a tracer reads of the proxy and the registry. */
export interface TracerContext {
  readonly lookup: ClusterLookup
  /** The name spans are reported under (`<app>.<namespace>`). */
  readonly serviceName: string
}

/** The tracer of the provider `name`, or why there is none. */
const resolveTracer = (
  name: string,
  options: ProxyGenOptions,
  context: TracerContext,
): Either.Either<TracerFields, string> => {
  const provider = providerNamed(options.extensionProviders, name)
  if (provider === undefined) return Either.left("no mesh config extension provider has this name")
  if (provider.kind === "invalid") return Either.left(`the provider is invalid: ${provider.problems.join("; ")}`)
  if (provider.kind !== "zipkin" && provider.kind !== "opentelemetry" && provider.kind !== "datadog")
    return Either.left(
      `a ${provider.kind === "unsupported" ? provider.providerKind : provider.kind} provider is not a tracer the generators implement (zipkin, opentelemetry, datadog)`,
    )
  return Either.map(context.lookup(provider), (at) => tracerOf(provider, at, context.serviceName))
}

/** The tracing block for one direction of a proxy (undefined: no tracing), and what was skipped. */
export const tracingFor = (
  telemetries: ReadonlyArray<TelemetryResource>,
  direction: Direction,
  options: ProxyGenOptions,
  context: TracerContext,
): { readonly tracing?: HttpConnectionManager_Tracing; readonly warnings: ReadonlyArray<GeneratorNotice> } => {
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
  let named: { readonly where: string; readonly name: string } | undefined
  const warnings: Array<GeneratorNotice> = []
  const warn = (message: string) => warnings.push({ level: "warning", scope: "model", message })
  for (const { t, entry, index } of entries) {
    if (entry.randomSamplingPercentage !== undefined) sampling = entry.randomSamplingPercentage
    if (entry.disableSpanReporting !== undefined) disabled = entry.disableSpanReporting
    if (entry.customTags !== undefined && Object.keys(entry.customTags).length > 0) tags = entry.customTags
    const names = (entry.providers ?? []).map((p) => p.name).filter((n) => n !== "")
    if (names.length === 0) continue
    const where = `Telemetry ${t.meta.namespace}/${t.meta.name} field tracing[${index}].providers`
    if (names.length > 1)
      warn(`${where}: only the first provider (${names[0]}) is used; ${names.slice(1).join(", ")} ignored`)
    named = { where, name: names[0]! }
  }
  const customTags = Object.keys(tags)
    .sort()
    .flatMap((name) => {
      const tag = customTag(name, tags[name] as CustomTagSpec)
      return tag === undefined ? [] : [tag]
    })
  let tracer: TracerFields | undefined
  if (named !== undefined) {
    const resolved = resolveTracer(named.name, options, context)
    if (Either.isRight(resolved)) tracer = resolved.right
    else
      warn(
        `${named.where}: provider ${JSON.stringify(named.name)} not applied: ${resolved.left}; only sampling and custom tags are, the proxy keeps its bootstrap tracer`,
      )
  }
  return { tracing: tracingBlock(disabled ? 0 : sampling, customTags, tracer), warnings }
}
