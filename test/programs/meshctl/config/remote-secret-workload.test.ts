/**
 * `meshctl create-remote-secret` and `meshctl x workload group create` / `entry configure` as
 * processes against the in-process fake orchestrator: the remote Secret is applied to the
 * cluster and must pass mesh-discovery's remote-secret parser and reach the API server with its
 * own kubeconfig; the generated WorkloadGroup must pass the project's validation; the VM files
 * must carry the group, mesh config, root certificate, a token of the requested lifetime and the
 * gateway address.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse, parseAllDocuments } from "yaml"
import { makeOrchestratorClient } from "../../../../src/layers/orchestrator/client.js"
import { parseConfigDocuments } from "../../../../src/services/config-model/parse.js"
import { parseInsecureOptions, sanitizeKubeconfig } from "../../../../src/services/multicluster/kubeconfig.js"
import { MULTICLUSTER_SECRET_SELECTORS, wantedClusters } from "../../../../src/services/multicluster/secrets.js"
import type { OrchSecret } from "../../../../src/services/orchestrator/objects.js"
import { Resources } from "../../../../src/services/orchestrator/resources.js"
import { type KubeObject, type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { meshCustomResources } from "../../../support/orchestrator/mesh-crds.js"
import { run } from "../../../support/processes.js"

const TOKEN = "cluster-token"
const ROOT_PEM = "-----BEGIN CERTIFICATE-----\nROOT\n-----END CERTIFICATE-----\n"
let orch: Orchestrator
let kubeconfig: string
let dir: string

const meshctl = (...args: ReadonlyArray<string>) => run("meshctl", [...args, "-c", kubeconfig])
const b64 = (text: string) => Buffer.from(text).toString("base64")

beforeAll(async () => {
  orch = await startOrchestrator({
    token: TOKEN,
    namespaces: ["default", "mesh-system", "mesh-remote", "apps"],
    customResources: meshCustomResources(),
  })
  kubeconfig = orch.kubeconfig()
  dir = mkdtempSync(join(tmpdir(), "remote-secret-workload-"))
  const put = (o: KubeObject) => orch.put(o)
  put({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "mesh-reader-service-account", namespace: "mesh-system" },
  })
  put({
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/service-account-token",
    metadata: {
      name: "reader-token",
      namespace: "mesh-system",
      annotations: { "kubernetes.io/service-account.name": "mesh-reader-service-account" },
    },
    // The fake server does not run a token controller: the test writes what it would.
    data: { token: b64(TOKEN), "ca.crt": b64(orch.caPem!) },
  })
  put({
    apiVersion: "networking.mesh.io/v1",
    kind: "WorkloadGroup",
    metadata: { name: "ratings-vm", namespace: "apps" },
    spec: {
      metadata: { labels: { app: "ratings", version: "v1" } },
      template: { ports: { http: 9080 }, serviceAccount: "ratings-sa", network: "vm-net" },
    },
  })
  put({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "ratings-sa", namespace: "apps" } })
  put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh-ca-root-cert", namespace: "apps" },
    data: { "root-cert.pem": ROOT_PEM },
  })
  put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh", namespace: "mesh-system" },
    data: { mesh: "trustDomain: vm.example\ndefaultConfig:\n  proxyMetadata: {FROM_MESH: yes}\n" },
  })
  put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "mesh-eastwestgateway", namespace: "mesh-system" },
    spec: { type: "LoadBalancer", ports: [{ name: "tls-meshd", port: 15012 }] },
    status: { loadBalancer: { ingress: [{ ip: "203.0.113.9" }] } },
  })
})

afterAll(async () => {
  await orch?.close()
})

/** The Secret as the API server stores it after `apply` of the printed manifest. */
const applyManifest = (stdout: string): OrchSecret => {
  const docs = parseAllDocuments(stdout)
    .map((d) => d.toJS())
    .filter((d) => d !== null)
  expect(docs).toHaveLength(1)
  return orch.put(docs[0]) as unknown as OrchSecret
}

