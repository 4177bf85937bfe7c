import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import type { ServiceEntrySpec } from "../../../src/services/config-model/schemas/service-entry.js"
import type { WorkloadEntrySpec } from "../../../src/services/config-model/schemas/workload-entry.js"

export const serviceEntry = (
  name: string,
  spec: Partial<ServiceEntrySpec> & Pick<ServiceEntrySpec, "hosts">,
  meta: { namespace?: string; labels?: Record<string, string>; creationTimestamp?: string } = {},
): ConfigResource<ServiceEntrySpec> => ({
  group: "networking.mesh.io",
  version: "v1",
  kind: "ServiceEntry",
  meta: {
    name,
    namespace: meta.namespace ?? "default",
    labels: meta.labels ?? {},
    annotations: {},
    ...(meta.creationTimestamp !== undefined ? { creationTimestamp: meta.creationTimestamp } : {}),
  },
  spec: { location: "MESH_EXTERNAL", resolution: "NONE", ...spec } as ServiceEntrySpec,
})

export const workloadEntry = (
  name: string,
  spec: WorkloadEntrySpec,
  meta: { namespace?: string; labels?: Record<string, string> } = {},
): ConfigResource<WorkloadEntrySpec> => ({
  group: "networking.mesh.io",
  version: "v1",
  kind: "WorkloadEntry",
  meta: { name, namespace: meta.namespace ?? "default", labels: meta.labels ?? {}, annotations: {} },
  spec,
})
