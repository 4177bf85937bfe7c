/**
 * The fake orchestrator API server driven by the real kubectl: apply (create, then a change
 * sent as a strategic merge patch), get, get -w, patch of every type, delete, label
 * selectors, a CRD and a custom resource of it, and the Status errors kubectl prints.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Orchestrator, startOrchestrator } from "./index.js"

let server: Orchestrator
let dir: string
let kubeconfig: string

beforeAll(async () => {
  server = await startOrchestrator({ token: "kubectl-token" })
  dir = mkdtempSync(join(tmpdir(), "kubectl-"))
  kubeconfig = server.kubeconfig({ path: join(dir, "config") })
})
afterAll(() => server.close())

const env = () => ({ ...process.env, HOME: dir, KUBECONFIG: kubeconfig })
const common = () => ["--cache-dir", join(dir, "cache"), "--request-timeout", "10s"]

interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs kubectl asynchronously: the server lives in this process, so blocking would deadlock. */
const kubectl = (...args: Array<string>): Promise<Result> =>
  new Promise((resolve) => {
    execFile("kubectl", [...common(), ...args], { env: env(), timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    })
  })

const ok = async (...args: Array<string>): Promise<string> => {
  const r = await kubectl(...args)
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${r.code}): ${r.stderr}`)
  return r.stdout
}

const manifest = (name: string, text: string): string => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

/** A long-running kubectl whose output lines are awaited, never slept on. */
const watching = (...args: Array<string>) => {
  const child: ChildProcess = spawn("kubectl", [...common(), ...args], {
    env: env(),
    stdio: ["ignore", "pipe", "pipe"],
  })
  let out = ""
  const waiters = new Set<() => void>()
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString()
    for (const w of waiters) w()
  })
  child.stderr!.on("data", (chunk: Buffer) => {
    out += chunk.toString()
  })
  return {
    output: () => out,
    waitFor: (pattern: RegExp, count = 1) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if ((out.match(new RegExp(pattern, "g")) ?? []).length >= count) {
            waiters.delete(check)
            clearTimeout(timer)
            resolve()
          }
        }
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output:\n${out}`)), 10_000)
        waiters.add(check)
        check()
      }),
    stop: () => child.kill(),
  }
}

const service = (name: string, targetPort: number) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: default
  labels: {app: ${name}, tier: front}
spec:
  selector: {app: ${name}}
  ports:
  - {name: http, port: 80, targetPort: ${targetPort}}
