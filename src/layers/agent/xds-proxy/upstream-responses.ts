/**
 * What the xDS proxy does with one upstream response before (or instead of) passing it down:
 * - NDS, when the DNS proxy runs: decoded, handed to it, answered upstream by the agent, kept
 *   from the downstream (name-table-subscription.ts);
 * - ECDS, when Wasm remote-load conversion is on: remote Wasm modules fetched and their configs
 *   rewritten to the local files, or replaced by RBAC when the fetch fails
 *   (wasm-conversion.ts), and the response re-encoded;
 * - anything else: passed on as the bytes it came as (the type is read off the wire, the rest is
 *   not decoded).
 * A response the agent cannot decode is passed on unchanged: the downstream NACKs it, as it would
 * without the agent.
 */
import { Duration, Effect, Either } from "effect"
import type { NameTableSinkShape } from "../../../services/agent/dns/name-table-sink.js"
import type { WasmFetcherShape } from "../../../services/agent/wasm/contract.js"
import {
  NAME_TABLE_TYPE_URL,
  type NameTableSubscription,
  onDeltaNameTable,
  onSotwNameTable,
} from "../../../services/agent/xds-proxy/name-table-subscription.js"
import {
  type ConversionResult,
  fetchFailureReplacement,
  planConversion,
  withLocalModule,
} from "../../../services/agent/xds-proxy/wasm-conversion.js"
import { responseTypeUrl } from "../../../services/agent/xds-proxy/wire.js"
import type { DeltaRequest, SotwRequest } from "../../../services/agent/xds-proxy/xds-proxy.js"
import { withScope } from "../../../services/logging/logging.js"
import type { MetricsShape } from "../../../services/metrics/metrics.js"
import type { ProtoObject } from "../../../services/xds/cache/resource-spec.js"
import { TypeUrl } from "../../../services/xds/protocol/type-urls.js"
import { loadXdsProtos } from "../../xds/protos.js"

export interface ResponseHandling {
  /** The DNS proxy's name table: NDS is subscribed to and consumed only when present. */
  readonly nameTableSink?: NameTableSinkShape
  /** Present when ECDS remote Wasm modules are to be fetched and rewritten to local files. */
  readonly wasmFetcher?: WasmFetcherShape
}

export type HandledResponse =
  /** Pass `bytes` downstream (`decoded`: the response as decoded here, when it was). */
  | { readonly _tag: "Forward"; readonly bytes: Buffer; readonly decoded?: Record<string, unknown> }
  /** The agent's own NDS response: send `reply` upstream, nothing downstream. */
  | {
      readonly _tag: "NameTable"
      readonly reply: SotwRequest | DeltaRequest
      readonly subscription: NameTableSubscription
    }

type Mode = "sotw" | "delta"

/** An `Any` as the ADS methods decode it (not expanded). */
interface RawAny {
  readonly type_url?: string
  readonly value?: Uint8Array
}

/**
 * The whole-response message types, encoded through the codec's per-type serializers (a
 * rewritten response has no shared resources to reuse, unlike the server's responses).
 */
const RESPONSE_TYPE: Record<Mode, string> = {
  sotw: "type.googleapis.com/envoy.service.discovery.v3.DiscoveryResponse",
  delta: "type.googleapis.com/envoy.service.discovery.v3.DeltaDiscoveryResponse",
}

