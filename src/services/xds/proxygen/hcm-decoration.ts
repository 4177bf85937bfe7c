/**
 * What Telemetry and WasmPlugin resources add to every HTTP connection manager of a proxy's
 * listeners: access logs and tracing (telemetry/), and the ECDS references of the Wasm filters
 * (ecds/), placed by phase around the authentication, authorization and router filters; and
 * to every TCP proxy: its access logs. The listener generators stay unaware of both: this step
 * rewrites their output lazily and folds what it adds into each spec's key.
 */
import type { ResourceSpec } from "../cache/resource-spec.js"
import type { Generated } from "../grpcgen/generator-notices.js"
import type { LocalSlot } from "../model/local-slot.js"
import { digest, type PushContext } from "../model/push-context.js"
import { typed, typedFields } from "../protocol/typed-any.js"
import type {
  AccessLog,
  FilterChain,
  HttpConnectionManager_Tracing,
  Listener,
  Listener_Filter,
} from "../protocol/xds-types.js"
import { placeWasmFilters, wasmFilterRefs } from "./ecds/index.js"
import type { ProxyView } from "./proxy-view.js"
import { telemetryForProxy } from "./telemetry/index.js"
import { TypedConfig, VIRTUAL_INBOUND_LISTENER } from "./well-known.js"

type Direction = "inbound" | "outbound" | "gateway"

interface Decoration {
  readonly accessLog: ReadonlyArray<AccessLog>
  readonly tcpAccessLog: ReadonlyArray<AccessLog>
  readonly tracing?: HttpConnectionManager_Tracing
  /** The Wasm filter references for a port (plugins may select ports). */
  readonly wasm: (port: number | undefined) => ReturnType<typeof wasmFilterRefs>
  readonly key: string
}

const decorateFilter = (filter: Listener_Filter, decoration: Decoration, port: number | undefined): Listener_Filter => {
  const hcm = typedFields(filter.typed_config, TypedConfig.httpConnectionManager)
  if (hcm !== undefined)
    return {
      ...filter,
      typed_config: typed(TypedConfig.httpConnectionManager, {
        ...hcm,
        ...(decoration.accessLog.length > 0 ? { access_log: decoration.accessLog } : {}),
        ...(decoration.tracing !== undefined ? { tracing: decoration.tracing } : {}),
        http_filters: placeWasmFilters(hcm.http_filters ?? [], decoration.wasm(port)),
      }),
    }
  const tcpProxy = typedFields(filter.typed_config, TypedConfig.tcpProxy)
  if (tcpProxy !== undefined && decoration.tcpAccessLog.length > 0)
    return {
      ...filter,
      typed_config: typed(TypedConfig.tcpProxy, { ...tcpProxy, access_log: decoration.tcpAccessLog }),
    }
  return filter
}

/** The port a chain serves: its destination_port match, else the listener's. */
const chainPort = (chain: FilterChain, listenerPort: number | undefined): number | undefined =>
  chain.filter_chain_match?.destination_port?.value ?? listenerPort

const decorateChain = (chain: FilterChain, decoration: Decoration, listenerPort: number | undefined): FilterChain => {
  const port = chainPort(chain, listenerPort)
  return { ...chain, filters: (chain.filters ?? []).map((f) => decorateFilter(f, decoration, port)) }
}

const listenerPort = (listener: Listener): number | undefined => listener.address?.socket_address?.port_value

const decorateListener = (listener: Listener, decoration: Decoration): Listener => {
  // The virtual listeners' own port says nothing of the traffic their chains serve.
  const port = listener.name === VIRTUAL_INBOUND_LISTENER ? undefined : listenerPort(listener)
  return {
    ...listener,
    ...(listener.filter_chains !== undefined
      ? {
          filter_chains: listener.filter_chains.map((c) => decorateChain(c, decoration, port)),
        }
      : {}),
    ...(listener.default_filter_chain !== undefined
      ? { default_filter_chain: decorateChain(listener.default_filter_chain, decoration, port) }
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
export const decorateListeners = (
  push: PushContext,
  proxy: ProxyView,
  generated: Generated<Listener>,
): Generated<Listener> => {
  const byDirection = new Map<Direction, ReturnType<typeof decorationOf>>()
  const of = (direction: Direction) => {
    let d = byDirection.get(direction)
    if (d === undefined) {
      d = decorationOf(push, proxy, direction)
      byDirection.set(direction, d)
    }
    return d
  }
  const resources = generated.resources.map((spec): ResourceSpec<Listener> => {
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
