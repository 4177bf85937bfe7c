/**
 * NACKs: counted in `pilot_total_xds_rejects{type}`, logged, and shown per connection in the
 * `pilot_xds_*_reject{node,err}` gauges. As in the reference, `node` names the proxy (the
 * `pod.namespace` part of its id) and `err` is the NACK's status code name, never its message
 * (logged, and shown in `/debug/syncz`). A plaintext caller chooses its node id, so the label is
 * cut short, a connection holds one series per type (its latest NACK's), and its series go when
 * it disconnects: the series are bounded by the open streams, not by every node id ever seen.
 * The log line is throttled per type (a first line, then a "suppressed N" summary every 10 s):
 * a caller can NACK as often as it writes, and a bad push NACKed by every proxy is one story.
 */
import { Effect } from "effect"
import { callerText } from "../../services/logging/log-text.js"
import { throttled } from "../../services/logging/logging.js"
import type { ProxyInfo } from "../../services/xds/cache/responder.js"
import { nodeName } from "../../services/xds/protocol/node-id.js"
import { boundedLabel, nackCodeLabel, quoted, typeLabel } from "../../services/xds/protocol/request-limits.js"
import type { XdsMetrics } from "./xds-metrics.js"

export interface NackSeries {
  /** Counts, logs and shows a connection's NACK of `typeUrl` (its message cut short already). */
  readonly record: (
    connectionId: string,
    proxy: ProxyInfo | undefined,
    typeUrl: string,
    error: string,
    code: number | undefined,
  ) => Effect.Effect<void>
  /** Drops the series of a closed connection. */
  readonly forget: (connectionId: string) => void
}

export const makeNackSeries = (metrics: Pick<XdsMetrics, "totalRejects" | "rejects">): NackSeries => {
  const series = new Map<string, Map<string, { readonly node: string; readonly err: string }>>()
  return {
    record: (connectionId, proxy, typeUrl, error, code) =>
      Effect.suspend(() => {
        const type = typeLabel(typeUrl)
        metrics.totalRejects.inc({ type })
        const gauge = metrics.rejects[type]
        if (gauge !== undefined) {
          const labels = { node: boundedLabel(nodeName(proxy?.id ?? "")), err: nackCodeLabel(code) }
          let ofConnection = series.get(connectionId)
          if (ofConnection === undefined) {
            ofConnection = new Map()
            series.set(connectionId, ofConnection)
          }
          const before = ofConnection.get(type)
          if (before !== undefined && (before.node !== labels.node || before.err !== labels.err)) gauge.remove(before)
          ofConnection.set(type, labels)
          gauge.set(labels, 1)
        }
        return Effect.logWarning(
          `${type.toUpperCase()}: ACK ERROR ${quoted(proxy?.id ?? "")} ${callerText(error)}`,
        ).pipe(throttled(`NACK of ${type}`))
      }),
    forget: (connectionId) => {
      const ofConnection = series.get(connectionId)
      if (ofConnection === undefined) return
      series.delete(connectionId)
      for (const [type, labels] of ofConnection) metrics.rejects[type]?.remove(labels)
    },
  }
}
