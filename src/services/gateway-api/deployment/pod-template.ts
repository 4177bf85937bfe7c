/**
 * The proxy pod of a deployed gateway, made by the sidecar injector itself: a pod that asks for
 * the `gateway` template and holds a `mesh-proxy` container of image `auto` is injected with the
 * control plane's current injector config and values, exactly as a hand-written gateway
 * Deployment would be. The result becomes the Deployment's pod template (whose pods then opt out
 * of injection, having been injected already).
 */
import { Either } from "effect"
import type { InjectionConfig, InjectionValues, Json } from "../../injection/contract.js"
import { injectPod } from "../../injection/inject.js"
import { ContainerNames, InjectAnnotations } from "../../injection/names.js"
import { valuesView } from "../../injection/values.js"
import type { Obj } from "../../orchestrator/json.js"
import { type ManagedGateway, workloadLabels } from "./objects.js"

/** What the injector needs besides the pod: the injector's settings and the mesh config. */
export interface InjectionSources {
  readonly config: InjectionConfig
  readonly values: InjectionValues
  readonly meshConfig: Json
  /** `REVISION` ("" = default). */
  readonly revision: string
}

export const proxyPodStub = (m: ManagedGateway): Json => ({
  metadata: {
    name: m.names.deployment,
    namespace: m.gateway.namespace,
    labels: workloadLabels(m),
    annotations: { [InjectAnnotations.templates]: "gateway" },
  },
  spec: {
    serviceAccountName: m.names.serviceAccount,
    containers: [{ name: ContainerNames.proxy, image: "auto" }],
  },
})

export interface ProxyPod {
  readonly pod: Obj
  /** The injector values' proxy resources. */
  readonly resources: Obj | undefined
}

/** The injected pod, or why the injector would not make one. */
export const proxyPod = (m: ManagedGateway, sources: InjectionSources): Either.Either<ProxyPod, string> => {
  const outcome = injectPod({
    pod: proxyPodStub(m),
    namespace: { name: m.gateway.namespace, labels: {} },
    config: sources.config,
    values: sources.values,
    meshConfig: sources.meshConfig,
    revision: sources.revision,
    owner: { kind: "Deployment", name: m.names.deployment },
    mode: "orch-inject",
  })
  if (outcome._tag !== "Injected") return Either.left(outcome.reason)
  const resources = valuesView(sources.values).resources
  return Either.right({ pod: outcome.pod as Obj, resources: Object.keys(resources).length > 0 ? resources : undefined })
}
