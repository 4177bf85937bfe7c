/**
 * `meshctl analyze` as a process through the built binary: messages with file:line, thresholds
 * and exit codes, --suppress, -L, -o json/yaml, directories, unreadable input, and --use-orch
 * against the fake orchestrator API server (it runs in this process: the CLI runs asynchronously).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { REFERENCE_VALIDATED_KINDS } from "../../../../src/services/analysis/analyzer-docs.js"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { meshCustomResources } from "../../../support/orchestrator/mesh-crds.js"
import { run } from "../../../support/processes.js"

const meshctl = (...args: ReadonlyArray<string>) => run("meshctl", args)

/** The reference mesh's default analyzers (its `All()`), by the names `--analyzer` takes. */
const REFERENCE_DEFAULT_ANALYZERS = [
  "annotations.K8sAnalyzer",
  "authn.BlockedCIDRsAnalyzer",
  "auth.AuthorizationPoliciesAnalyzer",
  "conditions.ConditionAnalyzer",
  "deployment.MultiServiceAnalyzer",
  "applicationUID.Analyzer",
  "destinationrule.CaCertificateAnalyzer",
  "destinationrule.SubsetSelectPodAnalyzer",
  "deprecation.DeprecationAnalyzer",
  "envoyfilter.EnvoyPatchAnalyzer",
  "externalcontrolplane.ExternalControlPlaneAnalyzer",
  "gateway.IngressGatewayPortAnalyzer",
  "gateway.CertificateAnalyzer",
  "gateway.SecretAnalyzer",
  "gateway.ConflictingGatewayAnalyzer",
  "injection.Analyzer",
  "injection.ImageAnalyzer",
  "injection.ImageAutoAnalyzer",
  "k8sgateway.SelectorAnalyzer",
  "k8sgateway.CRDVersionAnalyzer",
  "meshnetworks.MeshNetworksAnalyzer",
  "services.MultiClusterServiceAnalyzer",
  "service.PortNameAnalyzer",
  "sidecar.SelectorAnalyzer",
  "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
  "virtualservice.DestinationHostAnalyzer",
  "virtualservice.DestinationRuleAnalyzer",
  "virtualservice.GatewayAnalyzer",
  "virtualservice.JWTClaimRouteAnalyzer",
  "serviceentry.Analyzer",
  "serviceentry.ConflictingServiceEntryProtocolAnalyzer",
  "webhook.Analyzer",
  "telemetry.ProviderAnalyzer",
  "telemetry.SelectorAnalyzer",
  "telemetry.DefaultSelectorAnalyzer",
  "telemetry.LightstepAnalyzer",
  ...REFERENCE_VALIDATED_KINDS.map((kind) => `schema.ValidationAnalyzer.${kind}`),
]

/** Line 13 holds `host: ratings`, line 9 the gateway, line 20 the Service's port name. */
const ROUTES = `# routes
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: reviews
  namespace: default
spec:
  hosts: [reviews]
  gateways: [mesh]
  http:
  - route:
    - destination:
        host: ratings
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec:
  selector: {app: reviews}
  ports: [{name: web, port: 9080}]
`
const CLEAN = `apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: default}
spec:
  selector: {app: ratings}
  ports: [{name: http, port: 9080}]
`
const OTHER_NAMESPACE = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: data}
spec:
  ports: [{name: db, port: 5432}]