/** Waits for meshctl's token Secret and fills it as the orchestrator's token controller would. */
const fillTokenSecret = async (namespace: string, name: string, token: string) => {
  for (let i = 0; i < 500; i++) {
    const secret = orch.get("v1", "Secret", namespace, name)
    if (secret !== undefined) {
      orch.put({ ...secret, data: { token: b64(token), "ca.crt": b64(orch.caPem!) } })
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`token secret ${namespace}/${name} never created`)
}

describe("meshctl create-remote-secret", () => {
  it("prints a bearer-token secret that mesh-discovery's parser accepts and whose kubeconfig reaches the cluster", async () => {
    const result = await meshctl("create-remote-secret", "--name", "cluster-b", "--tls-server-name", "localhost")
    expect(result.code, result.stderr).toBe(0)
    const secret = applyManifest(result.stdout)
    expect(secret.metadata.name).toBe("mesh-remote-secret-cluster-b")
    expect(secret.metadata.annotations).toEqual({ "networking.mesh.io/cluster": "cluster-b" })
    const [key, value] = MULTICLUSTER_SECRET_SELECTORS[0]!.split("=")
    expect(secret.metadata.labels?.[key!]).toBe(value)

    const wanted = wantedClusters(orch.list("v1", "Secret", "mesh-system") as unknown as Array<OrchSecret>, "local")
    const cluster = wanted.clusters.get("cluster-b")
    expect(cluster?.secret).toBe("mesh-system/mesh-remote-secret-cluster-b")
    const checked = sanitizeKubeconfig(cluster!.kubeconfig, parseInsecureOptions(""))
    expect(checked._tag).toBe("Allowed")
    const config = parse(cluster!.kubeconfig)
    expect(config.users[0].user).toEqual({ token: TOKEN })
    expect(config.clusters[0].cluster.server).toBe(orch.url)
    // The remote control plane's client, built from the secret alone, is let in by the API server.
    const namespaces = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(
          makeOrchestratorClient({
            source: { _tag: "text", name: "remote secret", yaml: checked._tag === "Allowed" ? checked.yaml : "" },
            clusterId: "cluster-b",
            qps: 0,
            burst: 0,
          }),
          (client) => client.list(Resources.namespaces),
        ),
      ),
    )
    expect(namespaces.items.map((n) => n.metadata.name)).toContain("mesh-system")
  })

  it("creates the reader account, its RBAC and token secret; names the cluster by namespace UID; plugin auth", async () => {
    const [result] = await Promise.all([
      meshctl(
        "create-remote-secret",
        "-i",
        "mesh-remote",
        "--auth-type",
        "plugin",
        "--auth-plugin-name",
        "gcp",
        "--auth-plugin-config",
        "scopes=cloud,mode=x",
      ),
      fillTokenSecret("mesh-remote", "mesh-reader-service-account-mesh-remote-secret-token", "unused-by-plugin"),
    ])
    expect(result.code, result.stderr).toBe(0)
    expect(orch.get("v1", "ServiceAccount", "mesh-remote", "mesh-reader-service-account")).toBeDefined()
    const binding = orch.get(
      "rbac.authorization.k8s.io/v1",
      "ClusterRoleBinding",
      undefined,
      "mesh-reader-clusterrole-mesh-remote",
    )
    expect(binding).toMatchObject({ subjects: [{ name: "mesh-reader-service-account", namespace: "mesh-remote" }] })
    expect(
      orch.get("rbac.authorization.k8s.io/v1", "ClusterRole", undefined, "mesh-reader-clusterrole-mesh-remote"),
    ).toBeDefined()
    const uid = orch.get("v1", "Namespace", undefined, "mesh-remote")!.metadata.uid!
    const secret = applyManifest(result.stdout)
    expect(secret.metadata).toMatchObject({ name: `mesh-remote-secret-${uid}`, namespace: "mesh-remote" })
    const cluster = wantedClusters([secret], "local").clusters.get(uid)!
    expect(parse(cluster.kubeconfig).users[0].user).toEqual({
      "auth-provider": { name: "gcp", config: { scopes: "cloud", mode: "x" } },
    })
    expect(sanitizeKubeconfig(cluster.kubeconfig, parseInsecureOptions(""))._tag).toBe("Refused")
    expect(sanitizeKubeconfig(cluster.kubeconfig, parseInsecureOptions("gcp"))._tag).toBe("Allowed")
  })

  it("refuses plugin flags without --auth-type=plugin", async () => {
    const plugin = await meshctl("create-remote-secret", "--name", "x", "--auth-plugin-name", "gcp")
    expect(plugin.code).not.toBe(0)
    expect(plugin.stderr).toMatch(/--auth-plugin-name requires --auth-type=plugin/)
  })
})

