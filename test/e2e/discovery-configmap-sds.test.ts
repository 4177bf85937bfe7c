/**
 * Issue 36: a BackendTLSPolicy's CA ConfigMap reaches the proxy. The built `mesh-discovery` on
 * the in-process orchestrator; a stand-in proxy (a sidecar of another namespace than the
 * ConfigMap's, as a client of the Service is) subscribes to clusters and then, as the proxy
 * does, to the SDS names they ask for over ADS. The cluster of the policy's Service asks for
 * `configmap://<ns>/<name>-cacert`; the answer is a validation context holding the ConfigMap's
 * `ca.crt`, and a new `ca.crt` is pushed on the same stream. Without ConfigMap credentials the
 * secret never comes (the proxy would wait for it for ever).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startOrchestratorDiscovery } from "../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { gatewayApiCustomResources, meshCustomResources } from "../support/orchestrator/mesh-crds.js"
import type { Daemon } from "../support/processes.js"
import { type StandInProxy, StandInType, startStandInProxy } from "../support/proxygen/stand-in-proxy.js"

const NS = "backend"
const SDS_NAME = `configmap://${NS}/api-ca-cacert`
const pem = (body: string) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`
const FIRST_CA = pem("MIIBfirst")
const ROTATED_CA = pem("MIIBrotated")

let server: Orchestrator
let discovery: Daemon
let proxy: StandInProxy | undefined

const caConfigMap = (ca: string) =>
  server.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "api-ca", namespace: NS },
    data: { "ca.crt": ca },
  })

/** The trusted CA the proxy holds for `SDS_NAME`, or undefined before it has one. */
const trustedCa = (p: StandInProxy): string | undefined => {
  const secret = p.resources(StandInType.secret).find((s) => s.name === SDS_NAME) as
    | { validation_context?: { trusted_ca?: { inline_bytes?: Uint8Array | string } } }
    | undefined
  const bytes = secret?.validation_context?.trusted_ca?.inline_bytes
  // The stand-in decodes bytes fields as the proto JSON mapping does (base64 text).
  if (bytes === undefined) return undefined
  return typeof bytes === "string" ? Buffer.from(bytes, "base64").toString("utf8") : Buffer.from(bytes).toString("utf8")
}

const waitFor = async (what: string, predicate: (p: StandInProxy) => boolean) => {
  try {
    await proxy!.waitFor(predicate, 40_000) // under the test timeout, so the failure says what was missing
  } catch (cause) {
    throw new Error(
      `${what}: secrets ${JSON.stringify(proxy!.names(StandInType.secret))}, nacks ${JSON.stringify(proxy!.nacks)}\n${discovery.output().slice(-3000)}`,
      { cause },
    )
  }
}

beforeAll(async () => {
  server = await startOrchestrator({ customResources: [...meshCustomResources(), ...gatewayApiCustomResources()] })
  for (const name of ["mesh-system", NS, "shop"])
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "api", namespace: NS },
    spec: { clusterIP: "10.96.0.44", selector: { app: "api" }, ports: [{ name: "https", port: 443 }] },
  })
  caConfigMap(FIRST_CA)
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "BackendTLSPolicy",
    metadata: { name: "api-tls", namespace: NS },
    spec: {
      targetRefs: [{ group: "", kind: "Service", name: "api" }],
      validation: { hostname: "api.internal", caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "api-ca" }] },
    },
  })
  ;({ daemon: discovery } = await startOrchestratorDiscovery(server.kubeconfig(), "meshd-configmap-sds"))
  const xdsAddr = (await discovery.waitFor(/ADS server listening on ([\d.]+:\d+)/, 90_000))[1]!
  proxy = startStandInProxy({
    address: xdsAddr,
    node: { id: "sidecar~10.1.0.9~client-1.shop~shop.svc.cluster.local", metadata: { NAMESPACE: "shop" } },
  })
}, 200_000)

afterAll(async () => {
  proxy?.close()
  await discovery?.stop()
  await server?.close()
})

describe("BackendTLSPolicy CA ConfigMaps over SDS, through the built mesh-discovery", () => {
  it("the Service's cluster asks for the ConfigMap's CA by name, and a proxy of another namespace gets it", async () => {
    await waitFor("the cluster's configmap:// secret", (p) => trustedCa(p) !== undefined)
    expect(trustedCa(proxy!)).toBe(FIRST_CA)
    const secret = proxy!.resources(StandInType.secret).find((s) => s.name === SDS_NAME)!
    expect(secret.tls_certificate).toBeUndefined()
    // It is the name the policy's cluster asks for (the stand-in subscribes to what clusters name).
    const cluster = proxy!
      .resources(StandInType.cluster)
      .find((c) => String(c.name).startsWith(`outbound|443||api.${NS}.svc.cluster.local`))
    expect(JSON.stringify(cluster)).toContain(SDS_NAME)
    expect(proxy!.nacks).toEqual([])
  })

  it("a new ca.crt in the ConfigMap is pushed to the proxy", async () => {
    await waitFor("the first CA", (p) => trustedCa(p) === FIRST_CA)
    caConfigMap(ROTATED_CA)
    await waitFor("the rotated CA", (p) => trustedCa(p) === ROTATED_CA)
    expect(proxy!.nacks).toEqual([])
  })
})