`

let dir: string
const file = (name: string, text: string): string => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "meshctl-analyze-"))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("meshctl analyze <file>", () => {
  it("prints each message with its resource and file:line, and exits 79 at the default Error threshold", async () => {
    const routes = file("routes.yaml", ROUTES)
    const result = await meshctl("analyze", routes)
    expect(result.stdout.split("\n").filter((l) => l !== "")).toEqual([
      `Error [MSH0101] (VirtualService default/reviews ${routes}:13) Referenced host not found: "ratings"`,
      `Info [MSH0118] (Service default/reviews ${routes}:20) Port name web (port: 9080, targetPort: 9080) doesn't follow the naming convention of the mesh's ports.`,
    ])
    expect(result.stderr).toContain("Analyzers found issues when analyzing namespace: default.")
    expect(result.code).toBe(79)
  })

  it("reads directories recursively and passes once every reference resolves", async () => {
    const tree = join(dir, "tree")
    mkdirSync(join(tree, "nested"), { recursive: true })
    writeFileSync(join(tree, "routes.yaml"), ROUTES)
    writeFileSync(join(tree, "nested", "ratings.yml"), CLEAN)
    writeFileSync(join(tree, "nested", "notes.txt"), "not: [yaml")
    const result = await meshctl("analyze", tree)
    expect(result.stdout).not.toContain("MSH0101")
    expect(result.stdout).toContain("MSH0118")
    expect(result.code).toBe(0)
  })

  it("says so when nothing is found", async () => {
    const result = await meshctl("analyze", file("clean.yaml", CLEAN))
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("✔ No validation issues found when analyzing namespace: default.")
    expect(result.code).toBe(0)
  })

  it("--failure-threshold and --output-threshold decide what fails and what prints", async () => {
    const routes = file("routes.yaml", ROUTES)
    expect(
      (
        await meshctl(
          "analyze",
          "--failure-threshold",
          "Info",
          file("info-only.yaml", ROUTES.replace("host: ratings", "host: reviews")),
        )
      ).code,
    ).toBe(79)
    const errorsOnly = await meshctl("analyze", "--output-threshold", "Error", routes)
    expect(errorsOnly.stdout).toContain("MSH0101")
    expect(errorsOnly.stdout).not.toContain("MSH0118")
    const infoOnly = await meshctl(
      "analyze",
      "--output-threshold",
      "Warning",
      file("info.yaml", ROUTES.replace("host: ratings", "host: reviews")),
    )
    expect(infoOnly.stdout).toBe("")
    expect(infoOnly.code).toBe(0)
    expect((await meshctl("analyze", "--failure-threshold", "Bogus", routes)).code).toBe(1)
  })

  it("--suppress hides a code on the resources its pattern matches", async () => {
    const routes = file("routes.yaml", ROUTES)
    const suppressed = await meshctl(
      "analyze",
      routes,
      "-S",
      "MSH0101=VirtualService reviews.default",
      "--suppress",
      "MSH0118=Service *",
    )
    expect(suppressed.stdout).toBe("")
    expect(suppressed.code).toBe(0)
    const other = await meshctl("analyze", routes, "-S", "MSH0101=VirtualService other.*")
    expect(other.stdout).toContain("MSH0101")
    expect(other.code).toBe(79)
  })

  it("-L lists the analyzers without analyzing; --analyzer runs only those named", async () => {
    const list = await meshctl("analyze", "-L")
    expect(list.stdout).toContain("Available analyzers:")
    expect(list.stdout.match(/^\* /gm)?.length ?? 0).toBeGreaterThanOrEqual(30)
    const only = await meshctl("analyze", "--analyzer", "service.PortNameAnalyzer", file("routes.yaml", ROUTES))
    expect(only.stdout).toContain("MSH0118")
    expect(only.stdout).not.toContain("MSH0101")
  })

  it("--analyzer ignores unknown names, as the reference does: with none known the default set runs", async () => {
    const routes = file("routes.yaml", ROUTES)
    const unknownOnly = await meshctl("analyze", "--analyzer", "no.SuchAnalyzer", routes)
    expect(unknownOnly.stdout).toContain("MSH0101")
    expect(unknownOnly.stdout).toContain("MSH0118")
    expect(unknownOnly.code).toBe(79)
    expect(unknownOnly.stderr).toContain("unknown analyzer(s) ignored: no.SuchAnalyzer; running the default set")
    const withKnown = await meshctl(
      "analyze",
      "--analyzer",
      "no.SuchAnalyzer",
      "--analyzer",
      "service.PortNameAnalyzer",
      routes,
    )
    expect(withKnown.stdout).toContain("MSH0118")
    expect(withKnown.stdout).not.toContain("MSH0101")
    expect(withKnown.code).toBe(0)
    expect(withKnown.stderr).toContain("unknown analyzer(s) ignored: no.SuchAnalyzer (see --list-analyzers)")
  })

  it("schema errors of mesh kinds are their kind's schema.ValidationAnalyzer's: --analyzer selects them", async () => {
    const invalid = file(
      "invalid.yaml",
      `apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  selector: {mesh: ingressgateway}
