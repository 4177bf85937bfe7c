/**
 * End-to-end: the reference injector's rules of issue 37 (points 3, 4, 6, 7, 9, 10) through the
 * built `meshctl orch-inject`: values keys (proxy_init.image, mountMtlsCerts, a null limit, CNI
 * with its validation container), the lifecycle hooks and a native sidecar's probes moved to the
 * agent, COMPLIANCE_POLICY from the environment, a gateway's unprivileged-port sysctl, the
 * workload's owner; and re-injection of the output, which must give the same documents.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { binary, ROOT } from "../support/processes.js"

// biome-ignore lint/suspicious/noExplicitAny: parsed orchestrator objects are walked loosely in assertions
type Obj = Record<string, any>

const run = (args: ReadonlyArray<string>, input: string, env: NodeJS.ProcessEnv = {}) => {
  const { KUBECONFIG: _cluster, ...rest } = process.env
  const result = spawnSync(process.execPath, [binary("meshctl"), "orch-inject", "-f", "-", ...args], {
    cwd: ROOT,
    input,
    encoding: "utf8",
    env: { ...rest, HOME: mkdtempSync(join(tmpdir(), "orch-inject-rules-home-")), NO_COLOR: "1", ...env },
    timeout: 30_000,
  })
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr }
}

const documents = (text: string): Array<Obj> => parseAllDocuments(text).map((d) => d.toJS() as Obj)

const WORKLOADS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: reviews, namespace: shop}
spec:
  selector: {matchLabels: {app: reviews}}
  template:
    metadata:
      labels: {app: reviews}
      annotations: {traffic.sidecar.istio.io/kubevirtInterfaces: net1}
    spec:
      initContainers:
      - name: log-shipper
        image: example/shipper:2
        restartPolicy: Always
        ports: [{containerPort: 2020, name: metrics}]
        readinessProbe: {httpGet: {path: /ready, port: metrics}}
      containers:
      - name: reviews
        image: example/reviews:1.0
        ports: [{containerPort: 9080, name: http}]
        lifecycle:
          preStop: {httpGet: {path: /drain, port: http}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ingress, namespace: edge}
spec:
  selector: {matchLabels: {app: ingress}}
  template:
    metadata:
      labels: {app: ingress}
      annotations: {inject.mesh.io/templates: gateway}
    spec:
      containers:
      - {name: mesh-proxy, image: auto}
`

const VALUES = `global:
  hub: registry.example/mesh
  tag: "2.0"
  mountMtlsCerts: true
  proxy_init: {image: iptables-only}
  proxy:
    resources:
      limits: {cpu: null}
`

describe("meshctl orch-inject: the reference's injection rules (built binary)", () => {
  let dir = ""
  let first = { code: -1, stdout: "", stderr: "" }
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "orch-inject-rules-"))
    writeFileSync(join(dir, "values.yaml"), VALUES)
    first = run(["--valuesFile", join(dir, "values.yaml")], WORKLOADS, { COMPLIANCE_POLICY: "fips-140-3" })
  })

  it("writes the sidecar as the reference's templates do", () => {
    expect(first.code, first.stderr).toBe(0)
    const [reviews] = documents(first.stdout)
    const spec = reviews!.spec.template.spec
    const init = spec.initContainers.find((c: Obj) => c.name === "mesh-init")
    const proxy = spec.containers.find((c: Obj) => c.name === "mesh-proxy")
    // proxy_init.image for the capture container, the proxy's own image for the proxy.
    expect(init.image).toBe("registry.example/mesh/iptables-only:2.0")
    expect(proxy.image).toBe("registry.example/mesh/proxyv2:2.0")
    expect(init.args.join(" ")).toContain("-k net1")
    expect(proxy.resources).toEqual({ requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "1024Mi" } })
    expect(spec.volumes).toContainEqual({ name: "mesh-certs", secret: { optional: true, secretName: "mesh.default" } })
    const env = Object.fromEntries(proxy.env.map((e: Obj) => [e.name, e.value]))
    expect(env.COMPLIANCE_POLICY).toBe("fips-140-3")
    expect(env.MESH_META_OWNER).toBe("kubernetes://apis/apps/v1/namespaces/shop/deployments/reviews")
    // The hook and the native sidecar's probe go to the agent, their actions into the probers.
    const app = spec.containers.find((c: Obj) => c.name === "reviews")
    expect(app.lifecycle.preStop.httpGet).toEqual({ path: "/app-lifecycle/reviews/prestopz", port: 15020 })
    const shipper = spec.initContainers.find((c: Obj) => c.name === "log-shipper")
    expect(shipper.readinessProbe.httpGet).toEqual({ path: "/app-health/log-shipper/readyz", port: 15020 })
    expect(JSON.parse(env.MESH_ORCH_APP_PROBERS)).toEqual({
      "/app-health/log-shipper/readyz": { httpGet: { path: "/ready", port: 2020 } },
      "/app-lifecycle/reviews/prestopz": { httpGet: { path: "/drain", port: 9080 } },
    })
  })

  it("writes the gateway's security context and revision annotation", () => {
    const [, ingress] = documents(first.stdout)
    const template = ingress!.spec.template
    expect(template.spec.securityContext).toEqual({
      sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }],
    })
    expect(template.metadata.annotations["mesh.io/rev"]).toBe("default")
    expect(template.metadata.labels["mesh.io/rev"]).toBeUndefined()
    const proxy = template.spec.containers.find((c: Obj) => c.name === "mesh-proxy")
    expect(proxy.securityContext).toEqual({ runAsUser: 1337, runAsGroup: 1337 })
  })

  it("re-injects its own output into the same documents", () => {
    const again = run(["--valuesFile", join(dir, "values.yaml")], first.stdout, { COMPLIANCE_POLICY: "fips-140-3" })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toBe(first.stdout)
  })

  it("with CNI: an unprivileged validation container instead of mesh-init", () => {
    writeFileSync(join(dir, "cni.yaml"), "cni:\n  enabled: true\n")
    const result = run(["--valuesFile", join(dir, "cni.yaml")], WORKLOADS)
    expect(result.code, result.stderr).toBe(0)
    const spec = documents(result.stdout)[0]!.spec.template.spec
    expect(spec.initContainers.map((c: Obj) => c.name)).toEqual(["mesh-validation", "log-shipper"])
    const validation = spec.initContainers[0]
    expect(validation.args).toEqual(expect.arrayContaining(["--run-validation", "--skip-rule-apply"]))
    expect(validation.securityContext).toMatchObject({
      runAsUser: 1337,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    })
  })
})
