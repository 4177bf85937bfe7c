/**
 * Which GatewayClasses this controller reconciles: those whose `controllerName` is ours, and the
 * default class (PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME) when no GatewayClass object of that
 * name exists. The reference's control plane installs its default class itself (its GatewayClass
 * controller); here that class is taken to exist, owned by this controller, so Gateways naming it
 * work before (or without) the object being written.
 *
 * A class of the east-west controller (`mesh.io/eastwest-controller`; the built-in `mesh-east-west`
 * with AMBIENT_ENABLE_MULTI_NETWORK) is reconciled too, its listeners checked as east-west.ts says.
 *
 * A class of the unmanaged-gateway controller (`mesh.io/unmanaged-gateway`, the reference's
 * remote class) is accepted too, but its Gateways are remote to this cluster: they get a status
 * and nothing is generated for them (see remote-gateways.ts).
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { GatewayClassSpec } from "../config-model/schemas/gateway-api/types.js"
import { MESH_DOMAIN } from "../constants.js"
import { ConditionType, condition, Reason } from "./conditions.js"
import { EAST_WEST_CLASS_NAME, EAST_WEST_CONTROLLER_NAME } from "./deployment/names.js"
import { byAge, GatewayApiKind, type GatewayApiOptions, type ResourceStatus } from "./model.js"

/** The controller of remote Gateways (the reference's `istio.io/unmanaged-gateway`). */
export const UNMANAGED_GATEWAY_CONTROLLER = `${MESH_DOMAIN}/unmanaged-gateway`

export interface OwnedClasses {
  /** The names of the classes whose Gateways this controller reconciles. */
  readonly names: ReadonlySet<string>
  /** The classes of remote Gateways (unmanaged-gateway controller): status only. */
  readonly remoteNames: ReadonlySet<string>
  /** The east-west classes (among `names`): their listeners are checked as east-west.ts says. */
  readonly eastWestNames: ReadonlySet<string>
  readonly statuses: ReadonlyArray<ResourceStatus>
}

export const reconcileGatewayClasses = (
  classes: ReadonlyArray<ConfigResource<GatewayClassSpec>>,
  options: GatewayApiOptions,
): OwnedClasses => {
  const names = new Set<string>()
  const remoteNames = new Set<string>()
  const eastWestNames = new Set<string>()
  const statuses: Array<ResourceStatus> = []
  for (const gatewayClass of [...classes].sort(byAge)) {
    const controller = gatewayClass.spec.controllerName
    if (controller === UNMANAGED_GATEWAY_CONTROLLER) remoteNames.add(gatewayClass.meta.name)
    else if (controller === options.controllerName) names.add(gatewayClass.meta.name)
    else if (controller === EAST_WEST_CONTROLLER_NAME) {
      names.add(gatewayClass.meta.name)
      eastWestNames.add(gatewayClass.meta.name)
    } else continue
    const ctx = { generation: gatewayClass.meta.generation, now: options.now }
    statuses.push({
      kind: GatewayApiKind.GatewayClass,
      namespace: gatewayClass.meta.namespace,
      name: gatewayClass.meta.name,
      ...(gatewayClass.meta.generation !== undefined ? { generation: gatewayClass.meta.generation } : {}),
      status: {
        conditions: [condition(ctx, ConditionType.Accepted, true, Reason.Accepted, `Handled by ${controller}`)],
      },
    })
  }
  const builtIn = options.defaultClassName
  if (builtIn !== undefined && builtIn !== "" && !classes.some((c) => c.meta.name === builtIn)) names.add(builtIn)
  // With ambient multi-network the built-in east-west class exists as well.
  if (options.eastWestClass === true && !classes.some((c) => c.meta.name === EAST_WEST_CLASS_NAME)) {
    names.add(EAST_WEST_CLASS_NAME)
    eastWestNames.add(EAST_WEST_CLASS_NAME)
  }
  return { names, remoteNames, eastWestNames, statuses }
}