---
${CLEAN.replace("http", "web")}`,
    )
    const byDefault = await meshctl("analyze", invalid)
    expect(byDefault.stdout).toContain("Error [MSH0106] (Gateway default/gw")
    expect(byDefault.stdout).toContain("MSH0118")
    const other = await meshctl("analyze", "--analyzer", "service.PortNameAnalyzer", invalid)
    expect(other.stdout).not.toContain("MSH0106")
    expect(other.stdout).toContain("MSH0118")
    const validation = await meshctl("analyze", "--analyzer", "schema.ValidationAnalyzer.Gateway", invalid)
    expect(validation.stdout).toContain("Error [MSH0106] (Gateway default/gw")
    expect(validation.stdout).not.toContain("MSH0118")
    expect(validation.code).toBe(79)
    const otherKind = await meshctl("analyze", "--analyzer", "schema.ValidationAnalyzer.DestinationRule", invalid)
    expect(otherKind.stdout).toBe("")
    expect(otherKind.code).toBe(0)
  })

  it("leaves out everything in the orchestrator's system namespaces, as the reference does", async () => {
    const inNamespace = (namespace: string) =>
      `apiVersion: v1
kind: Namespace
metadata: {name: ${namespace}}
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: ${namespace}}
spec:
  ports: [{name: dns, port: 53}]
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: dns, namespace: ${namespace}}
spec:
  hosts: [dns]
  http: [{route: [{destination: {host: nowhere}}]}]
`
    const system = ["kube-system", "kube-public", "kube-node-lease", "local-path-storage"]
    const files = [...system, "apps"].map((namespace) => file(`${namespace}.yaml`, inNamespace(namespace)))
    const result = await meshctl("analyze", "-A", ...files)
    for (const namespace of system) expect(result.stdout).not.toContain(`${namespace}/`)
    expect(result.stdout).toContain("(Service apps/dns ")
    expect(result.stdout).toContain("(VirtualService apps/dns ")
    expect(result.stdout).toContain("(Namespace apps ")
  })

  it("runs the reference's default set: opt-in analyzers run only when named", async () => {
    const list = await meshctl("analyze", "-L")
    const [defaults = "", optIn = ""] = list.stdout.split("Opt-in analyzers")
    const names = (text: string) => [...text.matchAll(/^\* (\S+):$/gm)].map((m) => m[1])
    // The reference's All(), in its order (its analyzer names; the schema validators here are one).
    expect(names(defaults)).toEqual(REFERENCE_DEFAULT_ANALYZERS)
    expect(names(optIn)).toEqual(["annotations.AlphaAnalyzer", "peerauthentication.IneffectivePolicyAnalyzer"])
    const alpha = file(
      "alpha.yaml",
      `apiVersion: v1
kind: Service
metadata:
  name: ratings
  namespace: default
  annotations: {alpha.mesh.io/kubernetes-serviceaccounts: ratings}
spec:
  selector: {app: ratings}
  ports: [{name: http, port: 9080}]
