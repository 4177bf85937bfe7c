/**
 * End-to-end: `meshctl orch-inject` as a process (the built binary) on a multi-document file and
 * on stdin — a Deployment, a Service, a CronJob and a List of a Pod and a ConfigMap: the pod
 * templates come back injected, the rest exactly as written, in order; running it again over its
 * own output injects the pods again into the same pods; bad input and unsupported sources fail with exit 1 and a reason.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { ContainerNames, InjectAnnotations } from "../../src/services/injection/names.js"
import { kubeconfigYaml, type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { binary, ROOT } from "../support/processes.js"

interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The test's environment without a cluster: no $KUBECONFIG and a HOME without ~/.kube/config. */
const isolatedEnv = (): NodeJS.ProcessEnv => {
  const { KUBECONFIG: _cluster, ...rest } = process.env
  return { ...rest, HOME: mkdtempSync(join(tmpdir(), "orch-inject-home-")), NO_COLOR: "1" }
}

/** meshctl with `args`, `input` on its stdin. */
const meshctl = (args: ReadonlyArray<string>, input = ""): Result => {
  const result = spawnSync(process.execPath, [binary("meshctl"), ...args], {
    cwd: ROOT,
    input,
    encoding: "utf8",
    env: isolatedEnv(),
    timeout: 30_000,
  })
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr }
}

const container = (name: string, port: number) => `      - name: ${name}
        image: example/${name}:1.0
        ports:
        - containerPort: ${port}
        readinessProbe:
          httpGet: {path: /ready, port: ${port}}
        resources:
          requests: {cpu: 100m, memory: 64Mi}`

const DEPLOYMENT = `# the reviews workload
apiVersion: apps/v1
kind: Deployment
metadata:
  name: reviews
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels: {app: reviews}
  template:
    metadata:
      labels: {app: reviews, version: v1}
    spec:
      containers:
${container("reviews", 9080)}
${container("cache", 6379)}
`
const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: reviews   # stays as written
  namespace: shop
spec:
  selector: {app: reviews}
  ports:
  - {name: http, port: 9080}
`
const CRONJOB = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: report
            image: example/report:1.0
`
const LIST = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: debug, namespace: shop}
  spec:
    containers:
    - {name: shell, image: example/shell:1.0}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings, namespace: shop}
  data: {mode: fast}
