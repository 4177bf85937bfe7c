/** The prom-client registry behind the Metrics service. */
import { Effect, Layer } from "effect"
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client"
import { buildInfo } from "../services/build-info.js"
import { Metrics } from "../services/metrics/metrics.js"

export const makeMetrics = (component: string) => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const existing = (name: string) => registry.getSingleMetric(name)
  const service = Metrics.of({
    registry,
    counter: (name, help, labelNames = []) =>
      (existing(name) as Counter<never> | undefined) ??
      new Counter({ name, help, labelNames: [...labelNames], registers: [registry] }),
    gauge: (name, help, labelNames = []) =>
      (existing(name) as Gauge<never> | undefined) ??
      new Gauge({ name, help, labelNames: [...labelNames], registers: [registry] }),
    histogram: (name, help, labelNames = [], buckets) =>
      (existing(name) as Histogram<never> | undefined) ??
      new Histogram({
        name,
        help,
        labelNames: [...labelNames],
        registers: [registry],
        ...(buckets !== undefined ? { buckets: [...buckets] } : {}),
      }),
  })
  service
    .gauge("mesh_build", "Component build info", ["component", "tag"])
    .set({ component, tag: `${buildInfo.version}-${buildInfo.gitRevision.slice(0, 12)}` }, 1)
  return service
}

/** One registry per process, labelled with the component name in `mesh_build`. */
export const layer = (component: string): Layer.Layer<Metrics> =>
  Layer.effect(
    Metrics,
    Effect.sync(() => makeMetrics(component)),
  )