`,
    )
    const byDefault = await meshctl("analyze", alpha)
    expect(byDefault.stdout).not.toContain("MSH0136")
    expect(byDefault.code).toBe(0)
    const named = await meshctl("analyze", "--analyzer", "annotations.AlphaAnalyzer", alpha)
    expect(named.stdout).toContain("MSH0136")
    expect(named.stdout).toContain("(Service default/ratings ")
  })

  it("-o json and -o yaml print the message objects", async () => {
    const routes = file("routes.yaml", ROUTES)
    const json = await meshctl("analyze", "-o", "json", routes)
    const messages = JSON.parse(json.stdout) as Array<Record<string, string>>
    expect(messages[0]).toMatchObject({
      code: "MSH0101",
      level: "Error",
      name: "ReferencedResourceNotFound",
      origin: "VirtualService default/reviews",
      reference: `${routes}:13`,
      message: 'Referenced host not found: "ratings"',
    })
    expect(json.code).toBe(79)
    const yaml = await meshctl("analyze", "-o", "yaml", routes)
    expect(yaml.stdout).toContain("code: MSH0101")
  })

  it("reports schema errors and unreadable documents; --ignore-unknown skips the latter", async () => {
    const bad = file(
      "bad.yaml",
      `apiVersion: networking.mesh.io/v1\nkind: DestinationRule\nmetadata: {name: dr}\nspec:\n  host: 12\n---\napiVersion: networking.mesh.io/v1\nkind: Nonsense\nmetadata: {name: x}\n`,
    )
    const result = await meshctl("analyze", bad)
    expect(result.stdout).toContain(
      `Error [MSH0106] (DestinationRule default/dr ${bad}:5) Schema validation error: spec.host`,
    )
    expect(result.stderr).toContain("unknown kind Nonsense")
    const unknownOnly = file("unknown.yaml", `apiVersion: networking.mesh.io/v1\nkind: Nonsense\nmetadata: {name: x}\n`)
    expect((await meshctl("analyze", unknownOnly)).code).toBe(1)
    const ignored = await meshctl("analyze", "--ignore-unknown", unknownOnly)
    expect(ignored.stderr).not.toContain("Nonsense")
    expect(ignored.code).toBe(0)
  })

  it("-n scopes the report to one namespace; -A reports all", async () => {
    const both = [file("routes.yaml", ROUTES), file("other.yaml", OTHER_NAMESPACE)]
    expect((await meshctl("analyze", "-n", "data", ...both)).stdout).not.toContain("reviews")
    const all = await meshctl("analyze", "-A", ...both)
    expect(all.stdout).toContain("Service data/db")
    expect(all.stdout).toContain("Service default/reviews")
  })

  it("--meshConfigFile with a bad value fails naming the file and the field", async () => {
    const bad = file("bad-mesh.yaml", "rootNamespace: config-root\ningressControllerMode: SOMETIMES\n")
    const result = await meshctl("analyze", "--meshConfigFile", bad, file("ratings.yaml", CLEAN))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${bad}: ingressControllerMode`)
  })

  it("files alone assume the default ingress gateway's Pod and Service, unless the ingress controller is off", async () => {
    const gateway = (port: number) =>
      file(
        `gateway-${port}.yaml`,
        `apiVersion: networking.mesh.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: default}\nspec:\n  selector: {mesh: ingressgateway}\n  servers: [{port: {number: ${port}, name: p, protocol: HTTP}, hosts: ['*']}]\n`,
      )
    const onDefault = await meshctl("analyze", "-A", gateway(80))
    expect(onDefault.stdout).toBe("")
    expect(onDefault.code).toBe(0)
    const badPort = await meshctl("analyze", "-A", gateway(8080))
    expect(badPort.stdout).toContain("Warning [MSH0162] (Gateway default/gw")
    const off = file("ingress-off.yaml", 'ingressControllerMode: "OFF"\n')
    const withoutIngress = await meshctl("analyze", "-A", "--meshConfigFile", off, gateway(80))
    expect(withoutIngress.stdout).toContain('Referenced selector not found: "mesh=ingressgateway"')
    expect(withoutIngress.code).toBe(79)
  })
})