export const makeResponseHandler = (
  mode: Mode,
  decodeResponse: (bytes: Buffer) => Record<string, unknown>,
  handling: ResponseHandling,
  metrics: MetricsShape,
) => {
  const codec = loadXdsProtos().codec
  const conversions = metrics.counter<"result">(
    "wasm_config_conversion_count",
    "Number of Wasm config conversions and their results",
    ["result"],
  )
  const conversionDuration = metrics.histogram(
    "wasm_config_conversion_duration",
    "Total time in milliseconds spent on converting remote load in Wasm config",
    [],
    [1, 10, 100, 1000, 10000, 60000],
  )
  const count = (result: ConversionResult) => Effect.sync(() => conversions.inc({ result }))

  const decodeNameTable = (resource: unknown) => {
    const any = resource as RawAny
    return codec.decode(NAME_TABLE_TYPE_URL, any.value ?? new Uint8Array(0))
  }

  const consumeNameTable = (sink: NameTableSinkShape, response: Record<string, unknown>, held: NameTableSubscription) =>
    Effect.gen(function* () {
      const outcome =
        mode === "sotw"
          ? onSotwNameTable(held, response, decodeNameTable)
          : onDeltaNameTable(held, response, (resource) => decodeNameTable(resource))
      if (outcome.rejected !== undefined) yield* Effect.logWarning(`NDS response rejected: ${outcome.rejected}`)
      if (outcome.table !== undefined) {
        yield* sink.update(outcome.table)
        yield* Effect.logDebug(
          `name table updated: ${Object.keys(outcome.table.table).length} hosts (version ${outcome.subscription.accepted ?? "none"})`,
        )
      }
      return { _tag: "NameTable", reply: outcome.reply, subscription: outcome.subscription } as const
    }).pipe(withScope("xdsproxy"))

  /** One ECDS resource (`Any` value bytes): the bytes to send instead, or undefined to keep it. */
  const convertExtensionConfig = (fetcher: WasmFetcherShape, value: Uint8Array) =>
    Effect.gen(function* () {
      const decoded = Either.try(() => codec.decode(TypeUrl.ExtensionConfig, value))
      if (Either.isLeft(decoded)) {
        yield* count("unmarshal_failure")
        yield* Effect.logWarning(`extension config not decodable, passed on as is: ${String(decoded.left)}`)
        return undefined
      }
      const config = decoded.right
      const name = String(config.name ?? "")
      const plan = planConversion(config)
      let converted: ProtoObject
      switch (plan.kind) {
        case "not-wasm":
          return undefined
        case "no-remote-load":
          yield* count("no_remote_load")
          return undefined
        case "missing-uri":
          yield* count("miss_remote_fetch_hint")
          yield* Effect.logWarning(
            `Wasm plugin ${name}: remote code without an HTTP URI; ${plan.failOpen ? "skipped (fail open)" : "denying all requests (fail closed)"}`,
          )
          converted = fetchFailureReplacement(config, plan.failOpen)
          break
        case "fetch": {
          const fetched = yield* Effect.either(fetcher.fetch(plan.request))
          if (Either.isRight(fetched)) {
            yield* count("success")
            yield* Effect.logDebug(`Wasm plugin ${name}: ${plan.request.url} loaded from ${fetched.right}`)
            converted = withLocalModule(config, fetched.right)
          } else {
            yield* count("fetch_failure")
            yield* Effect.logWarning(
              `Wasm plugin ${name}: cannot fetch ${plan.request.url}: ${fetched.left.reason}; ${plan.failOpen ? "skipped (fail open)" : "denying all requests (fail closed)"}`,
            )
            converted = fetchFailureReplacement(config, plan.failOpen)
          }
          break
        }
      }
      const encoded = Either.try(() => codec.encode(TypeUrl.ExtensionConfig, converted))
      if (Either.isLeft(encoded)) {
        yield* count("marshal_failure")
        yield* Effect.logWarning(`Wasm plugin ${name}: converted config not encodable: ${String(encoded.left)}`)
        return undefined
      }
      return encoded.right
    }).pipe(
      Effect.timed,
      Effect.tap(([elapsed]) => Effect.sync(() => conversionDuration.observe(Duration.toMillis(elapsed)))),
      Effect.map(([, bytes]) => bytes),
      withScope("wasm"),
    )

  /** Converts the `Any`s `anyOf` finds in each resource; the response re-encoded if one changed. */
  const convertResponse = <Res>(
    fetcher: WasmFetcherShape,
    bytes: Buffer,
    response: Record<string, unknown>,
    anyOf: (resource: Res) => RawAny | undefined,
    withAny: (resource: Res, any: RawAny) => Res,
  ) =>
    Effect.gen(function* () {
      const resources = (response.resources ?? []) as ReadonlyArray<Res>
      let changed = false
      const rewritten = yield* Effect.forEach(
        resources,
        (resource) => {
          const any = anyOf(resource)
          if (any?.type_url !== TypeUrl.ExtensionConfig || any.value === undefined) return Effect.succeed(resource)
          return Effect.map(convertExtensionConfig(fetcher, any.value), (value) => {
            if (value === undefined) return resource
            changed = true
            return withAny(resource, { ...any, value })
          })
        },
        { concurrency: "unbounded" },
      )
      if (!changed) return { _tag: "Forward", bytes, decoded: response } as const
      const encoded = Either.try(() => codec.encode(RESPONSE_TYPE[mode], { ...response, resources: rewritten }))
      if (Either.isLeft(encoded)) {
        yield* count("marshal_failure")
        yield* Effect.logWarning(`ECDS response not re-encodable, passed on as is: ${String(encoded.left)}`)
        return { _tag: "Forward", bytes, decoded: response } as const
      }
      return { _tag: "Forward", bytes: Buffer.from(encoded.right), decoded: response } as const
    }).pipe(withScope("wasm"))

  type DeltaResource = { readonly resource?: RawAny }

  /** Handles one upstream response; never fails (a defect passes the response on unchanged). */
  return (bytes: Buffer, nameTable: NameTableSubscription): Effect.Effect<HandledResponse> => {
    const sink = handling.nameTableSink
    const fetcher = handling.wasmFetcher
    if (sink === undefined && fetcher === undefined) return Effect.succeed({ _tag: "Forward", bytes })
    const typeUrl = responseTypeUrl(bytes)
    const interesting =
      (sink !== undefined && typeUrl === NAME_TABLE_TYPE_URL) ||
      (fetcher !== undefined && typeUrl === TypeUrl.ExtensionConfig)
    if (!interesting) return Effect.succeed({ _tag: "Forward", bytes })
    return Effect.gen(function* () {
      const response = decodeResponse(bytes)
      if (sink !== undefined && typeUrl === NAME_TABLE_TYPE_URL)
        return yield* consumeNameTable(sink, response, nameTable)
      if (mode === "sotw")
        return yield* convertResponse<RawAny>(
          fetcher!,
          bytes,
          response,
          (any) => any,
          (_, any) => any,
        )
      return yield* convertResponse<DeltaResource>(
        fetcher!,
        bytes,
        response,
        (resource) => resource.resource,
        (resource, any) => ({ ...resource, resource: any }),
      )
    }).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.logWarning(`upstream response not handled, passed on as is: ${String(defect)}`).pipe(
          withScope("xdsproxy"),
          Effect.as({ _tag: "Forward", bytes } as const),
        ),
      ),
    )
  }
}
