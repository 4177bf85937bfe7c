/**
 * The service model every registry produces and every generator reads: services (hosts with
 * ports) and their endpoints. Registries (ServiceEntry, Mock, orchestrator) differ only in where
 * these come from.
 */

export type Protocol =
  | "HTTP"
  | "HTTPS"
  | "HTTP2"
  | "HTTP_PROXY"
  | "GRPC"
  | "GRPC-Web"
  | "TCP"
  | "TLS"
  | "MONGO"
  | "REDIS"
  | "MYSQL"
  | "UDP"
  | "UNSUPPORTED"

export interface ServicePort {
  readonly name: string
  readonly port: number
  readonly protocol: Protocol
  /** Port the workloads listen on, when it differs from `port`. */
  readonly targetPort?: number
}

export type Resolution = "STATIC" | "DNS" | "DNS_ROUND_ROBIN" | "DYNAMIC_DNS" | "NONE"
export type Location = "MESH_EXTERNAL" | "MESH_INTERNAL"

export interface Service {
  /** Fully-qualified host name, e.g. `reviews.default.svc.cluster.local` or `api.example.com`. */
  readonly hostname: string
  readonly namespace: string
  readonly ports: ReadonlyArray<ServicePort>
  /** Virtual IPs (given, or auto-allocated). */
  readonly addresses: ReadonlyArray<string>
  /** Addresses allocated by the mesh (not written by the user). */
  readonly autoAllocatedAddresses: ReadonlyArray<string>
  readonly resolution: Resolution
  readonly location: Location
  /**
   * Namespaces the service is visible to; `*` = all, `.` = own namespace only. Empty = not set
   * by the source: the mesh config's `defaultServiceExportTo` applies (resolved by PushContext).
   */
  readonly exportTo: ReadonlyArray<string>
  readonly labels: Readonly<Record<string, string>>
  /** Which registry produced it: `ServiceEntry`, `Mock`, `Orchestrator`. */
  readonly registry: string
  readonly clusterId: string
  /** Identities the service's workloads run as (ServiceEntry `subjectAltNames`). */
  readonly serviceAccounts?: ReadonlyArray<string>
  /** Workload labels that select the service's endpoints (ServiceEntry `workloadSelector`). */
  readonly selector?: Readonly<Record<string, string>>
  /** The config resource the service comes from, `kind/namespace/name`, when it has one. */
  readonly source?: string
  /** Creation time (RFC 3339) when the source has one; the older definition of a host wins. */
  readonly creationTimestamp?: string
  /** `LoadBalancer` for an orchestrator Service of that type (no other type is recorded). */
  readonly serviceType?: string
  /**
   * Addresses outside the cluster: a LoadBalancer's ingress IPs (else host names) from its
   * `status.loadBalancer`, then `spec.externalIPs`. What a Gateway served by it reports.
   */
  readonly externalAddresses?: ReadonlyArray<string>
}

export type HealthStatus = "HEALTHY" | "UNHEALTHY" | "DRAINING"

export interface Endpoint {
  /** Service host this endpoint belongs to. */
  readonly hostname: string
  readonly namespace: string
  /** Name of the service port this endpoint serves. */
  readonly servicePortName: string
  readonly address: string
  /** Port the workload listens on for that service port. */
  readonly port: number
  readonly labels: Readonly<Record<string, string>>
  readonly serviceAccount: string
  readonly locality: string
  readonly network: string
  readonly weight: number
  readonly healthStatus: HealthStatus
  readonly clusterId: string
}

export const serviceKey = (service: Pick<Service, "hostname" | "namespace">): string =>
  `${service.namespace}/${service.hostname}`

const PROTOCOLS: ReadonlyMap<string, Protocol> = new Map(
  (
    [
      "HTTP",
      "HTTPS",
      "HTTP2",
      "HTTP_PROXY",
      "GRPC",
      "GRPC-Web",
      "TCP",
      "TLS",
      "MONGO",
      "REDIS",
      "MYSQL",
      "UDP",
    ] as const
  ).map((p) => [p.toLowerCase(), p]),
)

/** A protocol name as the reference parses it: case-insensitive; unknown names are UNSUPPORTED. */
export const parseProtocol = (name: string | undefined): Protocol =>
  PROTOCOLS.get((name ?? "").toLowerCase()) ?? "UNSUPPORTED"

/** `true` for hosts like `*.example.com` or `*`. */
export const isWildcardHost = (hostname: string): boolean => hostname.startsWith("*")