describe("meshctl analyze --use-orch", () => {
  let orchestrator: Orchestrator
  let kubeconfig: string

  beforeAll(async () => {
    orchestrator = await startOrchestrator({ namespaces: ["default"], customResources: meshCustomResources() })
    kubeconfig = orchestrator.kubeconfig()
    orchestrator.put({
      apiVersion: "networking.mesh.io/v1",
      kind: "VirtualService",
      metadata: { name: "reviews", namespace: "default" },
      spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "ratings" } }] }] },
    })
    orchestrator.put({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "reviews", namespace: "default" },
      spec: { selector: { app: "reviews" }, ports: [{ name: "http", port: 9080 }] },
    })
  })
  afterAll(async () => {
    await orchestrator?.close()
  })

  /** A policy selecting the gateway-API gateway pod of `gateways`: reported from the root namespace only. */
  const rootPolicy = (namespace: string) => ({
    apiVersion: "security.mesh.io/v1",
    kind: "AuthorizationPolicy",
    metadata: { name: "deny-gw", namespace },
    spec: { selector: { matchLabels: { app: "gw" } }, action: "DENY", rules: [{}] },
  })
  const namespace = (name: string, labels: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels },
  })
  const pod = (name: string, ns: string, labels: Record<string, string> = {}) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels },
    spec: { containers: [{ name: "app", image: "app:1" }] },
  })

  it("-r reads the revision's mesh ConfigMap, --meshConfigFile overrides it, and injection follows -r", async () => {
    for (const [name, labels] of [
      ["mesh-system", {}],
      ["cm-root", { "mesh-injection": "disabled" }],
      ["file-root", { "mesh-injection": "disabled" }],
      ["gateways", { "mesh-injection": "disabled" }],
      ["canary-apps", { "mesh.io/rev": "canary" }],
      ["legacy-apps", { "mesh-injection": "enabled" }],
    ] as const)
      orchestrator.put(namespace(name, labels))
    orchestrator.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "mesh-canary", namespace: "mesh-system" },
      data: { mesh: "rootNamespace: cm-root\nnotAMeshField: 1\n" },
    })
    orchestrator.put(rootPolicy("cm-root"))
    orchestrator.put(rootPolicy("file-root"))
    orchestrator.put(pod("gw-0", "gateways", { app: "gw", "gateway.networking.k8s.io/gateway-name": "gw" }))
    orchestrator.put(pod("meshd-default", "mesh-system", { app: "meshd" }))
    orchestrator.put(pod("meshd-canary", "mesh-system", { app: "meshd", "mesh.io/rev": "canary" }))
    orchestrator.put(pod("a", "canary-apps"))
    orchestrator.put(pod("b", "legacy-apps"))

    const meshFile = file("mesh.yaml", "rootNamespace: file-root\n")
    const result = await meshctl("analyze", "-k", "-A", "-c", kubeconfig, "-r", "canary", "--meshConfigFile", meshFile)
    // mesh-canary (not mesh) was read: its unknown field is warned about.
    expect(result.stderr).toContain("configmap mesh-system/mesh-canary key mesh: unknown field notAMeshField ignored")
    // The file's rootNamespace overrides the ConfigMap's.
    expect(result.stdout).toContain("[MSH0166] (AuthorizationPolicy file-root/deny-gw)")
    expect(result.stdout).not.toContain("[MSH0166] (AuthorizationPolicy cm-root/deny-gw")
    // The canary namespace's pod is checked; the default revision's (running) is left to -r default.
    expect(result.stdout).toContain("[MSH0103] (Pod canary-apps/a)")
    expect(result.stdout).not.toContain("Pod legacy-apps/b")
  })

  it("analyzes the cluster's objects, merged with the files given", async () => {
    const live = await meshctl("analyze", "-k", "-c", kubeconfig)
    expect(live.stdout).toContain(
      'Error [MSH0101] (VirtualService default/reviews) Referenced host not found: "ratings"',
    )
    expect(live.stdout).toContain("Info [MSH0102] (Namespace default)")
    expect(live.code).toBe(79)
    // The file adds the missing Service: the cluster plus the file has no error left.
    const merged = await meshctl("analyze", "-k", "-c", kubeconfig, file("ratings.yaml", CLEAN))
    expect(merged.stdout).not.toContain("MSH0101")
    expect(merged.code).toBe(0)
  })

  it("fails when the cluster cannot be reached", async () => {
    const result = await meshctl("analyze", "-k", "-c", join(dir, "missing-kubeconfig"))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("missing-kubeconfig")
  })
})
