/**
 * Ingress support as the push inputs see it: the mesh config's ingress settings, the served
 * Ingresses and IngressClasses and the registry's services in, the generated Gateways and
 * VirtualServices out. The conversion is redone only when one of those is a new object, so an
 * endpoint change (a new registry snapshot with the same service list) costs nothing.
 */
import { Context } from "effect"
import type { ConfigResource } from "../config-model/resource.js"
import type { GatewaySpec } from "../config-model/schemas/gateway.js"
import type { VirtualServiceSpec } from "../config-model/schemas/virtual-service.js"
import type { MeshConfig } from "../mesh-config/mesh-config.js"
import type { Service } from "../registry/model.js"
import { convertIngresses } from "./convert.js"
import type { Ingress, IngressClass, IngressSettings } from "./model.js"

export interface IngressPushSettingsShape {
  /** The control plane's namespace (`--namespace`): where the Gateways go. */
  readonly systemNamespace: string
  /** `--domain`. */
  readonly domainSuffix: string
}

/** Where the generated Gateways live and the services' domain; absent: `mesh-system`, `cluster.local`. */
export class IngressPushSettings extends Context.Tag("mesh/IngressPushSettings")<
  IngressPushSettings,
  IngressPushSettingsShape
>() {}

export const defaultIngressPushSettings: IngressPushSettingsShape = {
  systemNamespace: "mesh-system",
  domainSuffix: "cluster.local",
}

export interface IngressResources {
  readonly gateways: ReadonlyArray<ConfigResource<GatewaySpec>>
  readonly virtualServices: ReadonlyArray<ConfigResource<VirtualServiceSpec>>
  /** What was left out and why: the lines not reported by the previous conversion. */
  readonly notes: ReadonlyArray<string>
}

const NONE: IngressResources = { gateways: [], virtualServices: [], notes: [] }

/** The ingress settings of a mesh config. */
export const ingressSettingsOf = (
  mesh: Pick<MeshConfig, "ingressClass" | "ingressControllerMode" | "ingressService">,
): IngressSettings => ({
  ingressClass: mesh.ingressClass,
  ingressControllerMode: mesh.ingressControllerMode,
  ingressService: mesh.ingressService,
})

/** A memoising view: the same inputs (by identity) give the same output object. */
export const makeIngressView = (settings: IngressPushSettingsShape) => {
  let last:
    | {
        readonly ingresses: ReadonlyArray<Ingress>
        readonly classes: ReadonlyArray<IngressClass>
        readonly services: ReadonlyArray<Service>
        readonly mesh: IngressSettings
        readonly out: IngressResources
      }
    | undefined
  let reported: ReadonlySet<string> = new Set()
  return (
    ingresses: ReadonlyArray<Ingress>,
    classes: ReadonlyArray<IngressClass>,
    services: ReadonlyArray<Service>,
    mesh: IngressSettings,
  ): IngressResources => {
    if (ingresses.length === 0 || mesh.ingressControllerMode === "OFF") return NONE
    if (
      last !== undefined &&
      last.ingresses === ingresses &&
      last.classes === classes &&
      last.services === services &&
      last.mesh.ingressClass === mesh.ingressClass &&
      last.mesh.ingressControllerMode === mesh.ingressControllerMode &&
      last.mesh.ingressService === mesh.ingressService
    )
      return { ...last.out, notes: [] }
    const converted = convertIngresses({
      ingresses,
      ingressClasses: classes,
      services,
      settings: mesh,
      systemNamespace: settings.systemNamespace,
      domainSuffix: settings.domainSuffix,
    })
    const fresh = converted.notes.filter((note) => !reported.has(note))
    reported = new Set(converted.notes)
    const out = { gateways: converted.gateways, virtualServices: converted.virtualServices, notes: fresh }
    last = { ingresses, classes, services, mesh, out }
    return out
  }
}
