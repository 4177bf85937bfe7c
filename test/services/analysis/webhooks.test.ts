/** externalcontrolplane (MSH0163/0164), webhook.Analyzer (MSH0139) and injection.ImageAutoAnalyzer (MSH0146/0147). */
import { describe, expect, it } from "@effect/vitest"
import { urlHost } from "../../../src/services/analysis/analyzers/webhooks.js"
import { analyze, deployment, ns, service, summary } from "./support.js"

const webhookConfig = (kind: "Mutating" | "Validating", name: string, hooks: string, labels = "{}") =>
  `apiVersion: admissionregistration.k8s.io/v1\nkind: ${kind}WebhookConfiguration\nmetadata: {name: ${name}, labels: ${labels}}\nwebhooks: ${hooks}\n`
const hook = (name: string, client: string, selectors = "") =>
  `{name: ${name}, clientConfig: ${client}${selectors === "" ? "" : `, ${selectors}`}}`

describe("externalcontrolplane.ExternalControlPlaneAnalyzer", () => {
  const NAME = "externalcontrolplane.ExternalControlPlaneAnalyzer"
  it("reports the mesh's webhooks with neither URL nor Service, or a malformed URL", () => {
    const found = analyze(
      NAME,
      webhookConfig("Mutating", "mesh-sidecar-injector-external", `[${hook("a.mesh.io", "{}")}]`),
      webhookConfig("Validating", "mesh-validator-external", `[${hook("v.mesh.io", "{url: 'https://[::1/x'}")}]`),
    )
    expect(summary(found)).toEqual([
      "MSH0163 ValidatingWebhookConfiguration//mesh-validator-external",
      "MSH0163 MutatingWebhookConfiguration//mesh-sidecar-injector-external",
    ])
    expect(found[1]?.text).toBe(
      "The hostname () that was provided for the webhook (a.mesh.io) to reach the ingress gateway on the external control plane cluster is blank. Traffic may not flow properly.",
    )
    expect(found[0]?.text).toContain("(https://[::1/x)")
    expect(found[0]?.text).toContain("was provided in an invalid format")
  })

  it("reports an IP address (Info) and accepts host names and Services", () => {
    const found = analyze(
      NAME,
      webhookConfig(
        "Mutating",
        "mesh-sidecar-injector",
        `[${hook("ip.mesh.io", "{url: 'https://10.0.0.1:15017/inject'}")}, ${hook("name.mesh.io", "{url: 'https://meshd.example.com:15017/inject'}")}, ${hook("svc.mesh.io", "{service: {name: meshd, namespace: mesh-system}}")}]`,
      ),
      webhookConfig(
        "Validating",
        "meshd-default-validator",
        `[${hook("v6.mesh.io", "{url: 'https://[fd00::1]:443/validate'}")}]`,
      ),
    )
    expect(summary(found)).toEqual([
      "MSH0164 ValidatingWebhookConfiguration//meshd-default-validator",
      "MSH0164 MutatingWebhookConfiguration//mesh-sidecar-injector",
    ])
    expect(found[0]?.level).toBe("Info")
  })

  it("ignores webhook configurations that are not the mesh's", () => {
    expect(
      analyze(
        NAME,
        webhookConfig("Mutating", "other-injector", `[${hook("a.example.com", "{}")}]`),
        webhookConfig("Validating", "other-validator", `[${hook("b.example.com", "{url: '10.0.0.1'}")}]`),
      ),
    ).toEqual([])
  })

  it("parses URLs as the reference does", () => {
    expect(urlHost("https://example.com:443/x")).toBe("example.com")
    expect(urlHost("https://[fd00::1]:443")).toBe("fd00::1")
    expect(urlHost("https://exa mple.com/")).toBeUndefined()
    expect(urlHost("https://example.com:abc/")).toBeUndefined()
    expect(urlHost(":foo")).toBeUndefined()
    expect(urlHost("example.com/inject")).toBe("")
  })
})

