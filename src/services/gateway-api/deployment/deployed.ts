/**
 * Which Gateways the deployment controller deploys, and how far along each is: shared by the
 * controller (which applies the objects and writes the status of waypoints) and the status
 * writer (which folds readiness into the status of the Gateways the conversion reconciles), so
 * both agree on the names they look for.
 */
import type { GatewayAddress } from "../../config-model/schemas/gateway-api/types.js"
import type { OrchService } from "../../orchestrator/objects.js"
import { isManaged, type ManagedKind, managedByNewerController, type ObjectNames, objectNames } from "./names.js"
import { type DeployedState, deployedState, type ObservedDeployment } from "./readiness.js"

export interface GatewayHeader {
  readonly namespace: string
  readonly name: string
  readonly annotations: Readonly<Record<string, string>>
  readonly className: string
  readonly addresses?: ReadonlyArray<GatewayAddress> | undefined
}

export interface DeployedGateway {
  readonly kind: ManagedKind
  readonly names: ObjectNames
}

/** What the controller deploys for this Gateway, or undefined when it deploys nothing. */
export const deploymentOf = (
  gateway: GatewayHeader,
  classes: ReadonlyMap<string, ManagedKind>,
): DeployedGateway | undefined => {
  const kind = classes.get(gateway.className)
  if (kind === undefined || !isManaged(gateway.addresses) || managedByNewerController(gateway.annotations))
    return undefined
  return { kind, names: objectNames(gateway, gateway.className, kind) }
}

export interface Observed {
  readonly deployment: (namespace: string, name: string) => ObservedDeployment | undefined
  readonly service: (namespace: string, name: string) => OrchService | undefined
}

/** `namespace/name` → readiness, for every Gateway the controller deploys. */
export const deployedStates = (
  gateways: ReadonlyArray<GatewayHeader>,
  classes: ReadonlyMap<string, ManagedKind>,
  observed: Observed,
): ReadonlyMap<string, DeployedState> => {
  const out = new Map<string, DeployedState>()
  for (const gateway of gateways) {
    const deployed = deploymentOf(gateway, classes)
    if (deployed === undefined) continue
    const name = deployed.names.deployment
    out.set(
      `${gateway.namespace}/${gateway.name}`,
      deployedState(name, observed.deployment(gateway.namespace, name), observed.service(gateway.namespace, name)),
    )
  }
  return out
}
