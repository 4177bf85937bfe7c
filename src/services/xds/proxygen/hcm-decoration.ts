/**
 * What Telemetry and WasmPlugin resources add to every HTTP connection manager of a proxy's
 * listeners: access logs and tracing (telemetry/), and the ECDS references of the Wasm filters
 * (ecds/), placed by phase around the authentication, authorization and router filters; and
 * to every TCP proxy: its access logs. The listener generators stay unaware of both: this step
 * rewrites their output lazily and folds what it adds into each spec's key.
 */
import type { ProtoObject, ResourceSpec } from "../cache/resource-spec.js"
import type { Generated } from "../grpcgen/generator-notices.js"
import type { LocalSlot } from "../model/local-slot.js"
import { digest, type PushContext } from "../model/push-context.js"
import { placeWasmFilters, wasmFilterRefs } from "./ecds/index.js"
import type { ProxyView } from "./proxy-view.js"
import { telemetryForProxy } from "./telemetry/index.js"
import { TypedConfig, VIRTUAL_INBOUND_LISTENER } from "./well-known.js"

type Direction = "inbound" | "outbound" | "gateway"

interface Decoration {
  readonly accessLog: ReadonlyArray<ProtoObject>
  readonly tcpAccessLog: ReadonlyArray<ProtoObject>
  readonly tracing?: ProtoObject
  /** The Wasm filter references for a port (plugins may select ports). */
  readonly wasm: (port: number | undefined) => ReturnType<typeof wasmFilterRefs>
  readonly key: string
}

const typeOf = (filter: ProtoObject): unknown => (filter.typed_config as ProtoObject | undefined)?.["@type"]
const isHcm = (filter: ProtoObject): boolean => typeOf(filter) === TypedConfig.httpConnectionManager
const isTcpProxy = (filter: ProtoObject): boolean => typeOf(filter) === TypedConfig.tcpProxy

const decorateTcpProxy = (filter: ProtoObject, decoration: Decoration): ProtoObject =>
  decoration.tcpAccessLog.length === 0
    ? filter
    : { ...filter, typed_config: { ...(filter.typed_config as ProtoObject), access_log: decoration.tcpAccessLog } }

const decorateHcm = (hcmFilter: ProtoObject, decoration: Decoration, port: number | undefined): ProtoObject => {
  const hcm = hcmFilter.typed_config as ProtoObject
  return {
    ...hcmFilter,
    typed_config: {
      ...hcm,
      ...(decoration.accessLog.length > 0 ? { access_log: decoration.accessLog } : {}),
      ...(decoration.tracing !== undefined ? { tracing: decoration.tracing } : {}),
      http_filters: placeWasmFilters(
        (hcm.http_filters as ReadonlyArray<ProtoObject> | undefined) ?? [],
        decoration.wasm(port),
      ),
    },
  }
}

/** The port a chain serves: its destination_port match, else the listener's. */
const chainPort = (chain: ProtoObject, listenerPort: number | undefined): number | undefined => {
  const match = chain.filter_chain_match as ProtoObject | undefined
  const port = match?.destination_port as { readonly value?: number } | number | undefined
  const value = typeof port === "number" ? port : port?.value
  return value ?? listenerPort
}

const decorateChain = (chain: ProtoObject, decoration: Decoration, listenerPort: number | undefined): ProtoObject => {
  const port = chainPort(chain, listenerPort)
  return {
    ...chain,
    filters: ((chain.filters as ReadonlyArray<ProtoObject> | undefined) ?? []).map((f) =>
      isHcm(f) ? decorateHcm(f, decoration, port) : isTcpProxy(f) ? decorateTcpProxy(f, decoration) : f,
    ),
  }
}

const listenerPort = (listener: ProtoObject): number | undefined => {
  const address = (listener.address as ProtoObject | undefined)?.socket_address as ProtoObject | undefined
  return typeof address?.port_value === "number" ? address.port_value : undefined
}

const decorateListener = (listener: ProtoObject, decoration: Decoration): ProtoObject => {
  // The virtual listeners' own port says nothing of the traffic their chains serve.
  const port = listener.name === VIRTUAL_INBOUND_LISTENER ? undefined : listenerPort(listener)
  return {
    ...listener,
    ...(listener.filter_chains !== undefined
      ? {
          filter_chains: (listener.filter_chains as ReadonlyArray<ProtoObject>).map((c) =>
            decorateChain(c, decoration, port),
          ),
        }
      : {}),
    ...(listener.default_filter_chain !== undefined
      ? { default_filter_chain: decorateChain(listener.default_filter_chain as ProtoObject, decoration, port) }
      : {}),
  }
}

/** What the WasmPlugins of a push may add anywhere: empty without any (the common case). */
const wasmKeys: LocalSlot<string, PushContext> = {
  make: (push) => {
    const plugins = push.proxyConfig.wasmPlugins
    return plugins.length === 0
      ? ""
      : digest(JSON.stringify(plugins.map((p) => [p.meta.namespace, p.meta.name, p.spec])))
  },
}
const wasmKeyOf = (push: PushContext): string => push.local(wasmKeys)

const decorationOf = (push: PushContext, proxy: ProxyView, direction: Direction) => {
  const telemetry = telemetryForProxy(push, proxy, direction)
  const wasmKey = wasmKeyOf(push)
  const decoration: Decoration = {
    accessLog: telemetry.accessLog,
    tcpAccessLog: telemetry.tcpAccessLog,
    ...(telemetry.tracing !== undefined ? { tracing: telemetry.tracing } : {}),
    wasm: (port) => (wasmKey === "" ? [] : wasmFilterRefs(push, proxy, direction, port)),
    key: wasmKey === "" ? telemetry.key : `${telemetry.key}|w:${wasmKey}`,
  }
  return {
    decoration,
    warnings: telemetry.warnings,
    empty:
      telemetry.accessLog.length === 0 &&
      telemetry.tcpAccessLog.length === 0 &&
      telemetry.tracing === undefined &&
      wasmKey === "",
  }
}

/** The listeners with every HTTP connection manager decorated for the proxy. */
export const decorateListeners = (push: PushContext, proxy: ProxyView, generated: Generated): Generated => {
  const byDirection = new Map<Direction, ReturnType<typeof decorationOf>>()
  const of = (direction: Direction) => {
    let d = byDirection.get(direction)
    if (d === undefined) {
      d = decorationOf(push, proxy, direction)
      byDirection.set(direction, d)
    }
    return d
  }
  const resources = generated.resources.map((spec): ResourceSpec => {
    const direction: Direction =
      proxy.kind === "router" ? "gateway" : spec.name === VIRTUAL_INBOUND_LISTENER ? "inbound" : "outbound"
    const { decoration, empty } = of(direction)
    if (empty) return spec
    return {
      name: spec.name,
      key: `${spec.key}|t:${decoration.key}`,
      build: () => decorateListener(spec.build(), decoration),
    }
  })
  const warnings = [...generated.warnings, ...[...byDirection.values()].flatMap((d) => d.warnings)]
  return { resources, warnings }
}
