/**
 * Orchestrator objects as they arrive on the wire (JSON, camelCase). Only the fields mesh reads
 * are typed; timestamps stay RFC 3339 strings (nothing here deserializes them into Dates, unlike
 * the generated client models). List items of built-in kinds carry no `kind`/`apiVersion`.
 */

export interface ObjectMeta {
  readonly name: string
  readonly namespace?: string
  readonly uid?: string
  readonly resourceVersion?: string
  readonly generation?: number
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  readonly creationTimestamp?: string
  readonly deletionTimestamp?: string
  readonly ownerReferences?: ReadonlyArray<{
    readonly apiVersion: string
    readonly kind: string
    readonly name: string
    readonly uid: string
    readonly controller?: boolean
  }>
}

export interface OrchObject {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata: ObjectMeta
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export const objectKey = (o: { readonly metadata: Pick<ObjectMeta, "name" | "namespace"> }): string =>
  o.metadata.namespace === undefined || o.metadata.namespace === ""
    ? o.metadata.name
    : `${o.metadata.namespace}/${o.metadata.name}`

export interface ServicePortSpec {
  readonly name?: string
  readonly port: number
  readonly targetPort?: number | string
  readonly protocol?: "TCP" | "UDP" | "SCTP"
  readonly appProtocol?: string
  readonly nodePort?: number
}

export interface OrchService extends OrchObject {
  readonly spec?: {
    readonly type?: "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
    readonly clusterIP?: string
    readonly clusterIPs?: ReadonlyArray<string>
    readonly externalName?: string
    readonly externalIPs?: ReadonlyArray<string>
    readonly selector?: Readonly<Record<string, string>>
    readonly ports?: ReadonlyArray<ServicePortSpec>
    readonly publishNotReadyAddresses?: boolean
    readonly ipFamilies?: ReadonlyArray<string>
  }
  readonly status?: {
    readonly loadBalancer?: { readonly ingress?: ReadonlyArray<{ readonly ip?: string; readonly hostname?: string }> }
  }
}

export interface ObjectReference {
  readonly kind?: string
  readonly namespace?: string
  readonly name?: string
  readonly uid?: string
}

/** discovery.k8s.io/v1 EndpointSlice. */
export interface OrchEndpointSlice extends OrchObject {
  readonly addressType: "IPv4" | "IPv6" | "FQDN"
  readonly endpoints?: ReadonlyArray<{
    readonly addresses: ReadonlyArray<string>
    readonly conditions?: { readonly ready?: boolean; readonly serving?: boolean; readonly terminating?: boolean }
    readonly hostname?: string
    readonly nodeName?: string
    readonly zone?: string
    readonly targetRef?: ObjectReference
  }>
  readonly ports?: ReadonlyArray<{
    readonly name?: string
    readonly port?: number
    readonly protocol?: string
    readonly appProtocol?: string
  }>
}

/** core/v1 Endpoints (the fallback when EndpointSlices are not served). */
export interface OrchEndpoints extends OrchObject {
  readonly subsets?: ReadonlyArray<{
    readonly addresses?: ReadonlyArray<EndpointAddress>
    readonly notReadyAddresses?: ReadonlyArray<EndpointAddress>
    readonly ports?: ReadonlyArray<{ readonly name?: string; readonly port: number; readonly protocol?: string }>
  }>
}

export interface EndpointAddress {
  readonly ip: string
  readonly hostname?: string
  readonly nodeName?: string
  readonly targetRef?: ObjectReference
}

export interface ContainerPort {
  readonly name?: string
  readonly containerPort: number
  readonly protocol?: string
}

export interface OrchPod extends OrchObject {
  readonly spec?: {
    readonly nodeName?: string
    readonly serviceAccountName?: string
    readonly hostNetwork?: boolean
    readonly hostname?: string
    readonly subdomain?: string
    readonly containers?: ReadonlyArray<{ readonly name: string; readonly ports?: ReadonlyArray<ContainerPort> }>
  }
  readonly status?: {
    readonly phase?: string
    readonly podIP?: string
    readonly podIPs?: ReadonlyArray<{ readonly ip: string }>
    readonly hostIP?: string
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }>
  }
}

export interface OrchNode extends OrchObject {
  readonly spec?: {
    readonly taints?: ReadonlyArray<{ readonly key: string; readonly value?: string; readonly effect: string }>
  }
  readonly status?: {
    readonly addresses?: ReadonlyArray<{ readonly type: string; readonly address: string }>
  }
}

export type OrchNamespace = OrchObject

export interface OrchConfigMap extends OrchObject {
  readonly data?: Readonly<Record<string, string>>
}

export interface OrchSecret extends OrchObject {
  readonly type?: string
  /** Base64-encoded values. */
  readonly data?: Readonly<Record<string, string>>
}

/** A custom resource (mesh config kinds): everything under `spec` is the kind's own. */
export interface OrchCustomObject extends OrchObject {
  readonly spec?: unknown
  readonly status?: unknown
}
