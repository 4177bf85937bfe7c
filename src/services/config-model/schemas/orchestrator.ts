/**
 * Orchestrator kinds the registries read (Service, Endpoints, EndpointSlice, Pod, Namespace):
 * only the fields the mesh uses; everything else in these objects is ignored, not rejected.
 * The body of these kinds is their top-level content besides apiVersion/kind/metadata.
 */
import { Schema } from "effect"
import { checked, Enum, opt, portProblem, StringList, StringMap } from "./common.js"

const PortProtocol = Enum("TCP", "UDP", "SCTP")

const ObjectReference = Schema.Struct({
  kind: opt(Schema.String),
  namespace: opt(Schema.String),
  name: opt(Schema.String),
  uid: opt(Schema.String),
})

export const ServicePort = Schema.Struct({
  name: opt(Schema.String),
  protocol: opt(PortProtocol),
  appProtocol: opt(Schema.String),
  port: Schema.Number,
  targetPort: opt(Schema.Union(Schema.Number, Schema.String)),
  nodePort: opt(Schema.Number),
}).pipe(
  checked((p, report) => {
    const problem = portProblem(p.port)
    if (problem !== undefined) report(["port"], problem)
  }),
)

export const Service = Schema.Struct({
  spec: Schema.Struct({
    type: opt(Enum("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")),
    clusterIP: opt(Schema.String),
    clusterIPs: opt(StringList),
    ports: opt(Schema.Array(ServicePort)),
    selector: opt(StringMap),
    externalName: opt(Schema.String),
    externalIPs: opt(StringList),
    loadBalancerIP: opt(Schema.String),
    publishNotReadyAddresses: opt(Schema.Boolean),
    internalTrafficPolicy: opt(Schema.String),
    externalTrafficPolicy: opt(Schema.String),
    ipFamilies: opt(StringList),
  }),
  status: opt(
    Schema.Struct({
      loadBalancer: opt(
        Schema.Struct({
          ingress: opt(Schema.Array(Schema.Struct({ ip: opt(Schema.String), hostname: opt(Schema.String) }))),
        }),
      ),
    }),
  ),
})
export type ServiceBody = typeof Service.Type

const EndpointPort = Schema.Struct({
  name: opt(Schema.String),
  port: opt(Schema.Number),
  protocol: opt(PortProtocol),
  appProtocol: opt(Schema.String),
})

const EndpointAddress = Schema.Struct({
  ip: Schema.String,
  hostname: opt(Schema.String),
  nodeName: opt(Schema.String),
  targetRef: opt(ObjectReference),
})

export const Endpoints = Schema.Struct({
  subsets: opt(
    Schema.Array(
      Schema.Struct({
        addresses: opt(Schema.Array(EndpointAddress)),
        notReadyAddresses: opt(Schema.Array(EndpointAddress)),
        ports: opt(Schema.Array(EndpointPort)),
      }),
    ),
  ),
})
export type EndpointsBody = typeof Endpoints.Type

export const EndpointSlice = Schema.Struct({
  addressType: Enum("IPv4", "IPv6", "FQDN"),
  endpoints: opt(
    Schema.Array(
      Schema.Struct({
        addresses: StringList,
        conditions: opt(
          Schema.Struct({ ready: opt(Schema.Boolean), serving: opt(Schema.Boolean), terminating: opt(Schema.Boolean) }),
        ),
        hostname: opt(Schema.String),
        nodeName: opt(Schema.String),
        zone: opt(Schema.String),
        targetRef: opt(ObjectReference),
      }),
    ),
  ),
  ports: opt(Schema.Array(EndpointPort)),
})
export type EndpointSliceBody = typeof EndpointSlice.Type

const ContainerPort = Schema.Struct({
  name: opt(Schema.String),
  containerPort: Schema.Number,
  protocol: opt(PortProtocol),
})

const Container = Schema.Struct({
  name: Schema.String,
  image: opt(Schema.String),
  ports: opt(Schema.Array(ContainerPort)),
})

export const Pod = Schema.Struct({
  spec: opt(
    Schema.Struct({
      serviceAccountName: opt(Schema.String),
      nodeName: opt(Schema.String),
      hostNetwork: opt(Schema.Boolean),
      containers: opt(Schema.Array(Container)),
      initContainers: opt(Schema.Array(Container)),
    }),
  ),
  status: opt(
    Schema.Struct({
      phase: opt(Schema.String),
      podIP: opt(Schema.String),
      podIPs: opt(Schema.Array(Schema.Struct({ ip: Schema.String }))),
      hostIP: opt(Schema.String),
      conditions: opt(Schema.Array(Schema.Struct({ type: Schema.String, status: Schema.String }))),
    }),
  ),
})
export type PodBody = typeof Pod.Type

export const Namespace = Schema.Struct({
  spec: opt(Schema.Struct({ finalizers: opt(StringList) })),
  status: opt(Schema.Struct({ phase: opt(Schema.String) })),
})
export type NamespaceBody = typeof Namespace.Type
