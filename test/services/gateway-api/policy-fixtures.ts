/**
 * Builders for the backend-policy cases: the Gateway-API objects written as YAML (parsed by the
 * mesh's own parser, so the schemas are exercised too), the registry's Services and ServiceEntry
 * hosts, ConfigMaps, and look-ups of ancestors and DestinationRules in the output.
 */
import { expect } from "vitest"
import { parseConfigDocuments } from "../../../src/services/config-model/parse.js"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import type { DestinationRuleSpec } from "../../../src/services/config-model/schemas/destination-rule.js"
import type { GatewayApiInput, GatewayApiOutput } from "../../../src/services/gateway-api/convert.js"
import type { TlsObjects } from "../../../src/services/gateway-api/tls-objects.js"
import type { Service } from "../../../src/services/registry/model.js"
import { convert, service, statusOf } from "./fixtures.js"

const LISTS: Record<string, keyof GatewayApiInput> = {
  GatewayClass: "gatewayClasses",
  KubernetesGateway: "gateways",
  HTTPRoute: "httpRoutes",
  GRPCRoute: "grpcRoutes",
  TCPRoute: "tcpRoutes",
  TLSRoute: "tlsRoutes",
  ReferenceGrant: "referenceGrants",
  BackendTLSPolicy: "backendTlsPolicies",
  XBackendTrafficPolicy: "backendTrafficPolicies",
  InferencePool: "inferencePools",
}

/** The documents of `yaml` as conversion input; fails the test on any parse issue. */
export const fromYaml = (yaml: string): Partial<GatewayApiInput> => {
  const parsed = parseConfigDocuments("case.yaml", yaml)
  expect(parsed.issues).toEqual([])
  const out: Record<string, Array<ConfigResource>> = {}
  for (const r of parsed.resources) {
    const list = LISTS[r.kind]
    if (list === undefined) throw new Error(`no input list for ${r.kind}`)
    out[list] = [...(out[list] ?? []), r]
  }
  return out as Partial<GatewayApiInput>
}

/** A ServiceEntry's hosts as the registry holds them (one service per host, its ports). */
export const entryHosts = (
  name: string,
  hosts: ReadonlyArray<string>,
  ports: ReadonlyArray<readonly [string, number]>,
  namespace = "default",
): ReadonlyArray<Service> =>
  hosts.map((host) =>
    service(
      name,
      namespace,
      ports.map(([n, p]) => [n, p, "HTTPS"] as const),
      {
        hostname: host,
        source: `ServiceEntry/${namespace}/${name}`,
        registry: "ServiceEntry",
        location: "MESH_EXTERNAL",
      },
    ),
  )

/** The Gateway `infra/gw`: one HTTP listener on 80 taking routes from every namespace. */
export const GATEWAY_YAML = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: mesh
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---`

export const CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

export const objects = (configMaps: Record<string, Record<string, string>>): TlsObjects => ({
  secrets: new Map(),
  configMaps: new Map(Object.entries(configMaps)),
})

export const run = (yaml: string, services: ReadonlyArray<Service>, tlsObjects?: TlsObjects): GatewayApiOutput =>
  convert({ ...fromYaml(yaml), services, ...(tlsObjects !== undefined ? { tlsObjects } : {}) })

export interface Ancestor {
  readonly ancestorRef: Record<string, string>
  readonly controllerName: string
  readonly conditions: ReadonlyArray<{ type: string; status: string; reason: string; message: string }>
}

/** A policy's ancestors as `[ancestorRef, controller, [Type=Status/Reason: message, ...]]`. */
export const ancestorsOf = (out: GatewayApiOutput, kind: string, name: string, namespace = "default") => {
  const status = statusOf<{ ancestors: ReadonlyArray<Ancestor> }>(out, kind, name, namespace)
  if (status === undefined) throw new Error(`no status for ${kind} ${namespace}/${name}`)
  return status.ancestors.map((a) => [
    a.ancestorRef,
    a.controllerName,
    a.conditions.map((c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`),
  ])
}

export const destinationRule = (
  out: GatewayApiOutput,
  name: string,
  namespace = "default",
): ConfigResource<DestinationRuleSpec> => {
  const found = out.destinationRules.find((r) => r.meta.name === name && r.meta.namespace === namespace)
  if (found === undefined)
    throw new Error(`no DestinationRule ${namespace}/${name}: ${out.destinationRules.map((r) => r.meta.name)}`)
  return found
}