describe("webhook.Analyzer", () => {
  const NAME = "webhook.Analyzer"
  const nsSelector = (value: string) => `namespaceSelector: {matchLabels: {mesh-injection: ${value}}}`
  const meshd = service("meshd", "{app: meshd}", "[{name: https, port: 443}]", "mesh-system")

  it("reports webhooks that inject the same pods twice, naming the others", () => {
    const found = analyze(
      NAME,
      meshd,
      webhookConfig(
        "Mutating",
        "mesh-sidecar-injector",
        `[${hook("ns.sidecar-injector.mesh.io", "{service: {name: meshd, namespace: mesh-system}}", nsSelector("enabled"))}]`,
      ),
      webhookConfig(
        "Mutating",
        "mesh-sidecar-injector-copy",
        `[${hook("copy.sidecar-injector.mesh.io", "{service: {name: meshd, namespace: mesh-system}}", nsSelector("enabled"))}]`,
      ),
    )
    expect([...summary(found)].sort()).toEqual([
      "MSH0139 MutatingWebhookConfiguration//mesh-sidecar-injector",
      "MSH0139 MutatingWebhookConfiguration//mesh-sidecar-injector-copy",
    ])
    expect(found.map((m) => m.text).sort()).toEqual([
      "Webhook overlaps with others: [mesh-sidecar-injector-copy/copy.sidecar-injector.mesh.io]. This may cause injection to occur twice.",
      "Webhook overlaps with others: [mesh-sidecar-injector/ns.sidecar-injector.mesh.io]. This may cause injection to occur twice.",
    ])
  })

  it("accepts disjoint selectors and reports a missing control-plane Service", () => {
    const disjoint = [
      webhookConfig(
        "Mutating",
        "mesh-sidecar-injector",
        `[${hook("ns.sidecar-injector.mesh.io", "{service: {name: meshd, namespace: mesh-system}}", nsSelector("enabled"))}, ${hook("rev.sidecar-injector.mesh.io", "{service: {name: gone, namespace: mesh-system}}", "namespaceSelector: {matchExpressions: [{key: mesh-injection, operator: DoesNotExist}, {key: mesh.io/rev, operator: In, values: [canary]}]}")}]`,
      ),
    ]
    const found = analyze(NAME, meshd, ...disjoint)
    expect(summary(found)).toEqual(["MSH0139 MutatingWebhookConfiguration//mesh-sidecar-injector"])
    expect(found[0]?.text).toBe("Injector refers to a control plane service that does not exist: mesh-system/gone.")
  })

  it("ignores webhooks that are not the mesh's", () => {
    const other = (name: string) =>
      webhookConfig("Mutating", name, `[${hook("inject.example.com", "{service: {name: x, namespace: y}}")}]`)
    expect(analyze(NAME, other("a"), other("b"))).toEqual([])
  })
})

describe("injection.ImageAutoAnalyzer", () => {
  const NAME = "injection.ImageAutoAnalyzer"
  const autoPod = `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: app, image: app:1}, {name: mesh-proxy, image: auto}]}\n`
  const autoDeployment = deployment("d", "{app: d}").replace(
    "containers: [{name: app, image: app:1}]",
    "containers: [{name: app, image: app:1}, {name: mesh-proxy, image: auto}]",
  )
  const injector = webhookConfig(
    "Mutating",
    "mesh-sidecar-injector",
    `[${hook("namespace.sidecar-injector.mesh.io", "{service: {name: meshd, namespace: mesh-system}}", "namespaceSelector: {matchLabels: {mesh-injection: enabled}}")}]`,
  )

  it("reports a pod left with image auto, and a deployment no mesh webhook injects", () => {
    const found = analyze(NAME, autoPod, autoDeployment, injector, ns("default"))
    expect(summary(found)).toEqual(["MSH0147 Pod/default/p", "MSH0146 Deployment/default/d"])
    expect(found[1]?.text).toBe(
      "Deployment d contains `image: auto` but does not match any mesh injection webhook selectors.",
    )
  })

  it("accepts a deployment in a namespace a mesh webhook injects, and ordinary images", () => {
    expect(analyze(NAME, autoDeployment, injector, ns("default", "{mesh-injection: enabled}"))).toEqual([])
    expect(analyze(NAME, deployment("plain", "{app: plain}"), injector)).toEqual([])
  })
})