`

describe("kubectl against the fake orchestrator", () => {
  it("apply creates, re-apply is unchanged, a changed manifest is patched", async () => {
    const file = manifest("web.yaml", service("web", 8080))
    expect(await ok("apply", "-f", file)).toContain("service/web created")
    expect(await ok("apply", "-f", file)).toContain("service/web unchanged")
    const before = JSON.parse(await ok("get", "service", "web", "-o", "json"))
    expect(before.spec.clusterIP).toMatch(/^10\.96\./)
    expect(before.spec.ports).toEqual([{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }])

    const patches = server.requestCount({ verb: "patch", path: "/api/v1/namespaces/default/services/web" })
    writeFileSync(file, service("web", 9090))
    expect(await ok("apply", "-f", file)).toContain("service/web configured")
    expect(server.requestCount({ verb: "patch", path: "/api/v1/namespaces/default/services/web" })).toBe(patches + 1)
    const after = JSON.parse(await ok("get", "service", "web", "-o", "json"))
    expect(after.spec.ports[0].targetPort).toBe(9090)
    expect(after.spec.clusterIP).toBe(before.spec.clusterIP)
    expect(after.metadata.uid).toBe(before.metadata.uid)
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion))
  })

  it("get -w sees ADDED, MODIFIED and DELETED as they happen", async () => {
    const watch = watching("get", "configmaps", "-n", "default", "-w", "--output-watch-events", "-o", "json")
    try {
      await ok("create", "configmap", "watched", "--from-literal=k=v1")
      await watch.waitFor(/"type":\s*"ADDED".*"name":\s*"watched"/)
      await ok("patch", "configmap", "watched", "--type", "merge", "-p", '{"data":{"k":"v2"}}')
      await watch.waitFor(/"type":\s*"MODIFIED".*"k":\s*"v2"/)
      await ok("delete", "configmap", "watched")
      await watch.waitFor(/"type":\s*"DELETED".*"name":\s*"watched"/)
    } finally {
      watch.stop()
    }
  })

  it("patch --type merge, strategic (Service ports merge by port) and json", async () => {
    await ok("apply", "-f", manifest("api.yaml", service("api", 8080)))
    await ok("patch", "service", "api", "--type", "merge", "-p", '{"metadata":{"labels":{"patched":"merge"}}}')
    await ok("patch", "service", "api", "--type", "strategic", "-p", '{"spec":{"ports":[{"name":"grpc","port":9000}]}}')
    await ok(
      "patch",
      "service",
      "api",
      "--type",
      "strategic",
      "-p",
      '{"spec":{"ports":[{"port":80,"targetPort":8181}]}}',
    )
    await ok(
      "patch",
      "service",
      "api",
      "--type",
      "json",
      "-p",
      '[{"op":"replace","path":"/spec/selector/app","value":"v2"}]',
    )
    const svc = JSON.parse(await ok("get", "service", "api", "-o", "json"))
    expect(svc.metadata.labels.patched).toBe("merge")
    expect(svc.spec.ports).toEqual([
      { name: "http", port: 80, protocol: "TCP", targetPort: 8181 },
      { name: "grpc", port: 9000, protocol: "TCP", targetPort: 9000 },
    ])
    expect(svc.spec.selector).toEqual({ app: "v2" })
    await ok(
      "patch",
      "service",
      "api",
      "--type",
      "strategic",
      "-p",
      '{"spec":{"ports":[{"port":9000,"$patch":"delete"}]}}',
    )
    expect(
      JSON.parse(await ok("get", "service", "api", "-o", "json")).spec.ports.map((p: { port: number }) => p.port),
    ).toEqual([80])
  })

  it("label selectors with -l", async () => {
    await ok("apply", "-f", manifest("a.yaml", service("sel-a", 1)))
    await ok("apply", "-f", manifest("b.yaml", service("sel-b", 2)))
    await ok("label", "service", "sel-b", "canary=true")
    const names = async (selector: string) =>
      (await ok("get", "services", "-l", selector, "-o", "name")).trim().split("\n").filter(Boolean).sort()
    expect(await names("app in (sel-a,sel-b)")).toEqual(["service/sel-a", "service/sel-b"])
    expect(await names("app in (sel-a,sel-b),canary")).toEqual(["service/sel-b"])
    expect(await names("app in (sel-a,sel-b),!canary")).toEqual(["service/sel-a"])
    expect(await names("app=sel-a")).toEqual(["service/sel-a"])
    expect(await names("tier=front,app notin (sel-a,web,api)")).toEqual(["service/sel-b"])
  })

  it("delete, and the Status errors kubectl prints", async () => {
    const file = manifest(
      "doomed.yaml",
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doomed, namespace: default}\n",
    )
    await ok("create", "-f", file)
    const again = await kubectl("create", "-f", file)
    expect(again.stderr).toMatch(/Error from server \(AlreadyExists\): .*configmaps "doomed" already exists/)
    expect(await ok("delete", "configmap", "doomed")).toContain('configmap "doomed" deleted')
    const gone = await kubectl("get", "configmap", "doomed")
    expect(gone.code).not.toBe(0)
    expect(gone.stderr).toContain('Error from server (NotFound): configmaps "doomed" not found')
    const missingNs = await kubectl("create", "configmap", "x", "-n", "nowhere")
    expect(missingNs.stderr).toContain('namespaces "nowhere" not found')
  })

  it("refuses a wrong bearer token with 401", async () => {
    const bad = server.kubeconfig({ path: join(dir, "bad-config"), token: "wrong" })
    const r = await new Promise<Result>((resolve) =>
      execFile("kubectl", [...common(), "--kubeconfig", bad, "get", "ns"], { env: env() }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : 1, stdout, stderr }),
      ),
    )
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("Unauthorized")
  })

  it("apply also works from the protobuf /openapi/v2 alone, as kubectl before 1.27 reads it", async () => {
    const old = await startOrchestrator({ openApiV3: false })
    try {
      const config = old.kubeconfig({ path: join(dir, "old-config") })
      const file = manifest("old.yaml", service("old", 1))
      const run = (...args: Array<string>) =>
        new Promise<string>((resolve, reject) =>
          execFile(
            "kubectl",
            [...common(), "--kubeconfig", config, ...args],
            { env: env() },
            (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(stderr))),
          ),
        )
      expect(await run("apply", "-f", file)).toContain("service/old created")
      writeFileSync(file, service("old", 2))
      expect(await run("apply", "-f", file)).toContain("service/old configured")
      expect(old.requestCount({ verb: "get", path: "/openapi/v2" })).toBeGreaterThan(0)
      expect(old.get("v1", "Service", "default", "old")?.spec).toMatchObject({ ports: [{ port: 80, targetPort: 2 }] })
    } finally {
      await old.close()
    }
  })

  it("applies a CRD, then a custom resource of it at either served version", async () => {
    const crd = manifest(
      "crd.yaml",
      `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: virtualservices.networking.mesh.io}
spec:
  group: networking.mesh.io
  scope: Namespaced
  names: {kind: VirtualService, plural: virtualservices, singular: virtualservice, shortNames: [vs], listKind: VirtualServiceList}
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1beta1, served: true, storage: false, subresources: {status: {}}, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`,
    )
    expect(await ok("apply", "-f", crd)).toContain("created")
    const vs = (hosts: string) => `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec: {hosts: [${hosts}]}
`
    const file = manifest("vs.yaml", vs("reviews"))
    expect(await ok("apply", "-f", file)).toContain("virtualservice.networking.mesh.io/reviews created")
    writeFileSync(file, vs("reviews, ratings"))
    expect(await ok("apply", "-f", file)).toContain("configured")
    const v1 = JSON.parse(await ok("get", "vs", "reviews", "-o", "json"))
    expect(v1.apiVersion).toBe("networking.mesh.io/v1")
    expect(v1.spec.hosts).toEqual(["reviews", "ratings"])
    expect(v1.metadata.generation).toBe(2)
    const beta = JSON.parse(await ok("get", "virtualservices.v1beta1.networking.mesh.io", "reviews", "-o", "json"))
    expect(beta.apiVersion).toBe("networking.mesh.io/v1beta1")
    const strategic = await kubectl("patch", "vs", "reviews", "--type", "strategic", "-p", '{"spec":{"hosts":[]}}')
    // Custom resources take no strategic merge patch. kubectl 1.27+ says so itself; older
    // versions send it and print the server's 415 (with the media types it accepts).
    expect(strategic.stderr).toMatch(
      /application\/strategic-merge-patch\+json is not supported|unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json$/m,
    )
    await ok("delete", "crd", "virtualservices.networking.mesh.io")
    expect(server.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")).toEqual([])
  })
})
