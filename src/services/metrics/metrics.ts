/**
 * The Metrics service: one prom-client registry per process, with `mesh_build` and the
 * process/Node default metrics. Subsystems register their own instruments through it, so that
 * re-building a layer (tests, reloads) returns the instrument already registered under a name.
 */
import { Context } from "effect"
import type { Counter, Gauge, Histogram, Registry } from "prom-client"

export interface MetricsShape {
  readonly registry: Registry
  readonly counter: <L extends string = string>(name: string, help: string, labelNames?: ReadonlyArray<L>) => Counter<L>
  readonly gauge: <L extends string = string>(name: string, help: string, labelNames?: ReadonlyArray<L>) => Gauge<L>
  readonly histogram: <L extends string = string>(
    name: string,
    help: string,
    labelNames?: ReadonlyArray<L>,
    buckets?: ReadonlyArray<number>,
  ) => Histogram<L>
}

export class Metrics extends Context.Tag("mesh/Metrics")<Metrics, MetricsShape>() {}
