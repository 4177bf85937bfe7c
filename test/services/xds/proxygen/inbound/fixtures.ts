/** A small mesh for the inbound generator tests: one workload `reviews` with an HTTP and a TCP port. */

import type { Endpoint, Protocol, Service } from "../../../../../src/services/registry/model.js"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type ProxyConfigInput,
  type PushContext,
  type PushContextInput,
  type PushContextOptions,
} from "../../../../../src/services/xds/model/push-context.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { resource } from "../../../../fixtures/xds/mesh.js"
import { checkResource } from "../../../../support/proxygen/check.js"

export const REVIEWS = "reviews.default.svc.cluster.local"
export const RATINGS = "ratings.default.svc.cluster.local"

export const svc = (
  hostname: string,
  ports: ReadonlyArray<{ name: string; port: number; protocol: Protocol }>,
  namespace = "default",
): Service => ({
  hostname,
  namespace,
  ports,
  addresses: [],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: ["*"],
  labels: {},
  registry: "Mock",
  clusterId: "Orchestrator",
})

export const ep = (hostname: string, address: string, portName: string, port: number): Endpoint => ({
  hostname,
  namespace: "default",
  servicePortName: portName,
  address,
  port,
  labels: { app: "reviews" },
  serviceAccount: "reviews",
  locality: "",
  network: "",
  weight: 1,
  healthStatus: "HEALTHY",
  clusterId: "Orchestrator",
})

/** reviews: http 9080 → 8080, tcp 3306 → 3306, on 10.0.0.5 and 10.0.0.6. */
export const baseInput = (): PushContextInput => ({
  services: [
    svc(REVIEWS, [
      { name: "http", port: 9080, protocol: "HTTP" },
      { name: "tcp", port: 3306, protocol: "TCP" },
    ]),
  ],
  endpoints: ["10.0.0.5", "10.0.0.6"].flatMap((ip) => [ep(REVIEWS, ip, "http", 8080), ep(REVIEWS, ip, "tcp", 3306)]),
  virtualServices: [],
  destinationRules: [],
  peerAuthentications: [],
  authorizationPolicies: [],
})

export const security = <K extends "PeerAuthentication" | "AuthorizationPolicy" | "RequestAuthentication">(
  kind: K,
  name: string,
  spec: unknown,
  namespace = "default",
) => ({ ...resource(kind, name, spec, namespace), group: "security.mesh.io" })

export const push = (
  extra: Partial<PushContextInput> = {},
  proxyConfig: Partial<ProxyConfigInput> = {},
  options: PushContextOptions = defaultPushContextOptions,
): PushContext =>
  makePushContext({ ...baseInput(), ...extra, proxyConfig: { ...emptyProxyConfigInput, ...proxyConfig } }, options)

export const sidecar = (
  ip = "10.0.0.5",
  labels: Record<string, string> = { app: "reviews" },
  extra: Record<string, unknown> = {},
): ProxyView =>
  proxyView(`sidecar~${ip}~reviews-${ip.slice(-1)}.default~default.svc.cluster.local`, {
    NAMESPACE: "default",
    LABELS: labels,
    ...extra,
  })!

/** The conformance problems of resources (shape, validate.rules, codec round trip), by name. */
export const conformanceProblems = (typeUrl: string, resources: ReadonlyArray<object>): ReadonlyArray<string> =>
  resources.flatMap((r) => checkResource(typeUrl, r).map((p) => `${String((r as ProtoObject).name)}: ${p}`))
