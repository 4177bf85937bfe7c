/**
 * services.MultiClusterServiceAnalyzer (MSH0170) and the multi-cluster inputs: a Service of one
 * namespace and name must agree across clusters on headless mode, type and ports; which remote
 * clusters the primary's remote secrets name; how remote objects join the analysis.
 */
import { describe, expect, it } from "vitest"
import { DEFAULT_ANALYZERS } from "../../../src/services/analysis/analyzers/index.js"
import { formatLog, messageObject } from "../../../src/services/analysis/output.js"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import {
  kubeconfigContexts,
  mergeClusters,
  missingContexts,
  remoteSecretClusters,
} from "../../../src/services/analysis/remote-clusters.js"
import { runAnalysis } from "../../../src/services/analysis/run.js"
import { type Entry, makeSnapshot } from "../../../src/services/analysis/snapshot.js"
import { mesh, ns, service, summary } from "./support.js"

const NAME = "services.MultiClusterServiceAnalyzer"
const analyzer = DEFAULT_ANALYZERS.find((a) => a.name === NAME)!

const read = (cluster: string | undefined, ...documents: ReadonlyArray<string>): ReadonlyArray<Entry> =>
  readDocuments(`${cluster ?? "files"}.yaml`, documents.join("---\n"), "default").entries.map((e) =>
    cluster === undefined ? e : { ...e, cluster },
  )

const run = (...entries: ReadonlyArray<ReadonlyArray<Entry>>) => analyzer.run(makeSnapshot(entries.flat()))

const PORTS = "[{name: http, port: 80, targetPort: 8080}, {name: grpc, port: 9090}]"

describe("services.MultiClusterServiceAnalyzer", () => {
  it("is in the default set", () => {
    expect(DEFAULT_ANALYZERS.map((a) => a.name)).toContain(NAME)
  })

  it("accepts a Service defined the same in every cluster, whatever the order of its ports", () => {
    const reordered = "[{name: grpc, port: 9090}, {name: http, port: 80, targetPort: 8080}]"
    expect(
      run(
        read("default", service("web", "{app: web}", PORTS)),
        read("west", service("web", "{app: web}", reordered)),
        read("east", service("web", "{app: web}", PORTS)),
      ),
    ).toEqual([])
  })

  it("reports ports that differ, naming the differing cluster and the primary", () => {
    const found = run(
      read("default", service("web", "{app: web}", PORTS)),
      read(
        "west",
        service("web", "{app: web}", "[{name: http, port: 80, targetPort: 8081}, {name: grpc, port: 9090}]"),
      ),
      read("east", service("web", "{app: web}", PORTS)),
    )
    expect(summary(found)).toEqual(["MSH0170 Service/default/web"])
    expect(found[0]?.resource?.cluster).toBe("default")
    expect(found[0]?.text).toBe(
      'The service web in namespace "default" is inconsistent across clusters ["default" "west"], which can lead to undefined behaviors. The inconsistent behaviors are: service ports are inconsistent.',
    )
    // A port missing in one cluster is a difference too.
    expect(
      summary(
        run(
          read("default", service("web", "{app: web}", PORTS)),
          read("west", service("web", "{app: web}", "[{name: http, port: 80, targetPort: 8080}]")),
        ),
      ),
    ).toEqual(["MSH0170 Service/default/web"])
  })

  it("reports a type that differs", () => {
    const found = run(
      read("default", service("web", "{app: web}", PORTS)),
      read("west", service("web", "{app: web}", PORTS, "default", "NodePort")),
    )
    expect(found[0]?.text).toContain('clusters ["default" "west"]')
    expect(found[0]?.text).toMatch(/behaviors are: service type is inconsistent\.$/)
  })

  it("reports a headless Service beside a ClusterIP one, naming every cluster, with every reason sorted", () => {
    const headless = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: data}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: tcp, port: 5432}]}
`
    const clusterIp = (ports: string) => `apiVersion: v1