describe("meshctl x workload group create", () => {
  it("prints a valid WorkloadGroup and names a bad flag value", async () => {
    const [ok, badPort] = await Promise.all([
      run("meshctl", [
        "x",
        "workload",
        "group",
        "create",
        "--name",
        "g1",
        "-n",
        "apps",
        "-l",
        "app=g1,tier=web",
        "-a",
        "note=x",
        "-p",
        "http=8080,grpc=9090",
        "-s",
        "g1-sa",
        "--network",
        "n1",
        "--locality",
        "r/z",
        "-w",
        "3",
      ]),
      run("meshctl", ["x", "workload", "group", "create", "--name", "g1", "-n", "apps", "-p", "http=99999"]),
    ])
    expect(ok.code, ok.stderr).toBe(0)
    const parsed = parseConfigDocuments("stdout", ok.stdout)
    expect(parsed.issues).toEqual([])
    expect(parsed.resources[0]).toMatchObject({
      kind: "WorkloadGroup",
      meta: { name: "g1", namespace: "apps" },
      spec: {
        metadata: { labels: { app: "g1", tier: "web" }, annotations: { note: "x" } },
        template: {
          ports: { http: 8080, grpc: 9090 },
          serviceAccount: "g1-sa",
          network: "n1",
          locality: "r/z",
          weight: 3,
        },
      },
    })
    expect(badPort.code).not.toBe(0)
    expect(badPort.stderr).toMatch(/--ports: port of "http"/)
  })
})

const envOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .trimEnd()
      .split("\n")
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  )

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())

describe("meshctl x workload entry configure", () => {
  it("writes the five files from a group in the cluster, or from a file, and names missing inputs", async () => {
    const fromCluster = join(dir, "vm1")
    const fromFile = join(dir, "vm2")
    const groupFile = join(dir, "group.yaml")
    writeFileSync(
      groupFile,
      "apiVersion: networking.mesh.io/v1\nkind: WorkloadGroup\nmetadata: {name: file-vm, namespace: apps}\nspec:\n  template: {serviceAccount: ratings-sa}\n",
    )
    const [cluster, file, noGroup] = await Promise.all([
      meshctl(
        "x",
        "workload",
        "entry",
        "configure",
        "--name",
        "ratings-vm",
        "-n",
        "apps",
        "-o",
        fromCluster,
        "--clusterID",
        "c1",
        "--autoregister",
      ),
      meshctl(
        "x",
        "workload",
        "entry",
        "configure",
        "-f",
        groupFile,
        "-o",
        fromFile,
        "--ingressIP",
        "198.51.100.2",
        "--tokenDuration",
        "7200",
        "--capture-dns=false",
      ),
      meshctl("x", "workload", "entry", "configure", "-o", join(dir, "none")),
    ])
    expect(cluster.code, cluster.stderr).toBe(0)
    const read = (d: string, f: string) => readFileSync(join(d, f), "utf8")
    expect(envOf(read(fromCluster, "cluster.env"))).toMatchObject({
      CANONICAL_SERVICE: "ratings",
      CANONICAL_REVISION: "v1",
      MESH_INBOUND_PORTS: "9080",
      MESH_SERVICE: "ratings-vm.apps",
      POD_NAMESPACE: "apps",
      SERVICE_ACCOUNT: "ratings-sa",
    })
    const mesh = parse(read(fromCluster, "mesh.yaml"))
    expect(mesh.defaultConfig.discoveryAddress).toBe("meshd.mesh-system.svc:15012")
    expect(mesh.defaultConfig.proxyMetadata).toMatchObject({
      FROM_MESH: "yes",
      TRUST_DOMAIN: "vm.example",
      MESH_META_CLUSTER_ID: "c1",
      MESH_META_NETWORK: "vm-net",
      MESH_META_AUTO_REGISTER_GROUP: "ratings-vm",
      MESH_META_DNS_CAPTURE: "true",
    })
    expect(read(fromCluster, "root-cert.pem")).toBe(ROOT_PEM)
    const claims = claimsOf(read(fromCluster, "mesh-token"))
    expect(claims).toMatchObject({ aud: ["mesh-ca"], sub: "system:serviceaccount:apps:ratings-sa" })
    expect(claims.exp - claims.iat).toBe(3600)
    expect(read(fromCluster, "hosts")).toBe("203.0.113.9 meshd.mesh-system.svc\n")

    expect(file.code, file.stderr).toBe(0)
    expect(envOf(read(fromFile, "cluster.env")).MESH_SERVICE).toBe("file-vm.apps")
    const fileClaims = claimsOf(read(fromFile, "mesh-token"))
    expect(fileClaims.exp - fileClaims.iat).toBe(7200)
    expect(parse(read(fromFile, "mesh.yaml")).defaultConfig.proxyMetadata.MESH_META_DNS_CAPTURE).toBeUndefined()
    expect(parse(read(fromFile, "mesh.yaml")).defaultConfig.proxyMetadata.MESH_META_CLUSTER_ID).toBe("Orchestrator")
    expect(read(fromFile, "hosts")).toBe("198.51.100.2 meshd.mesh-system.svc\n")

    expect(noGroup.code).not.toBe(0)
    expect(noGroup.stderr).toMatch(/--file.*--name/)
    expect(existsSync(join(dir, "none"))).toBe(false)
  })
})
