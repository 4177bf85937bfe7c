/** Node identity/metadata and the proxyless gRPC bootstrap, checked by grpc-js-xds's own validator. */
import { createRequire } from "node:module"
import { describe, expect, it } from "@effect/vitest"
import { grpcBootstrap, unixUri } from "../../../../src/services/agent/bootstrap/grpc-bootstrap.js"
import { buildNode, envMetadata, nodeId } from "../../../../src/services/agent/bootstrap/node.js"

const require = createRequire(import.meta.url)
const { validateBootstrapConfig } = require("@grpc/grpc-js-xds/build/src/xds-bootstrap.js") as {
  validateBootstrapConfig: (o: unknown) => {
    xdsServers: Array<{ server_uri: string; server_features: string[] }>
    node: { id: string; metadata: Record<string, unknown> }
    certificateProviders: Record<string, { pluginName: string; config: Record<string, string> }>
    serverListenerResourceNameTemplate: string | null
  }
}

const inputs = {
  type: "sidecar" as const,
  podName: "app-7d9",
  namespace: "shop",
  instanceIps: ["10.1.2.3", "fd00::3"],
  domain: "",
  serviceAccount: "app",
  clusterId: "Orchestrator",
  meshVersion: "1.0.0",
  env: {
    MESH_META_CLUSTER_ID: "east",
    MESH_META_WORKLOAD_NAME: "app",
    MESH_METAJSON_LABELS: '{"app":"shop","version":"v1"}',
    MESH_METAJSON_BROKEN: "{",
    PATH: "/usr/bin",
  },
}

describe("node identity", () => {
  it("id is <type>~<ip>~<pod>.<ns>~<ns>.svc.cluster.local unless --domain is set", () => {
    expect(nodeId(inputs)).toBe("sidecar~10.1.2.3~app-7d9.shop~shop.svc.cluster.local")
    expect(nodeId({ ...inputs, domain: "example.test" })).toBe("sidecar~10.1.2.3~app-7d9.shop~example.test")
  })

  it("metadata from MESH_META_* (strings) and MESH_METAJSON_* (JSON); bad JSON reported", () => {
    const { metadata, problems } = envMetadata(inputs.env)
    expect(metadata).toEqual({ CLUSTER_ID: "east", WORKLOAD_NAME: "app", LABELS: { app: "shop", version: "v1" } })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain("MESH_METAJSON_BROKEN")
  })

  it("node metadata: namespace, IPs, labels; environment wins over computed values", () => {
    const { node } = buildNode(inputs)
    expect(node.metadata).toMatchObject({
      NAMESPACE: "shop",
      NAME: "app-7d9",
      INSTANCE_IPS: "10.1.2.3,fd00::3",
      SERVICE_ACCOUNT: "app",
      CLUSTER_ID: "east",
      LABELS: { app: "shop", version: "v1" },
    })
  })
})

describe("gRPC bootstrap", () => {
  const bootstrap = grpcBootstrap({
    serverUri: unixUri("/work/etc/mesh/proxy/XDS"),
    channelCreds: [{ type: "insecure" }],
    node: buildNode(inputs).node,
    certDir: "/work/var/lib/mesh/data",
  })

  it("is accepted by grpc-js-xds's bootstrap validator", () => {
    const parsed = validateBootstrapConfig(JSON.parse(JSON.stringify(bootstrap)))
    expect(parsed.xdsServers[0]!.server_uri).toBe("unix:///work/etc/mesh/proxy/XDS")
    expect(parsed.xdsServers[0]!.server_features).toEqual(["xds_v3"])
    expect(parsed.node.id).toBe("sidecar~10.1.2.3~app-7d9.shop~shop.svc.cluster.local")
    expect(parsed.certificateProviders.default!.pluginName).toBe("file_watcher")
    expect(parsed.serverListenerResourceNameTemplate).toBe("xds.mesh.io/grpc/lds/inbound/%s")
  })

  it("marks the node as a proxyless gRPC client and points the file watcher at the agent's files", () => {
    expect(bootstrap.node.metadata.GENERATOR).toBe("grpc")
    expect(bootstrap.certificate_providers.default!.config).toEqual({
      certificate_file: "/work/var/lib/mesh/data/cert-chain.pem",
      private_key_file: "/work/var/lib/mesh/data/key.pem",
      ca_certificate_file: "/work/var/lib/mesh/data/root-cert.pem",
      refresh_interval: "900s",
    })
  })
})
