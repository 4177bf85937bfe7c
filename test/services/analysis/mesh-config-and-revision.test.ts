/** The analysis mesh config (defaults ← cluster ← --meshConfigFile) and --revision. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  analysisMeshConfig,
  inRevision,
  issueText,
  normalizeRevision,
} from "../../../src/services/analysis/analysis-config.js"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import { defaultMeshConfig, type MeshConfig } from "../../../src/services/mesh-config/index.js"
import { analyzeWith, mesh, ns, summary } from "./support.js"

const resolved = (sources: Parameters<typeof analysisMeshConfig>[0]): MeshConfig => {
  const result = analysisMeshConfig(sources)
  if (Either.isLeft(result)) throw new Error(result.left.map(issueText).join("; "))
  return result.right.value
}

const bare = (name: string, namespace: string, labels = "{}") =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}, labels: ${labels}}\nspec: {containers: [{name: app, image: app:1}]}\n`

describe("analysis mesh config", () => {
  it("is the defaults without sources; the cluster's overrides them and the file overrides the cluster's", () => {
    expect(resolved({}).rootNamespace).toBe(defaultMeshConfig().rootNamespace)
    const both = resolved({
      cluster: {
        file: "configmap mesh-system/mesh key mesh",
        text: "rootNamespace: from-cluster\ntrustDomain: a.local\n",
      },
      file: { file: "mesh.yaml", text: "rootNamespace: from-file\n" },
    })
    expect(both.rootNamespace).toBe("from-file")
    // Fields the file leaves out keep the cluster's value.
    expect(both.trustDomain).toBe("a.local")
  })

  it("names the file and the field of a bad value, and a YAML error", () => {
    const bad = analysisMeshConfig({ file: { file: "mesh.yaml", text: "ingressControllerMode: SOMETIMES\n" } })
    expect(Either.isLeft(bad)).toBe(true)
    const text = Either.isLeft(bad) ? bad.left.map(issueText).join("\n") : ""
    expect(text).toContain("mesh.yaml")
    expect(text).toContain("ingressControllerMode")
    const syntax = analysisMeshConfig({ file: { file: "broken.yaml", text: "rootNamespace: [\n" } })
    expect(Either.isLeft(syntax) ? syntax.left.map(issueText).join("\n") : "").toMatch(/^broken\.yaml: YAML syntax/)
  })

  it("a policy in the configured root namespace selects gateway pods of every namespace", () => {
    const policy = mesh(
      "AuthorizationPolicy",
      "deny-gw",
      "{selector: {matchLabels: {app: gw}}, action: DENY, rules: [{}]}",
      "config-root",
      "security.mesh.io/v1",
    )
    const gatewayPod = bare("gw-0", "prod", "{app: gw, gateway.networking.k8s.io/gateway-name: gw}")
    const run = (meshConfig?: MeshConfig) =>
      summary(analyzeWith("k8sgateway.SelectorAnalyzer", meshConfig ? { meshConfig } : {}, policy, gatewayPod))
    // With the default root (mesh-system) the policy only covers its own namespace.
    expect(run()).toEqual([])
    expect(run(resolved({ file: { file: "mesh.yaml", text: "rootNamespace: config-root\n" } }))).toEqual([
      "MSH0166 AuthorizationPolicy/config-root/deny-gw",
    ])
  })
})

describe("--revision", () => {
  const canaryNs = ns("apps", "{mesh.io/rev: canary}")
  const legacyNs = ns("legacy", "{mesh-injection: enabled}")
  const meshd = (revision: string) => bare(`meshd-${revision}`, "mesh-system", `{app: meshd, mesh.io/rev: ${revision}}`)
  const podProxy = (revision: string | undefined, ...docs: ReadonlyArray<string>) =>
    summary(analyzeWith("injection.PodProxyAnalyzer", revision ? { revision } : {}, ...docs))

  it("pods of a namespace of another running revision are that revision's to analyze", () => {
    const docs = [canaryNs, legacyNs, bare("a", "apps"), bare("b", "legacy"), meshd("canary"), meshd("default")]
    expect(podProxy(undefined, ...docs)).toEqual(["MSH0103 Pod/legacy/b"])
    expect(podProxy("canary", ...docs)).toEqual(["MSH0103 Pod/apps/a"])
  })

  it("a namespace pointing at a revision that does not run is still checked: its pods lack the proxy", () => {
    expect(podProxy(undefined, canaryNs, bare("a", "apps"), meshd("default"))).toEqual(["MSH0103 Pod/apps/a"])
  })

  it("mesh config objects labelled for another revision are left out; unlabelled ones are shared", () => {
    const read = readDocuments(
      "t.yaml",
      [
        `apiVersion: networking.mesh.io/v1\nkind: Sidecar\nmetadata: {name: canary, namespace: a, labels: {mesh.io/rev: canary}}\nspec: {egress: [{hosts: ["./*"]}]}\n`,
        `apiVersion: networking.mesh.io/v1\nkind: Sidecar\nmetadata: {name: shared, namespace: a}\nspec: {egress: [{hosts: ["./*"]}]}\n`,
        ns("b", "{mesh.io/rev: canary}"),
      ].join("---\n"),
      "default",
    )
    const names = (revision: string) => read.entries.filter((e) => inRevision(e, revision)).map((e) => e.name)
    expect(names("default")).toEqual(["shared", "b"])
    expect(names("canary")).toEqual(["canary", "shared", "b"])
    expect(normalizeRevision("")).toBe("default")
  })
})
