/**
 * The inbound listener's TLS and HTTP inspectors, each run only on the destination ports where
 * some filter chain matches on what it tells (`transport_protocol: tls`; a sniffed plaintext HTTP
 * ALPN), as the reference mesh derives them. This is behaviour, not an optimisation: where no
 * chain asks for TLS the connection's transport stays `raw_buffer`, so TLS on a DISABLE port
 * reaches the port's plaintext chain (passed through by a TCP proxy, refused by the HTTP codec)
 * instead of finding no chain; and a port whose protocol is declared is never sniffed.
 */
import { type TypedUrl, typed } from "../../protocol/typed-any.js"
import type { FilterChain, ListenerFilter, ListenerFilterChainMatchPredicate } from "../../protocol/xds-types.js"
import { Filter, TypedConfig } from "../well-known.js"

/** The plaintext HTTP the HTTP inspector reports. */
const SNIFFED_HTTP = new Set(["http/1.0", "http/1.1", "h2c"])

interface Needs {
  tls: boolean
  http: boolean
}

/** The destination ports of `ports` as `filter_disabled` port ranges (adjacent ports merged). */
const portPredicate = (ports: ReadonlyArray<number>): ListenerFilterChainMatchPredicate => {
  const ranges: Array<{ start: number; end: number }> = []
  for (const port of [...ports].sort((a, b) => a - b)) {
    const last = ranges[ranges.length - 1]
    if (last !== undefined && last.end === port) last.end = port + 1
    else ranges.push({ start: port, end: port + 1 })
  }
  const rules = ranges.map((r) => ({ destination_port_range: r }))
  return rules.length === 1 ? rules[0]! : { or_match: { rules } }
}

/**
 * The inspector filter for a need, or none when no chain has it. When the catch-all chains
 * (no destination port, key 0) need it, it runs everywhere but on the ports that do not;
 * otherwise only on the ports that do.
 */
const inspector = (
  name: string,
  type: TypedUrl,
  byPort: ReadonlyMap<number, Needs>,
  need: (n: Needs) => boolean,
): ListenerFilter | undefined => {
  const ports = [...byPort].filter(([port]) => port !== 0)
  const catchAll = byPort.get(0)
  const everywhere = catchAll !== undefined && need(catchAll)
  if (!everywhere && !ports.some(([, n]) => need(n))) return undefined
  const listed = ports.filter(([, n]) => need(n) !== everywhere).map(([port]) => port)
  const filter: ListenerFilter = { name, typed_config: typed(type, {}) }
  if (listed.length === 0) return filter
  const predicate = portPredicate(listed)
  return { ...filter, filter_disabled: everywhere ? predicate : { not_match: predicate } }
}

/** The inspectors the chains need, TLS first (the HTTP inspector leaves TLS connections alone). */
export const inspectorFilters = (chains: ReadonlyArray<FilterChain>): ReadonlyArray<ListenerFilter> => {
  const byPort = new Map<number, Needs>()
  for (const c of chains) {
    const match = (c.filter_chain_match ?? {}) as {
      destination_port?: { value?: number }
      transport_protocol?: string
      application_protocols?: ReadonlyArray<string>
    }
    const port = match.destination_port?.value ?? 0
    const needs = byPort.get(port) ?? { tls: false, http: false }
    needs.tls ||= match.transport_protocol === "tls"
    needs.http ||= (match.application_protocols ?? []).some((p) => SNIFFED_HTTP.has(p))
    byPort.set(port, needs)
  }
  return [
    inspector(Filter.tlsInspector, TypedConfig.tlsInspector, byPort, (n) => n.tls),
    inspector(Filter.httpInspector, TypedConfig.httpInspector, byPort, (n) => n.http),
  ].filter((f): f is ListenerFilter => f !== undefined)
}