`
const INPUT = [DEPLOYMENT, SERVICE, CRONJOB, LIST].join("---\n")

// biome-ignore lint/suspicious/noExplicitAny: parsed orchestrator objects are walked loosely in assertions
type Obj = Record<string, any>

const documents = (text: string): Array<Obj> => parseAllDocuments(text).map((d) => d.toJS() as Obj)

const containerNames = (podSpec: Obj): Array<string> => (podSpec.containers as Array<Obj>).map((c) => c.name)

/** The pod template (metadata + spec) was injected: the proxy container beside the app's, the status annotation. */
const expectInjected = (template: Obj, appContainers: ReadonlyArray<string>) => {
  expect(containerNames(template.spec)).toEqual(expect.arrayContaining([...appContainers, ContainerNames.proxy]))
  expect(template.metadata?.annotations?.[InjectAnnotations.status]).toBeDefined()
}

describe("meshctl orch-inject (built binary)", () => {
  let dir: string
  let file: string
  let first: Result

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "orch-inject-"))
    file = join(dir, "workloads.yaml")
    writeFileSync(file, INPUT)
    first = meshctl(["orch-inject", "-f", file])
  })

  it("injects every pod template of a multi-document file and keeps the other documents and the order", () => {
    expect(first.stderr).not.toMatch(/Error/)
    expect(first.code).toBe(0)
    const [deployment, service, cronJob, list, ...rest] = documents(first.stdout)
    expect(rest).toEqual([])
    const original = documents(INPUT)

    expect(deployment!.kind).toBe("Deployment")
    expectInjected(deployment!.spec.template, ["reviews", "cache"])
    // Only the pod template changed.
    expect({ ...deployment!, spec: { ...deployment!.spec, template: undefined } }).toEqual({
      ...original[0]!,
      spec: { ...original[0]!.spec, template: undefined },
    })
    // The template is not given a name or namespace of its own.
    expect(deployment!.spec.template.metadata.name).toBeUndefined()
    expect(deployment!.spec.template.metadata.namespace).toBeUndefined()
    expect(deployment!.spec.template.metadata.labels).toMatchObject({ app: "reviews", version: "v1" })

    // The Service is written as it was, byte for byte (comment included).
    expect(service).toEqual(original[1])
    expect(first.stdout).toContain(`---\n${SERVICE}---\n`)

    expect(cronJob!.kind).toBe("CronJob")
    expectInjected(cronJob!.spec.jobTemplate.spec.template, ["report"])
    expect(cronJob!.spec.schedule).toBe("*/5 * * * *")

    expect(list!.kind).toBe("List")
    const [pod, configMap] = list!.items as Array<Obj>
    expectInjected(pod!, ["shell"])
    expect(pod!.metadata.name).toBe("debug")
    expect(configMap).toEqual(original[3]!.items[1])
  })

  it("gives the same output for the file on stdin (-f -), and writes -o to a file", () => {
    const piped = meshctl(["orch-inject", "-f", "-"], INPUT)
    expect(piped.code).toBe(0)
    expect(piped.stdout).toBe(first.stdout)
    const out = join(dir, "out.yaml")
    const written = meshctl(["orch-inject", "--filename", file, "--output", out])
    expect(written.code).toBe(0)
    expect(written.stdout).toBe("")
    expect(readFileSync(out, "utf8")).toBe(first.stdout)
  })

  it("changes nothing on a second run over its own output", () => {
    const again = meshctl(["orch-inject", "-f", "-"], first.stdout)
    expect(again.code).toBe(0)
    expect(again.stdout).toBe(first.stdout)
    // The pods are injected again (as the reference does), into the same pods: nothing is skipped.
    expect(again.stderr).not.toMatch(/skipped/)
  })

  it("passes a file of unsupported kinds through unchanged", () => {
    const result = meshctl(["orch-inject", "-f", "-"], SERVICE)
    expect(result.code).toBe(0)
    expect(documents(result.stdout)).toEqual(documents(SERVICE))
  })

  it("uses --valuesFile, --injectConfigFile and --meshConfigFile instead of the defaults", () => {
    const values = join(dir, "values.yaml")
    writeFileSync(values, "global:\n  hub: registry.example.com/mesh\n  tag: 9.9.9\n")
    const config = join(dir, "config.yaml")
    writeFileSync(config, "policy: disabled\ninjectedAnnotations:\n  team: platform\n")
    const mesh = join(dir, "mesh.yaml")
    writeFileSync(mesh, "defaultConfig:\n  discoveryAddress: meshd.elsewhere.svc:15012\n")
    const result = meshctl(
      ["orch-inject", "-f", "-", "--valuesFile", values, "--injectConfigFile", config, "--meshConfigFile", mesh],
      DEPLOYMENT,
    )
    expect(result.code).toBe(0)
    const [deployment] = documents(result.stdout)
    const template = deployment!.spec.template
    // Injected although the config's policy is disabled: the user asked for these objects.
    expectInjected(template, ["reviews", "cache"])
    const proxy = (template.spec.containers as Array<Obj>).find((c) => c.name === ContainerNames.proxy)!
    expect(proxy.image).toBe("registry.example.com/mesh/proxyv2:9.9.9")
    expect(template.metadata.annotations.team).toBe("platform")
    expect(JSON.stringify(proxy)).toContain("meshd.elsewhere.svc:15012")
  })

  it("fails naming the document that is not valid YAML", () => {
    const result = meshctl(["orch-inject", "-f", "-"], `${SERVICE}---\nkind: [Deployment\n`)
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(/^Error: stdin document 1: YAML syntax error/m)
  })

  it("fails with a reason for a missing file, no file, or an orchestrator source without files", () => {
    const missing = meshctl(["orch-inject", "-f", join(dir, "nope.yaml")])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/cannot read --filename .*nope\.yaml/)
    const none = meshctl(["orch-inject"])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("filename not specified")
    const cluster = meshctl(["orch-inject", "-f", file, "--injectConfigMapName", "custom"])
    expect(cluster.code).toBe(1)
    expect(cluster.stderr).toContain("no orchestrator configuration: --orchconfig not given")
    const absent = meshctl(["orch-inject", "-f", file, "-c", join(dir, "no-kubeconfig")])
    expect(absent.code).toBe(1)
    expect(absent.stderr).toContain(
      `the orchestrator configuration ${join(dir, "no-kubeconfig")} (from --orchconfig) does not exist`,
    )
    const both = meshctl(["orch-inject", "-f", file, "--injectConfigFile", file, "--injectConfigMapName", "x"])
    expect(both.code).toBe(1)
    expect(both.stderr).toContain("--injectConfigFile and --injectConfigMapName are mutually exclusive")
  })

  it("accepts the spec's other flags", () => {
    const result = meshctl(
      [
        "orch-inject",
        "-f",
        "-",
        "-r",
        "canary",
        "--timeout",
        "5s",
        "--xds-port",
        "15012",
        "--insecure",
        "--plaintext",
        "--authority",
        "meshd.mesh-system.svc",
        "--cert-dir",
        dir,
        "--xds-label",
        "app=meshd",
        "--operatorFileName",
        "op.yaml",
        "-n",
        "shop",
      ],
      SERVICE,
    )
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
  })
})

/** meshctl without blocking the event loop (the orchestrator it reads runs in this process). */
const meshctlAsync = (args: ReadonlyArray<string>, input = "", env: NodeJS.ProcessEnv = {}): Promise<Result> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [binary("meshctl"), ...args], {
      cwd: ROOT,
      env: { ...isolatedEnv(), ...env },
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString()
    })
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
    child.stdin.end(input)
  })

describe("meshctl orch-inject reading the injector and mesh ConfigMaps from a cluster", () => {
  let orchestrator: Orchestrator
  let kubeconfig: string
  const configMap = (name: string, data: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "mesh-system" },
    data,
  })

  beforeAll(async () => {
    orchestrator = await startOrchestrator({ namespaces: ["default", "mesh-system"] })
    kubeconfig = orchestrator.kubeconfig()
    orchestrator.put(
      configMap("mesh-sidecar-injector", {
        config: "policy: enabled\ninjectedAnnotations:\n  team: from-cluster\n",
        values: "global:\n  hub: cluster.example.com/mesh\n  tag: 1.2.3\n",
      }),
    )
    orchestrator.put(configMap("mesh", { mesh: "defaultConfig:\n  discoveryAddress: meshd.cluster.svc:15012\n" }))
    orchestrator.put(
      configMap("mesh-sidecar-injector-canary", { config: "policy: enabled\n", values: "global:\n  tag: canary\n" }),
    )
  })
  afterAll(() => orchestrator.close())

  it("injects with the cluster's config, values and mesh config", async () => {
    const result = await meshctlAsync(["orch-inject", "-f", "-", "--orchconfig", kubeconfig], DEPLOYMENT)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const template = documents(result.stdout)[0]!.spec.template
    expectInjected(template, ["reviews", "cache"])
    const proxy = (template.spec.containers as Array<Obj>).find((c) => c.name === ContainerNames.proxy)!
    expect(proxy.image).toBe("cluster.example.com/mesh/proxyv2:1.2.3")
    expect(template.metadata.annotations.team).toBe("from-cluster")
    expect(JSON.stringify(proxy)).toContain("meshd.cluster.svc:15012")
    expect(
      orchestrator.requestCount({
        verb: "get",
        path: "/api/v1/namespaces/mesh-system/configmaps/mesh-sidecar-injector",
      }),
    ).toBe(1)
  })

  it("takes a file over the cluster for that input only, and the revision's injector ConfigMap", async () => {
    const mesh = join(mkdtempSync(join(tmpdir(), "orch-inject-")), "mesh.yaml")
    writeFileSync(mesh, "defaultConfig:\n  discoveryAddress: meshd.file.svc:15012\n")
    const result = await meshctlAsync(
      ["orch-inject", "-f", "-", "-c", kubeconfig, "--meshConfigFile", mesh, "--revision", "canary"],
      DEPLOYMENT,
    )
    expect(result.code).toBe(0)
    const proxy = (documents(result.stdout)[0]!.spec.template.spec.containers as Array<Obj>).find(
      (c) => c.name === ContainerNames.proxy,
    )!
    expect(proxy.image).toMatch(/:canary$/)
    expect(JSON.stringify(proxy)).toContain("meshd.file.svc:15012")
  })

  it("names the ConfigMap, the key and the server when they are missing", async () => {
    const missing = await meshctlAsync(
      ["orch-inject", "-f", "-", "-c", kubeconfig, "--injectConfigMapName", "nope"],
      DEPLOYMENT,
    )
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`ConfigMap mesh-system/nope not found on ${orchestrator.url}`)
    orchestrator.put(configMap("mesh-empty", { other: "x" }))
    const noKey = await meshctlAsync(
      ["orch-inject", "-f", "-", "-c", kubeconfig, "--meshConfigMapName", "mesh-empty"],
      DEPLOYMENT,
    )
    expect(noKey.code).toBe(1)
    expect(noKey.stderr).toContain(`ConfigMap mesh-system/mesh-empty on ${orchestrator.url} has no key "mesh"`)
  })

  it("sends --as, --as-group and --as-uid as impersonation headers", async () => {
    const seen: Array<IncomingHttpHeaders> = []
    const server = createServer((req, res) => {
      seen.push(req.headers)
      res.writeHead(404, { "Content-Type": "application/json" })
      res.end(JSON.stringify({ kind: "Status", reason: "NotFound", message: "not here", code: 404 }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const config = join(mkdtempSync(join(tmpdir(), "orch-inject-")), "kubeconfig")
    writeFileSync(config, kubeconfigYaml({ server: url }))
    const result = await meshctlAsync(
      [
        "orch-inject",
        "-f",
        "-",
        "-c",
        config,
        "--as",
        "jane",
        "--as-group",
        "ops",
        "--as-group",
        "dev",
        "--as-uid",
        "42",
      ],
      DEPLOYMENT,
    )
    server.close()
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`not found on ${url}`)
    expect(seen[0]?.["impersonate-user"]).toBe("jane")
    expect(seen[0]?.["impersonate-group"]).toBe("ops, dev")
    expect(seen[0]?.["impersonate-uid"]).toBe("42")
  })
})

describe("meshctl orch-inject native sidecars (ENABLE_NATIVE_SIDECARS)", () => {
  let orchestrator: Orchestrator
  const node = (name: string, kubeletVersion: string) =>
    orchestrator.put({ apiVersion: "v1", kind: "Node", metadata: { name }, status: { nodeInfo: { kubeletVersion } } })
  /** Where the proxy went: "native" (an init container restarting Always) or "container". */
  const proxyPlace = (stdout: string): string => {
    const spec = documents(stdout)[0]!.spec.template.spec
    const init = ((spec.initContainers ?? []) as Array<Obj>).find((c) => c.name === ContainerNames.proxy)
    if (init !== undefined) return init.restartPolicy === "Always" ? "native" : "init without restartPolicy"
    return containerNames(spec).includes(ContainerNames.proxy) ? "container" : "none"
  }

  beforeAll(async () => {
    orchestrator = await startOrchestrator({ namespaces: ["default", "mesh-system"] })
    orchestrator.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "mesh-sidecar-injector", namespace: "mesh-system" },
      data: { config: "policy: enabled\n", values: "global: {}\n" },
    })
    orchestrator.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "mesh", namespace: "mesh-system" },
      data: { mesh: "" },
    })
  })
  afterAll(() => orchestrator.close())

  it("offline: auto (the default) is off, true is on, an unknown word is off with a warning", async () => {
    expect(proxyPlace((await meshctlAsync(["orch-inject", "-f", "-"], DEPLOYMENT)).stdout)).toBe("container")
    const on = await meshctlAsync(["orch-inject", "-f", "-"], DEPLOYMENT, { ENABLE_NATIVE_SIDECARS: "true" })
    expect(on.code).toBe(0)
    expect(proxyPlace(on.stdout)).toBe("native")
    const odd = await meshctlAsync(["orch-inject", "-f", "-"], DEPLOYMENT, { ENABLE_NATIVE_SIDECARS: "yes" })
    expect(proxyPlace(odd.stdout)).toBe("container")
    expect(odd.stderr).toContain("ENABLE_NATIVE_SIDECARS")
  })

  it("with the cluster's injector: auto asks the nodes' kubelets (all at least 1.33), false stays off", async () => {
    const run = (env: NodeJS.ProcessEnv = {}) =>
      meshctlAsync(["orch-inject", "-f", "-", "--orchconfig", orchestrator.kubeconfig()], DEPLOYMENT, env)
    node("a", "v1.33.0")
    node("b", "v1.34.2")
    const auto = await run()
    expect(auto.stderr).toBe("")
    expect(proxyPlace(auto.stdout)).toBe("native")
    expect(proxyPlace((await run({ ENABLE_NATIVE_SIDECARS: "false" })).stdout)).toBe("container")
    node("c", "v1.32.5")
    expect(proxyPlace((await run()).stdout)).toBe("container")
  })
})
