/**
 * What the orchestrator API server fills in on write for the built-in kinds the mesh reads:
 * Service cluster IPs and port defaults, Pod phase and service account, Namespace phase,
 * Secret stringData, CustomResourceDefinition conditions. Only what a client would notice.
 */
import type { KubeObject } from "./resources.js"

type Dict = Record<string, unknown>
const asDict = (v: unknown): Dict => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Dict) : {})
const asList = (v: unknown): Array<Dict> => (Array.isArray(v) ? (v as Array<Dict>) : [])

/** Hands out cluster IPs from 10.96.0.0/12 and node ports from 30000, like the allocators. */
export class Allocators {
  private nextIp = 10
  private nextNodePort = 30000

  clusterIp(): string {
    const n = this.nextIp++
    return `10.96.${Math.floor(n / 250)}.${(n % 250) + 1}`
  }

  nodePort(): number {
    return this.nextNodePort++
  }
}

const defaultPorts = (ports: Array<Dict>, service: boolean): Array<Dict> =>
  ports.map((p) => ({ protocol: "TCP", ...(service ? { targetPort: p.port } : {}), ...p }))

const defaultService = (o: KubeObject, previous: KubeObject | undefined, alloc: Allocators): KubeObject => {
  const spec = { ...asDict(o.spec) }
  const old = asDict(previous?.spec)
  spec.type ??= "ClusterIP"
  if (spec.type !== "ExternalName") {
    // An update that omits the allocated address keeps it, as the real allocator does.
    if (spec.clusterIP === undefined || spec.clusterIP === "") spec.clusterIP = old.clusterIP ?? alloc.clusterIp()
    spec.clusterIPs ??= [spec.clusterIP]
    spec.ipFamilies ??= ["IPv4"]
    spec.ipFamilyPolicy ??= "SingleStack"
    spec.internalTrafficPolicy ??= "Cluster"
  }
  spec.sessionAffinity ??= "None"
  spec.ports = defaultPorts(asList(spec.ports), true).map((p) =>
    (spec.type === "NodePort" || spec.type === "LoadBalancer") && p.nodePort === undefined
      ? { ...p, nodePort: asList(old.ports).find((q) => q.port === p.port)?.nodePort ?? alloc.nodePort() }
      : p,
  )
  return { ...o, spec, status: o.status ?? { loadBalancer: {} } }
}

const defaultPodSpec = (spec: Dict): Dict => ({
  restartPolicy: "Always",
  dnsPolicy: "ClusterFirst",
  serviceAccountName: "default",
  terminationGracePeriodSeconds: 30,
  ...spec,
  containers: asList(spec.containers).map((c) => ({ ...c, ports: defaultPorts(asList(c.ports), false) })),
})

/** `created` is true for create (and create-on-update), false for update; bodies may omit `kind`. */
export const applyDefaults = (
  kind: string,
  o: KubeObject,
  previous: KubeObject | undefined,
  alloc: Allocators,
  created: boolean,
): KubeObject => {
  switch (kind) {
    case "Service":
      return defaultService(o, previous, alloc)
    case "Pod":
      return {
        ...o,
        spec: defaultPodSpec(asDict(o.spec)),
        ...(created ? { status: { phase: "Pending", qosClass: "BestEffort" } } : {}),
      }
    case "Namespace":
      return {
        ...o,
        metadata: {
          ...o.metadata,
          labels: { ...o.metadata.labels, "kubernetes.io/metadata.name": o.metadata.name! },
        },
        spec: { finalizers: ["kubernetes"], ...asDict(o.spec) },
        status: { phase: "Active", ...asDict(o.status) },
      }
    case "Secret": {
      const { stringData, ...rest } = o
      const data = { ...asDict(o.data) }
      for (const [k, v] of Object.entries(asDict(stringData))) data[k] = Buffer.from(String(v)).toString("base64")
      return { ...rest, type: o.type ?? "Opaque", ...(Object.keys(data).length > 0 ? { data } : {}) }
    }
    case "CustomResourceDefinition": {
      const spec = asDict(o.spec)
      const now = o.metadata.creationTimestamp
      const condition = (type: string, reason: string) => ({
        type,
        status: "True",
        lastTransitionTime: now,
        reason,
        message: "",
      })
      return {
        ...o,
        status: {
          conditions: [condition("NamesAccepted", "NoConflicts"), condition("Established", "InitialNamesAccepted")],
          acceptedNames: spec.names,
          storedVersions: asList(spec.versions)
            .filter((v) => v.storage === true)
            .map((v) => v.name),
        },
      }
    }
    default:
      return o
  }
}
