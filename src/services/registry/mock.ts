/**
 * The Mock registry (`--registries Mock`): an in-memory registry that tests and embedders fill,
 * so the discovery server runs with no orchestrator at all.
 */
import { Context, Effect, Layer } from "effect"
import { makeRegistryCore } from "./core.js"
import { type Endpoint, type Service, serviceKey } from "./model.js"
import { type RegistryDiff, RegistrySnapshot, ServiceRegistry, type ServiceRegistryShape } from "./registry.js"

export const MOCK_REGISTRY = "Mock"

export interface MockRegistryShape {
  readonly registry: ServiceRegistryShape
  /** Adds or replaces a service (by namespace/hostname). */
  readonly addService: (service: Service) => Effect.Effect<RegistryDiff>
  /** Removes a service and its endpoints. */
  readonly removeService: (hostname: string, namespace: string) => Effect.Effect<RegistryDiff>
  /** Replaces the endpoints of one service. */
  readonly setEndpoints: (
    hostname: string,
    namespace: string,
    endpoints: ReadonlyArray<Endpoint>,
  ) => Effect.Effect<RegistryDiff>
  /** Replaces everything at once (one event). */
  readonly replaceAll: (
    services: ReadonlyArray<Service>,
    endpoints: ReadonlyArray<Endpoint>,
  ) => Effect.Effect<RegistryDiff>
}

export class MockRegistry extends Context.Tag("mesh/MockRegistry")<MockRegistry, MockRegistryShape>() {}

/** A service with the Mock registry's defaults filled in. */
export const mockService = (
  hostname: string,
  namespace: string,
  fields: Partial<Omit<Service, "hostname" | "namespace">> = {},
): Service => ({
  hostname,
  namespace,
  ports: [],
  addresses: [],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: MOCK_REGISTRY,
  clusterId: "",
  ...fields,
})

export const makeMockRegistry = (
  services: ReadonlyArray<Service> = [],
  endpoints: ReadonlyArray<Endpoint> = [],
): Effect.Effect<MockRegistryShape> =>
  Effect.gen(function* () {
    const core = yield* makeRegistryCore(MOCK_REGISTRY)
    yield* core.replace(RegistrySnapshot.make(services, endpoints))
    yield* core.markSynced
    const edit = (f: (services: Map<string, Service>, endpoints: Map<string, ReadonlyArray<Endpoint>>) => void) =>
      core.update((current) => {
        const s = new Map(current.servicesByKey)
        const e = new Map(current.endpointsByKey)
        f(s, e)
        return new RegistrySnapshot(current.version, s, e)
      })
    return {
      registry: core.registry,
      addService: (service) =>
        edit((s) => {
          s.set(serviceKey(service), service)
        }),
      removeService: (hostname, namespace) =>
        edit((s, e) => {
          s.delete(`${namespace}/${hostname}`)
          e.delete(`${namespace}/${hostname}`)
        }),
      setEndpoints: (hostname, namespace, list) =>
        edit((_, e) => {
          if (list.length === 0) e.delete(`${namespace}/${hostname}`)
          else e.set(`${namespace}/${hostname}`, list)
        }),
      replaceAll: (s, e) => core.replace(RegistrySnapshot.make(s, e)),
    }
  })

/** The Mock registry as `MockRegistry` (to fill it) and as the `ServiceRegistry`. */
export const layerMock = (
  services: ReadonlyArray<Service> = [],
  endpoints: ReadonlyArray<Endpoint> = [],
): Layer.Layer<MockRegistry | ServiceRegistry> =>
  Layer.effectContext(
    Effect.map(makeMockRegistry(services, endpoints), (mock) =>
      Context.make(MockRegistry, mock).pipe(Context.add(ServiceRegistry, mock.registry)),
    ),
  )
