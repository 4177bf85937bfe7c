/**
 * Orchestrator objects read from config documents (`--configDir` in file mode): a `v1 Service`,
 * `discovery.k8s.io/v1 EndpointSlice`, `v1 Endpoints`, `v1 Pod` or `v1 Namespace` document is
 * turned back into the object the API server would have sent, so the orchestrator registry's own
 * conversion (OrchestratorRegistryState) builds the same services and endpoints from it as from
 * a cluster. `ConfigFeed` turns successive config snapshots into informer-style events.
 */
import type { ConfigResource } from "../../config-model/resource.js"
import type { ConfigSnapshot } from "../../config-store/snapshot.js"
import type { InformerEvent } from "../../orchestrator/informer.js"
import type {
  OrchEndpointSlice,
  OrchEndpoints,
  OrchNamespace,
  OrchObject,
  OrchPod,
  OrchService,
} from "../../orchestrator/objects.js"

/** The orchestrator kinds a config document may hold, as the config model names them. */
export const ORCHESTRATOR_DOCUMENT_KINDS = ["Service", "EndpointSlice", "Endpoints", "Pod", "Namespace"] as const
export type OrchestratorDocumentKind = (typeof ORCHESTRATOR_DOCUMENT_KINDS)[number]

const API_VERSIONS: Record<OrchestratorDocumentKind, string> = {
  Service: "v1",
  EndpointSlice: "discovery.k8s.io/v1",
  Endpoints: "v1",
  Pod: "v1",
  Namespace: "v1",
}

/**
 * The object a document describes: its metadata and its body fields (`spec`/`status`, or an
 * EndpointSlice's `addressType`/`endpoints`/`ports`) as written.
 */
export const orchObjectOf = <T extends OrchObject>(kind: OrchestratorDocumentKind, resource: ConfigResource): T => {
  const meta = resource.meta
  const body = (resource.spec ?? {}) as Record<string, unknown>
  return {
    ...body,
    apiVersion: API_VERSIONS[kind],
    kind,
    metadata: {
      name: meta.name,
      ...(kind !== "Namespace" ? { namespace: meta.namespace } : {}),
      labels: meta.labels,
      annotations: meta.annotations,
      ...(meta.resourceVersion !== undefined ? { resourceVersion: meta.resourceVersion } : {}),
      ...(meta.creationTimestamp !== undefined ? { creationTimestamp: meta.creationTimestamp } : {}),
    },
  } as unknown as T
}

export interface OrchestratorDocumentEvents {
  readonly services: ReadonlyArray<InformerEvent<OrchService>>
  readonly slices: ReadonlyArray<InformerEvent<OrchEndpointSlice>>
  readonly endpoints: ReadonlyArray<InformerEvent<OrchEndpoints>>
  readonly pods: ReadonlyArray<InformerEvent<OrchPod>>
  readonly namespaces: ReadonlyArray<InformerEvent<OrchNamespace>>
}

/**
 * Remembers the documents last handed on, per kind, and answers each new snapshot with the
 * events that lead from them to it (a document whose resource object is unchanged is no event:
 * the store keeps the objects of unchanged files). Owned by one caller.
 */
export class ConfigFeed {
  private readonly last = new Map<
    OrchestratorDocumentKind,
    Map<string, { resource: ConfigResource; object: OrchObject }>
  >()

  next(snapshot: ConfigSnapshot): OrchestratorDocumentEvents {
    const eventsOf = <T extends OrchObject>(kind: OrchestratorDocumentKind): Array<InformerEvent<T>> => {
      const before = this.last.get(kind) ?? new Map()
      const after = new Map<string, { resource: ConfigResource; object: OrchObject }>()
      const events: Array<InformerEvent<T>> = []
      for (const resource of snapshot.list(kind)) {
        const key = `${resource.meta.namespace}/${resource.meta.name}`
        const old = before.get(key)
        if (old !== undefined && old.resource === resource) {
          after.set(key, old)
          continue
        }
        const object = orchObjectOf<T>(kind, resource)
        after.set(key, { resource, object })
        events.push(
          old === undefined ? { type: "added", object } : { type: "updated", object, previous: old.object as T },
        )
      }
      for (const [key, old] of before) if (!after.has(key)) events.push({ type: "deleted", object: old.object as T })
      this.last.set(kind, after)
      return events
    }
    return {
      services: eventsOf<OrchService>("Service"),
      slices: eventsOf<OrchEndpointSlice>("EndpointSlice"),
      endpoints: eventsOf<OrchEndpoints>("Endpoints"),
      pods: eventsOf<OrchPod>("Pod"),
      namespaces: eventsOf<OrchNamespace>("Namespace"),
    }
  }
}
