/**
 * The WasmPlugins applying to a proxy, as the reference selects and orders them: those of the
 * root namespace, then those of the proxy's namespace, whose selector (or Gateway target)
 * matches the proxy; for a listener, those whose `match` covers its direction and port; within
 * a phase, by `priority`, highest first (unset last), then oldest first.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { WasmPluginSpec } from "../../../config-model/schemas/wasm-plugin.js"
import type { PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { policyAttaches } from "../telemetry/policy-target.js"

export type WasmPluginResource = ConfigResource<WasmPluginSpec>
export type WasmPhase = WasmPluginSpec["phase"]
export type ListenerDirection = "inbound" | "outbound" | "gateway"

/** The listener a plugin is selected for: its direction and, when known, its port. */
export interface WasmListener {
  readonly direction: ListenerDirection
  readonly port?: number
}

/** The phases in the order their filters appear in an HTTP filter chain. */
export const PHASES: ReadonlyArray<WasmPhase> = ["AUTHN", "AUTHZ", "STATS", "UNSPECIFIED_PHASE"]

/** The plugin's phase (unset counts as UNSPECIFIED_PHASE, as the schema's default). */
export const phaseOf = (spec: WasmPluginSpec): WasmPhase => spec.phase ?? "UNSPECIFIED_PHASE"

const isHttp = (spec: WasmPluginSpec): boolean => spec.type === undefined || spec.type !== "NETWORK"

/**
 * Whether a traffic selector's mode covers a listener: gateways match both CLIENT and SERVER
 * (the reference's rule for WasmPlugins, unlike the Telemetry API's).
 */
const modeMatches = (mode: string | undefined, direction: ListenerDirection): boolean => {
  if (mode === undefined || mode === "UNDEFINED" || mode === "CLIENT_AND_SERVER" || direction === "gateway") return true
  return mode === (direction === "inbound" ? "SERVER" : "CLIENT")
}

/**
 * Whether the plugin's `match` covers the listener. A port-restricted selector needs the port:
 * without it (a listener serving many ports) the selector does not match.
 */
export const matchesListener = (spec: WasmPluginSpec, listener: WasmListener): boolean => {
  const selectors = spec.match ?? []
  if (selectors.length === 0) return true
  return selectors.some(
    (s) =>
      modeMatches(s.mode, listener.direction) &&
      ((s.ports ?? []).length === 0 ||
        (listener.port !== undefined && (s.ports ?? []).some((p) => p.number === listener.port))),
  )
}

const priorityOf = (plugin: WasmPluginResource): number => plugin.spec.priority ?? Number.MIN_SAFE_INTEGER

/**
 * The HTTP WasmPlugins applying to `proxy` (of one `phase` when given, covering `listener` when
 * given), in filter order: by phase, then priority.
 */
export const wasmPluginsForProxy = (
  push: PushContext,
  proxy: ProxyView,
  phase?: WasmPhase,
  listener?: WasmListener,
): ReadonlyArray<WasmPluginResource> => {
  const root = push.options.rootNamespace
  const all = push.proxyConfig.wasmPlugins
  const candidates = [
    ...all.filter((p) => p.meta.namespace === root),
    ...(proxy.namespace !== root ? all.filter((p) => p.meta.namespace === proxy.namespace) : []),
  ]
  const applying = candidates.filter(
    (p) =>
      isHttp(p.spec) &&
      (phase === undefined || phaseOf(p.spec) === phase) &&
      policyAttaches(p.spec, p.meta.namespace, proxy) &&
      (listener === undefined || matchesListener(p.spec, listener)),
  )
  // Array sort is stable: equal priorities keep the root-then-namespace, oldest-first order.
  return PHASES.flatMap((ph) =>
    applying.filter((p) => phaseOf(p.spec) === ph).sort((a, b) => priorityOf(b) - priorityOf(a)),
  )
}

/** The NETWORK WasmPlugins that would apply to `proxy` (reported: only HTTP plugins are served). */
export const networkPluginsForProxy = (push: PushContext, proxy: ProxyView): ReadonlyArray<WasmPluginResource> => {
  const root = push.options.rootNamespace
  return push.proxyConfig.wasmPlugins.filter(
    (p) =>
      !isHttp(p.spec) &&
      (p.meta.namespace === root || p.meta.namespace === proxy.namespace) &&
      policyAttaches(p.spec, p.meta.namespace, proxy),
  )
}
