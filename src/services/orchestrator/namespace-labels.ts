/**
 * The labels of the cluster's namespaces, as they change: what Gateway listeners'
 * `allowedRoutes.namespaces.selector` selects on. Implemented in
 * layers/orchestrator/namespace-labels.ts.
 */
import { Context, type Stream } from "effect"

export type NamespaceLabelMap = ReadonlyMap<string, Readonly<Record<string, string>>>

export class NamespaceLabels extends Context.Tag("mesh/NamespaceLabels")<
  NamespaceLabels,
  { readonly changes: Stream.Stream<NamespaceLabelMap> }
>() {}
