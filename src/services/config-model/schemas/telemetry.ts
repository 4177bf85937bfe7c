/** telemetry.mesh.io Telemetry: metrics, tracing and access logging settings. */
import { Schema } from "effect"
import {
  atMostOneOf,
  checked,
  Duration,
  Enum,
  opt,
  PolicyTargetReference,
  type Report,
  structuralKeywords,
  WorkloadSelector,
} from "./common.js"
import { attachmentKeywords, attachmentProblems, TargetRefs } from "./policy-attachment.js"

const ProviderRef = Schema.Struct({ name: Schema.String.annotations(structuralKeywords({ minLength: 1 })) })
const WorkloadMode = Enum("CLIENT_AND_SERVER", "CLIENT", "SERVER")

const providersProblems = (providers: ReadonlyArray<{ readonly name: string }> | undefined, report: Report) =>
  providers?.forEach((p, i) => {
    if (p.name === "") report(["providers", i, "name"], "providers.name may not be empty")
  })

/** A span tag: at most one source (a tag with none is accepted, and adds nothing). */
const CustomTag = Schema.Struct({
  literal: opt(Schema.Struct({ value: opt(Schema.String) })),
  environment: opt(Schema.Struct({ name: opt(Schema.String), defaultValue: opt(Schema.String) })),
  header: opt(Schema.Struct({ name: opt(Schema.String), defaultValue: opt(Schema.String) })),
  formatter: opt(Schema.Struct({ value: opt(Schema.String) })),
})
  .annotations(structuralKeywords(atMostOneOf("literal", "environment", "header", "formatter")))
  .pipe(
    checked((tag, report) => {
      const set = (["literal", "environment", "header", "formatter"] as const).filter((k) => tag[k] !== undefined)
      if (set.length > 1)
        report([], `only one of literal, environment, header or formatter may be set, found ${set.join(" and ")}`)
      if (tag.literal !== undefined && (tag.literal.value ?? "") === "")
        report(["literal", "value"], "literal tag value may not be empty")
      if (tag.formatter !== undefined && (tag.formatter.value ?? "") === "")
        report(["formatter", "value"], "formatter tag value may not be empty")
      if (tag.header !== undefined && (tag.header.name ?? "") === "")
        report(["header", "name"], "header tag name may not be empty")
      if (tag.environment !== undefined && (tag.environment.name ?? "") === "") {
        report(["environment", "name"], "environment tag name may not be empty")
      }
    }),
  )

const Tracing = Schema.Struct({
  match: opt(Schema.Struct({ mode: opt(WorkloadMode) })),
  providers: opt(Schema.Array(ProviderRef)),
  randomSamplingPercentage: opt(Schema.Number.annotations(structuralKeywords({ minimum: 0, maximum: 100 }))),
  disableSpanReporting: opt(Schema.Boolean),
  customTags: opt(Schema.Record({ key: Schema.String, value: CustomTag })),
  useRequestIdForTraceSampling: opt(Schema.Boolean),
  enableIstioTags: opt(Schema.Boolean),
}).pipe(
  checked((t, report) => {
    providersProblems(t.providers, report)
    const p = t.randomSamplingPercentage
    if (p !== undefined && (p < 0 || p > 100)) {
      report(["randomSamplingPercentage"], "randomSamplingPercentage must be in range [0.0, 100.0]")
    }
    for (const name of Object.keys(t.customTags ?? {})) {
      if (name === "") report(["customTags"], "tag name may not be empty")
    }
  }),
)

const MetricName = Enum(
  "ALL_METRICS",
  "REQUEST_COUNT",
  "REQUEST_DURATION",
  "REQUEST_SIZE",
  "RESPONSE_SIZE",
  "TCP_OPENED_CONNECTIONS",
  "TCP_CLOSED_CONNECTIONS",
  "TCP_SENT_BYTES",
  "TCP_RECEIVED_BYTES",
  "GRPC_REQUEST_MESSAGES",
  "GRPC_RESPONSE_MESSAGES",
)

const MetricsOverrides = Schema.Struct({
  match: opt(
    Schema.Struct({ metric: opt(MetricName), customMetric: opt(Schema.String), mode: opt(WorkloadMode) }).annotations(
      structuralKeywords(atMostOneOf("metric", "customMetric")),
    ),
  ),
  disabled: opt(Schema.Boolean),
  tagOverrides: opt(
    Schema.Record({
      key: Schema.String,
      value: Schema.Struct({ operation: opt(Enum("UPSERT", "REMOVE")), value: opt(Schema.String) }).annotations(
        // REMOVE takes no value; UPSERT (also when the operation is absent) needs a non-empty one.
        structuralKeywords({
          anyOf: [
            { required: ["operation"], properties: { operation: { enum: ["REMOVE"] } }, not: { required: ["value"] } },
            { required: ["value"], properties: { value: { minLength: 1 } } },
          ],
          not: { required: ["operation", "value"], properties: { operation: { enum: ["REMOVE"] } } },
        }),
      ),
    }),
  ),
}).pipe(
  checked((o, report) => {
    for (const [name, to] of Object.entries(o.tagOverrides ?? {})) {
      // UPSERT is the operation's zero value: an override without one upserts.
      const op = to.operation ?? "UPSERT"
      if (name === "") report(["tagOverrides"], "tagOverrides.name may not be empty")
      if (op === "UPSERT" && (to.value ?? "") === "") {
        report(["tagOverrides", name, "value"], "tagOverrides.value must be set when operation is UPSERT")
      }
      // The CRD refuses any value beside REMOVE, an empty one included.
      if (op === "REMOVE" && to.value !== undefined) {
        report(["tagOverrides", name, "value"], "tagOverrides.value may only be set when operation is UPSERT")
      }
    }
    if (o.match?.customMetric !== undefined) {
      if (o.match.customMetric === "") report(["match", "customMetric"], "customMetric may not be empty")
      if (o.match.metric !== undefined) report(["match"], "only one of metric or customMetric may be set")
    }
  }),
)

const Metrics = Schema.Struct({
  providers: opt(Schema.Array(ProviderRef)),
  overrides: opt(Schema.Array(MetricsOverrides)),
  reportingInterval: opt(Duration),
}).pipe(checked((m, report) => providersProblems(m.providers, report)))

const AccessLogging = Schema.Struct({
  match: opt(Schema.Struct({ mode: opt(WorkloadMode) })),
  providers: opt(Schema.Array(ProviderRef)),
  disabled: opt(Schema.Boolean),
  filter: opt(Schema.Struct({ expression: opt(Schema.String) })),
}).pipe(
  checked((l, report) => {
    providersProblems(l.providers, report)
    if (l.filter !== undefined && (l.filter.expression ?? "").trim() === "") {
      report(["filter", "expression"], "filter expression may not be empty")
    }
  }),
)

export const Telemetry = Schema.Struct({
  selector: opt(WorkloadSelector),
  targetRef: opt(PolicyTargetReference),
  targetRefs: opt(TargetRefs),
  tracing: opt(Schema.Array(Tracing)),
  metrics: opt(Schema.Array(Metrics)),
  accessLogging: opt(Schema.Array(AccessLogging)),
})
  .annotations(attachmentKeywords)
  .pipe(checked(attachmentProblems))
export type TelemetrySpec = typeof Telemetry.Type
