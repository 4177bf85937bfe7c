/**
 * The Telemetry resources applying to a proxy, least specific first, as the reference selects
 * them: the root namespace's namespace-wide Telemetry (mesh-wide), the proxy namespace's
 * namespace-wide one, and the first Telemetry of the proxy's namespace whose selector (or
 * Gateway target) matches the proxy. At each level the oldest wins; the others are reported.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { TelemetrySpec } from "../../../config-model/schemas/telemetry.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { hasWorkloadTarget, policyAttaches } from "./policy-target.js"

export type TelemetryResource = ConfigResource<TelemetrySpec>

export interface SelectedTelemetries {
  /** Root, then namespace, then workload: later entries override earlier ones. */
  readonly telemetries: ReadonlyArray<TelemetryResource>
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

const name = (t: TelemetryResource): string => `${t.meta.namespace}/${t.meta.name}`

const namespaceWide = (
  telemetries: ReadonlyArray<TelemetryResource>,
  namespace: string,
  warnings: Array<GeneratorNotice>,
): TelemetryResource | undefined => {
  const wide = telemetries.filter((t) => t.meta.namespace === namespace && !hasWorkloadTarget(t.spec))
  const [first, ...ignored] = wide
  for (const t of ignored)
    warnings.push({
      level: "warning",
      scope: "model",
      message: `Telemetry ${name(t)}: ignored: namespace ${namespace} already has the namespace-wide Telemetry ${first === undefined ? "" : name(first)} (the oldest applies)`,
    })
  return first
}

/** The Telemetries applying to `proxy` (push.proxyConfig.telemetries is oldest first). */
export const selectTelemetries = (push: PushContext, proxy: ProxyView): SelectedTelemetries => {
  const all = push.proxyConfig.telemetries
  const warnings: Array<GeneratorNotice> = []
  const root = push.options.rootNamespace
  const out: Array<TelemetryResource> = []
  const rootWide = root === "" ? undefined : namespaceWide(all, root, warnings)
  if (rootWide !== undefined) out.push(rootWide)
  if (proxy.namespace !== root) {
    const nsWide = namespaceWide(all, proxy.namespace, warnings)
    if (nsWide !== undefined) out.push(nsWide)
  }
  const workload = all.find(
    (t) =>
      t.meta.namespace === proxy.namespace &&
      hasWorkloadTarget(t.spec) &&
      policyAttaches(t.spec, t.meta.namespace, proxy),
  )
  if (workload !== undefined) out.push(workload)
  return { telemetries: out, warnings }
}
