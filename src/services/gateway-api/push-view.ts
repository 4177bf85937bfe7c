/**
 * The Gateway-API resources as the push pipeline serves them: converted (convert.ts) to mesh
 * Gateways and VirtualServices that join the user's own. The conversion runs again only when one
 * of its inputs changed: the config snapshot hands unchanged kinds over as the same arrays, and
 * the registry its unchanged services, so an endpoint change costs an identity check. The
 * cluster's Secrets and ConfigMaps (when known) are narrowed to those the Gateways reference, so
 * an unrelated Secret's change costs a look-up per reference.
 */
import { Context } from "effect"
import type { ConfigResource } from "../config-model/resource.js"
import type { DestinationRuleSpec } from "../config-model/schemas/destination-rule.js"
import type { GatewaySpec } from "../config-model/schemas/gateway.js"
import type { VirtualServiceSpec } from "../config-model/schemas/virtual-service.js"
import { GATEWAY_CONTROLLER_NAME } from "../constants.js"
import type { Service } from "../registry/model.js"
import { convertGatewayApi, type GatewayApiInput } from "./convert.js"
import { shadowRegistryService } from "./inference-pools.js"
import { DEFAULT_GATEWAY_CLASS_NAME } from "./model.js"
import { withPolicyTlsObjects } from "./policy-targets.js"
import type { TlsObjects } from "./tls-objects.js"
import { referencedTlsObjects, sameTlsObjects } from "./tls-source.js"

/** `PILOT_ENABLE_GATEWAY_API`, `PILOT_GATEWAY_API_CONTROLLER_NAME`, `PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME`, `--domain`. */
export interface GatewayApiSettingsShape {
  readonly enabled: boolean
  readonly controllerName: string
  readonly defaultClassName: string
  readonly domainSuffix: string
  /** `AMBIENT_ENABLE_MULTI_NETWORK`: the built-in east-west class exists too. */
  readonly eastWestClass?: boolean
  /** `ENABLE_GATEWAY_API_INFERENCE_EXTENSION`: InferencePool backends are served. */
  readonly inferenceExtension?: boolean
}

export class GatewayApiSettings extends Context.Tag("mesh/GatewayApiSettings")<
  GatewayApiSettings,
  GatewayApiSettingsShape
>() {}

/** The reference's defaults: on, its controller name, the `mesh` class. */
export const defaultGatewayApiSettings: GatewayApiSettingsShape = {
  enabled: true,
  controllerName: GATEWAY_CONTROLLER_NAME,
  defaultClassName: DEFAULT_GATEWAY_CLASS_NAME,
  domainSuffix: "cluster.local",
}

/** What the push pipeline adds: the mesh resources the Gateway-API resources stand for. */
export interface GatewayApiResources {
  readonly gateways: ReadonlyArray<ConfigResource<GatewaySpec>>
  readonly virtualServices: ReadonlyArray<ConfigResource<VirtualServiceSpec>>
  /** From BackendTLSPolicy and XBackendTrafficPolicy. */
  readonly destinationRules: ReadonlyArray<ConfigResource<DestinationRuleSpec>>
  /** InferencePools' shadow Services the registry does not have (file mode): served as services too. */
  readonly services: ReadonlyArray<Service>
}

const NONE: GatewayApiResources = { gateways: [], virtualServices: [], destinationRules: [], services: [] }

type Lists = Omit<GatewayApiInput, "services" | "namespaceLabels" | "tlsObjects">

const sameInputs = (a: GatewayApiInput, b: GatewayApiInput): boolean =>
  Object.keys(a).length === Object.keys(b).length &&
  (Object.keys(a) as Array<keyof GatewayApiInput>).every((key) => a[key] === b[key])

/**
 * The shadow Service of each InferencePool the registry lacks: without an orchestrator (file
 * mode) nothing writes them, so the pools' routes would have no service to go to.
 */
const missingShadowServices = (
  lists: Lists,
  services: ReadonlyArray<Service>,
  settings: GatewayApiSettingsShape,
): ReadonlyArray<Service> => {
  const pools = lists.inferencePools ?? []
  if (pools.length === 0) return []
  const known = new Set(services.map((s) => s.hostname))
  return pools
    .map((pool) => shadowRegistryService(pool, settings.domainSuffix))
    .filter((shadow) => !known.has(shadow.hostname))
}

/** A converter remembering its last input and output (one per push pipeline). */
export const makeGatewayApiView = (settings: GatewayApiSettingsShape) => {
  let last: { readonly input: GatewayApiInput; readonly output: GatewayApiResources } | undefined
  return (
    lists: Lists,
    services: ReadonlyArray<Service>,
    namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
    allTlsObjects?: TlsObjects,
  ): GatewayApiResources => {
    if (!settings.enabled) return NONE
    // Only the objects the Gateways name, kept as the same object while those are unchanged.
    const picked =
      allTlsObjects === undefined
        ? undefined
        : withPolicyTlsObjects(
            referencedTlsObjects([...lists.gateways, ...(lists.listenerSets ?? [])], allTlsObjects),
            lists.backendTlsPolicies ?? [],
            allTlsObjects,
          )
    const tlsObjects =
      last !== undefined && sameTlsObjects(last.input.tlsObjects, picked) ? last.input.tlsObjects : picked
    const shadows = settings.inferenceExtension === true ? missingShadowServices(lists, services, settings) : []
    const input: GatewayApiInput = {
      ...lists,
      services: shadows.length === 0 ? services : [...services, ...shadows],
      namespaceLabels,
      ...(tlsObjects !== undefined ? { tlsObjects } : {}),
    }
    if (last !== undefined && sameInputs(last.input, input)) return last.output
    // Nothing to convert: no Gateway-API objects at all (the common case without the CRDs).
    const empty = Object.values(lists).every((list) => list === undefined || list.length === 0)
    const converted = empty
      ? NONE
      : convertGatewayApi(input, {
          controllerName: settings.controllerName,
          defaultClassName: settings.defaultClassName,
          domainSuffix: settings.domainSuffix,
          ...(settings.eastWestClass === true ? { eastWestClass: true } : {}),
          ...(settings.inferenceExtension === true ? { inferenceExtension: true } : {}),
          // Statuses are the status writer's; the served resources do not depend on the time.
          now: new Date(0).toISOString(),
        })
    const output = {
      gateways: converted.gateways,
      virtualServices: converted.virtualServices,
      destinationRules: converted.destinationRules,
      services: shadows,
    }
    last = { input, output }
    return output
  }
}
