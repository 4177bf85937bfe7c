/** Orchestrator Ingress objects for conversion and router tests. */
import type { Ingress, IngressSpec } from "../../../src/services/ingress/model.js"

/** An Ingress `name` (namespace default unless told), with annotations and creation time when given. */
export const ingress = (
  name: string,
  spec: IngressSpec,
  o: { namespace?: string; annotations?: Record<string, string>; created?: string } = {},
): Ingress => ({
  group: "networking.k8s.io",
  version: "v1",
  kind: "Ingress",
  meta: {
    name,
    namespace: o.namespace ?? "default",
    labels: {},
    annotations: o.annotations ?? {},
    ...(o.created !== undefined ? { creationTimestamp: o.created } : {}),
  },
  spec,
})
