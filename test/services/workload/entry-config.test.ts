import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { applyMeshConfig, defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import {
  canonicalService,
  clusterEnv,
  discoveryAddress,
  discoveryHost,
  type EntryOptions,
  hostsFile,
  ingressServiceRef,
  meshYaml,
  missingEntryInputs,
  workloadGroupFromText,
} from "../../../src/services/workload/entry-config.js"

const GROUP = `apiVersion: networking.mesh.io/v1
kind: WorkloadGroup
metadata: {name: vm-app, namespace: apps}
spec:
  metadata:
    labels: {app: ratings, version: v3, tier: back}
  template:
    ports: {http: 8080, grpc: 9090}
    serviceAccount: vm-sa
    network: vm-net
`

const group = Either.getOrThrow(workloadGroupFromText("g.yaml", GROUP, "default"))
const options: EntryOptions = {
  clusterId: "cluster-1",
  systemNamespace: "mesh-system",
  revision: "",
  autoregister: false,
  captureDns: false,
  externalIP: "",
  internalIP: "",
}

const envOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .trimEnd()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  )

describe("workload group input", () => {
  it("reads and validates the group of a file, the namespace defaulting to -n", () => {
    expect(group).toMatchObject({ name: "vm-app", namespace: "apps" })
    const noNs = Either.getOrThrow(workloadGroupFromText("g.yaml", GROUP.replace(", namespace: apps", ""), "other"))
    expect(noNs.namespace).toBe("other")
  })
  it("refuses an invalid group or a file without one", () => {
    const bad = workloadGroupFromText("g.yaml", GROUP.replace("http: 8080", "http: 70000"), "d")
    expect(Either.isLeft(bad) && bad.left).toMatch(/g\.yaml: not a valid WorkloadGroup: .*ports/)
    expect(workloadGroupFromText("e.yaml", "", "d")).toEqual(Either.left("e.yaml: no WorkloadGroup found"))
  })
})

describe("cluster.env", () => {
  it("names the service, account and the ports to capture, sorted KEY=value lines", () => {
    const text = clusterEnv(group, defaultMeshConfig(), options)
    const keys = text
      .trimEnd()
      .split("\n")
      .map((l) => l.split("=")[0]!)
    expect(keys).toEqual([...keys].sort())
    expect(envOf(text)).toEqual({
      CANONICAL_REVISION: "v3",
      CANONICAL_SERVICE: "ratings",
      MESH_CP_AUTH: "MUTUAL_TLS",
      MESH_INBOUND_PORTS: "8080,9090",
      MESH_LOCAL_EXCLUDE_PORTS: "22,15090,15021,15020",
      MESH_NAMESPACE: "apps",
      MESH_SERVICE: "vm-app.apps",
      MESH_SERVICE_CIDR: "*",
      POD_NAMESPACE: "apps",
      SERVICE_ACCOUNT: "vm-sa",
    })
  })
  it("captures every port without declared ports; the workload IP and revision's CA address when given", () => {
    const bare = Either.getOrThrow(
      workloadGroupFromText(
        "g.yaml",
        "kind: WorkloadGroup\napiVersion: networking.mesh.io/v1\nmetadata: {name: b, namespace: ns1}\nspec: {template: {}}\n",
        "d",
      ),
    )
    const env = envOf(clusterEnv(bare, defaultMeshConfig(), { ...options, internalIP: "10.0.0.7", revision: "canary" }))
    expect(env.MESH_INBOUND_PORTS).toBe("*")
    expect(env.SERVICE_ACCOUNT).toBe("default")
    expect(env.CANONICAL_SERVICE).toBe("b")
    expect(env.CANONICAL_REVISION).toBe("latest")
    expect(env.MESH_SVC_IP).toBe("10.0.0.7")
    expect(env.CA_ADDR).toBe("meshd-canary.mesh-system.svc:15012")
    const external = envOf(clusterEnv(bare, defaultMeshConfig(), { ...options, externalIP: "1.2.3.4" }))
    expect(external.MESH_SVC_IP).toBe("1.2.3.4")
    expect(external.REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION).toBe("true")
  })
})

