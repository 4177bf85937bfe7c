/**
 * The orchestrator's system namespaces are left out of the analysis as the reference does (issue
 * 35): from files, everything in them and their Namespace objects; from a cluster, only their
 * Namespaces, Services, Pods and Deployments (its mesh resources, ConfigMaps and Secrets there are
 * still read).
 */
import { describe, expect, it } from "@effect/vitest"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import {
  outsideSystemNamespaces,
  readFromCluster,
  SYSTEM_NAMESPACES,
} from "../../../src/services/analysis/system-namespaces.js"
import { deployment, mesh, ns, pod, service } from "./support.js"

const entries = (...documents: ReadonlyArray<string>) =>
  readDocuments("f.yaml", documents.join("---\n"), "default").entries

const names = (list: ReturnType<typeof entries>) => list.map((e) => `${e.kind}/${e.namespace}/${e.name}`)

const SYSTEM = ["kube-system", "kube-public", "kube-node-lease", "local-path-storage"]

describe("system namespaces", () => {
  it("are the reference's four", () => {
    expect([...SYSTEM_NAMESPACES].sort()).toEqual([...SYSTEM].sort())
  })

  it("files: every kind in them, and their Namespace objects, are left out; other namespaces stay", () => {
    for (const namespace of SYSTEM) {
      const read = entries(
        ns(namespace),
        service("dns", "{app: dns}", "[{name: dns, port: 53}]", namespace),
        pod("dns", "{app: dns}", "", namespace),
        mesh("VirtualService", "vs", "{hosts: [dns], http: [{route: [{destination: {host: dns}}]}]}", namespace),
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: ${namespace}}\n`,
      )
      expect(read).toHaveLength(5)
      expect(names(read.filter(outsideSystemNamespaces))).toEqual([])
    }
    const kept = entries(ns("kube-systems"), service("dns", "{app: dns}", "[{name: dns, port: 53}]", "apps"))
    expect(names(kept.filter(outsideSystemNamespaces))).toEqual(["Namespace//kube-systems", "Service/apps/dns"])
  })

  it("a cluster: only Namespaces, Services, Pods and Deployments of them are left out", () => {
    const read = entries(
      ns("kube-system"),
      service("dns", "{app: dns}", "[{name: dns, port: 53}]", "kube-system"),
      pod("dns", "{app: dns}", "", "kube-system"),
      deployment("dns", "{app: dns}").replace("namespace: default", "namespace: kube-system"),
      mesh("VirtualService", "vs", "{hosts: [dns], http: [{route: [{destination: {host: dns}}]}]}", "kube-system"),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: kube-system}\n`,
      `apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: kube-public}\n`,
      service("web", "{app: web}", "[{name: http, port: 80}]", "apps"),
      deployment("web", "{app: web}"),
    )
    expect(names(read.filter(readFromCluster))).toEqual([
      "VirtualService/kube-system/vs",
      "ConfigMap/kube-system/cm",
      "Secret/kube-public/s",
      "Service/apps/web",
      "Deployment/default/web",
    ])
  })
})
