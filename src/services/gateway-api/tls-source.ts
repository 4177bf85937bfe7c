/**
 * The Secrets and ConfigMaps Gateway listeners may reference (certificates, CA bundles,
 * `infrastructure.parametersRef`), as they change, for the push pipeline: a listener whose
 * certificate is missing or malformed must not be served. `undefined` until the objects are
 * known (informers not synced, or not readable): checking against an incomplete list would drop
 * sound listeners at start-up, so nothing is checked then. Implemented in
 * layers/gateway-api/tls-source.ts.
 *
 * `referencedTlsObjects` narrows the whole set to what the Gateways reference, keeping each
 * object as it was, so a change to an unrelated Secret leaves the conversion's input the same.
 */
import { Context, type Stream } from "effect"
import type { ConfigResource } from "../config-model/resource.js"
import type { KubernetesGatewaySpec } from "../config-model/schemas/gateway-api/types.js"
import type { TlsObjects } from "./tls-objects.js"

export class GatewayTlsObjects extends Context.Tag("mesh/GatewayTlsObjects")<
  GatewayTlsObjects,
  { readonly changes: Stream.Stream<TlsObjects | undefined> }
>() {}

/** What names Secrets and ConfigMaps: a Gateway, or a ListenerSet (listeners, no parameters). */
export type ListenerOwner = ConfigResource<
  Pick<KubernetesGatewaySpec, "infrastructure"> & {
    readonly listeners: ReadonlyArray<Pick<KubernetesGatewaySpec["listeners"][number], "tls">>
  }
>

/** The `namespace/name` of the Secrets and of the ConfigMaps the Gateways' (and ListenerSets') listeners and parameters name. */
export const referencedKeys = (
  gateways: ReadonlyArray<ListenerOwner>,
): { readonly secrets: ReadonlySet<string>; readonly configMaps: ReadonlySet<string> } => {
  const secrets = new Set<string>()
  const configMaps = new Set<string>()
  for (const gateway of gateways) {
    const ns = gateway.meta.namespace
    const params = gateway.spec.infrastructure?.parametersRef
    if (params !== undefined && params.kind === "ConfigMap") configMaps.add(`${ns}/${params.name}`)
    for (const listener of gateway.spec.listeners) {
      const refs = [
        ...(listener.tls?.certificateRefs ?? []),
        ...(listener.tls?.frontendValidation?.caCertificateRefs ?? []),
      ]
      for (const ref of refs) {
        const key = `${ref.namespace ?? ns}/${ref.name}`
        if (ref.kind === "ConfigMap") configMaps.add(key)
        else secrets.add(key)
      }
    }
  }
  return { secrets, configMaps }
}

const pick = <V>(all: ReadonlyMap<string, V>, keys: ReadonlySet<string>): ReadonlyMap<string, V> => {
  const out = new Map<string, V>()
  for (const key of [...keys].sort()) {
    const value = all.get(key)
    if (value !== undefined) out.set(key, value)
  }
  return out
}

/** The objects of `all` the Gateways reference (absent ones stay absent: they do not exist). */
export const referencedTlsObjects = (gateways: ReadonlyArray<ListenerOwner>, all: TlsObjects): TlsObjects => {
  const keys = referencedKeys(gateways)
  return { secrets: pick(all.secrets, keys.secrets), configMaps: pick(all.configMaps, keys.configMaps) }
}

const sameEntries = <V>(a: ReadonlyMap<string, V>, b: ReadonlyMap<string, V>): boolean => {
  if (a.size !== b.size) return false
  for (const [key, value] of a) if (b.get(key) !== value) return false
  return true
}

/** Same keys holding the same objects (by identity: an informer keeps an unchanged object). */
export const sameTlsObjects = (a: TlsObjects | undefined, b: TlsObjects | undefined): boolean =>
  a === b ||
  (a !== undefined && b !== undefined && sameEntries(a.secrets, b.secrets) && sameEntries(a.configMaps, b.configMaps))