describe("mesh.yaml", () => {
  it("carries the mesh's proxy config, discovery address and the workload's proxy metadata", () => {
    const mesh = Either.getOrThrow(
      applyMeshConfig("mesh", "trustDomain: example.org\ndefaultConfig:\n  meshId: m1\n  proxyMetadata: {EXTRA: x}\n"),
    ).value
    const doc = parse(meshYaml(group, mesh, { ...options, autoregister: true, captureDns: true }))
    expect(Object.keys(doc)).toEqual(["defaultConfig"])
    expect(doc.defaultConfig.discoveryAddress).toBe("meshd.mesh-system.svc:15012")
    expect(doc.defaultConfig.proxyMetadata).toEqual({
      EXTRA: "x",
      CANONICAL_SERVICE: "ratings",
      CANONICAL_REVISION: "v3",
      POD_NAMESPACE: "apps",
      SERVICE_ACCOUNT: "vm-sa",
      TRUST_DOMAIN: "example.org",
      MESH_META_CLUSTER_ID: "cluster-1",
      MESH_META_MESH_ID: "m1",
      MESH_META_WORKLOAD_NAME: "vm-app",
      MESH_METAJSON_LABELS: JSON.stringify({
        app: "ratings",
        version: "v3",
        tier: "back",
        "service.mesh.io/canonical-name": "ratings",
        "service.mesh.io/canonical-revision": "v3",
      }),
      MESH_META_NETWORK: "vm-net",
      MESH_META_POD_PORTS: JSON.stringify([
        { name: "http", containerPort: 8080, protocol: "TCP" },
        { name: "grpc", containerPort: 9090, protocol: "TCP" },
      ]),
      MESH_META_DNS_CAPTURE: "true",
      MESH_META_AUTO_REGISTER_GROUP: "vm-app",
    })
  })
  it("points a revision at its own control plane and leaves auto-registration off unless asked", () => {
    const doc = parse(meshYaml(group, defaultMeshConfig(), { ...options, revision: "canary" }))
    expect(doc.defaultConfig.discoveryAddress).toBe("meshd-canary.mesh-system.svc:15012")
    expect(doc.defaultConfig.proxyMetadata.MESH_META_AUTO_REGISTER_GROUP).toBeUndefined()
    expect(doc.defaultConfig.proxyMetadata.MESH_META_DNS_CAPTURE).toBeUndefined()
    expect(doc.defaultConfig.proxyMetadata.MESH_META_MESH_ID).toBe("cluster.local")
  })
})

describe("hosts and names", () => {
  it("maps the control plane's host to the gateway IP, nothing without an IP", () => {
    expect(hostsFile("192.0.2.1", discoveryHost("mesh-system", ""))).toBe("192.0.2.1 meshd.mesh-system.svc\n")
    expect(hostsFile("", "meshd.mesh-system.svc")).toBe("")
    expect(discoveryHost("ms", "default")).toBe("meshd.ms.svc")
    expect(discoveryAddress("ms", "r1")).toBe("meshd-r1.ms.svc:15012")
  })
  it("splits --ingressService into service and namespace", () => {
    expect(ingressServiceRef("mesh-eastwestgateway", "mesh-system")).toEqual({
      name: "mesh-eastwestgateway",
      namespace: "mesh-system",
    })
    expect(ingressServiceRef("gw.edge", "mesh-system")).toEqual({ name: "gw", namespace: "edge" })
  })
  it("derives the canonical service from the mesh, upstream and app labels", () => {
    expect(canonicalService({ "service.istio.io/canonical-name": "u", app: "a" }, "g")).toEqual({
      name: "u",
      revision: "latest",
    })
    expect(canonicalService({ "app.kubernetes.io/name": "n", "app.kubernetes.io/version": "1" }, "g")).toEqual({
      name: "n",
      revision: "1",
    })
  })
})

describe("entry configure inputs", () => {
  const all = { output: "out", file: "", name: "g", namespace: "ns" }
  it("needs an output directory and the group from a file or the API server", () => {
    expect(missingEntryInputs(all)).toBeUndefined()
    expect(missingEntryInputs({ ...all, name: "", namespace: "", file: "g.yaml" })).toBeUndefined()
    expect(missingEntryInputs({ ...all, output: "" })).toMatch(/--output\/-o/)
    expect(missingEntryInputs({ ...all, name: "" })).toMatch(/--file.*--name and --namespace/)
    expect(missingEntryInputs({ ...all, namespace: "" })).toMatch(/--file.*--name and --namespace/)
  })
})