kind: Service
metadata: {name: db, namespace: data}
spec: {selector: {app: db}, ports: ${ports}}
`
    const found = run(
      read("default", clusterIp("[{name: tcp, port: 5432}]")),
      read("east", clusterIp("[{name: tcp, port: 5432}]")),
      read("west", headless),
    )
    expect(summary(found)).toEqual(["MSH0170 Service/data/db"])
    expect(found[0]?.text).toBe(
      'The service db in namespace "data" is inconsistent across clusters ["default" "east" "west"], which can lead to undefined behaviors. The inconsistent behaviors are: service has mixed mode like headless and clusterIP.',
    )
    const both = run(
      read("default", clusterIp("[{name: tcp, port: 5432}]")),
      read("west", clusterIp("[{name: tcp, port: 5433}]")),
    )
    expect(both[0]?.text).toContain("service ports are inconsistent")
    // Files are not defaulted: a type written out differs from one left out, as in the reference.
    const all = run(
      read("default", clusterIp("[{name: tcp, port: 5432}]")),
      read("west", headless.replace("5432", "5433").replace("{clusterIP: None,", "{clusterIP: None, type: ClusterIP,")),
    )
    expect(all[0]?.text).toMatch(
      /behaviors are: service has mixed mode like headless and clusterIP; service ports are inconsistent; service type is inconsistent\.$/,
    )
  })

  it("compares only Services of one namespace and name, read from clusters", () => {
    // Another namespace or name is another Service.
    expect(
      run(
        read("default", service("web", "{app: web}", PORTS)),
        read("west", service("web", "{app: web}", "[{name: http, port: 81}]", "other")),
        read("west", service("api", "{app: web}", "[{name: http, port: 81}]")),
      ),
    ).toEqual([])
    // Files analyzed alone have no cluster: nothing to compare.
    expect(run(read(undefined, service("web", "{app: web}", PORTS)))).toEqual([])
    // One cluster only.
    expect(run(read("default", service("web", "{app: web}", PORTS)))).toEqual([])
  })
})

const kubeconfig = (current: string | undefined) => `apiVersion: v1
kind: Config
clusters: [{name: west-cluster, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: admin, user: {token: t}}]
contexts: [{name: west, context: {cluster: west-cluster, user: admin}}, {name: east, context: {cluster: east-cluster, user: admin}}]
${current === undefined ? "" : `current-context: ${current}`}
`

const secret = (name: string, namespace: string, labels: Record<string, string>, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace, labels },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
})

describe("multi-cluster inputs", () => {
  it("reads a kubeconfig's contexts and finds the ones --remote-contexts names that it lacks", () => {
    expect(kubeconfigContexts(kubeconfig("west"))).toEqual({
      contexts: ["west", "east"],
      currentCluster: "west-cluster",
    })
    expect(kubeconfigContexts(kubeconfig(undefined))?.currentCluster).toBeUndefined()
    expect(kubeconfigContexts("{")).toBeUndefined()
    expect(missingContexts(kubeconfig("west"), ["east", "north", "west"])).toEqual(["north"])
  })

  it("takes the remote clusters from the labelled secrets of the mesh namespace, by their current context's cluster", () => {
    const objects = [
      secret(
        "remote-a",
        "mesh-system",
        { "mesh/multiCluster": "true" },
        { a: kubeconfig("west"), b: kubeconfig("east") },
      ),
      secret("remote-b", "mesh-system", { "istio/multiCluster": "true" }, { c: kubeconfig(undefined) }),
      secret("unlabelled", "mesh-system", {}, { d: kubeconfig("west") }),
      secret("elsewhere", "default", { "mesh/multiCluster": "true" }, { e: kubeconfig("west") }),
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "mesh-system" } },
    ]
    const found = remoteSecretClusters(objects, "mesh-system")
    expect(found.map((c) => [c.clusterId, c.source])).toEqual([
      ["west-cluster", "secret mesh-system/remote-a key a"],
      ["east-cluster", "secret mesh-system/remote-a key b"],
    ])
    expect(found[0]?.kubeconfig).toBe(kubeconfig("west"))
  })

  it("keeps a remote's service discovery objects as its own and adds its other resources to the primary's", () => {
    const vs = (host: string) =>
      mesh("VirtualService", "routes", `{hosts: [${host}], http: [{route: [{destination: {host: ${host}}}]}]}`)
    const primary = read(undefined, service("web", "{app: web}", PORTS), vs("web"))
    const remote = read(
      undefined,
      service("web", "{app: web}", PORTS),
      vs("other"),
      mesh("DestinationRule", "web", "{host: web}"),
    )
    const merged = mergeClusters(primary, [{ cluster: "west", entries: remote }])
    expect(merged.map((e) => `${e.kind}/${e.name}@${e.cluster}`)).toEqual([
      "Service/web@default",
      "VirtualService/routes@default",
      "Service/web@west",
      "DestinationRule/web@default",
    ])
    // The primary's VirtualService (first read) stands.
    expect(merged.find((e) => e.kind === "VirtualService")?.body.hosts).toEqual(["web"])
  })
})

describe("a multi-cluster run", () => {
  it("keeps a finding per cluster for a resource in two clusters and names the cluster in its output", () => {
    const namespaces = [...read("default", ns("shop")), ...read("west", ns("shop"))]
    const result = runAnalysis(makeSnapshot(namespaces), [], {
      analyzers: DEFAULT_ANALYZERS.filter((a) => a.name === "injection.Analyzer"),
      suppressions: [],
      outputThreshold: "Info",
    })
    expect(result.messages.map((m) => `${m.type.code} ${m.resource?.cluster}`)).toEqual([
      "MSH0102 default",
      "MSH0102 west",
    ])
    const [first] = result.messages
    expect(formatLog(first!, false)).toMatch(
      /^Info \[MSH0102\] \[cluster-default\] \(Namespace shop default\.yaml:\d+\) /,
    )
    expect(messageObject(first!)).toMatchObject({ code: "MSH0102", cluster: "default" })
    // Without clusters (one cluster, or files), neither is printed.
    const alone = runAnalysis(makeSnapshot(read(undefined, ns("shop"))), [], {
      analyzers: DEFAULT_ANALYZERS.filter((a) => a.name === "injection.Analyzer"),
      suppressions: [],
      outputThreshold: "Info",
    }).messages
    expect(formatLog(alone[0]!, false)).toMatch(/^Info \[MSH0102\] \(Namespace shop files\.yaml:\d+\) /)
    expect(messageObject(alone[0]!)).not.toHaveProperty("cluster")
  })
})
