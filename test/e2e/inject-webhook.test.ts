/**
 * End-to-end: the sidecar injection webhook (`/inject` on `--httpsAddr`) of the built
 * `mesh-discovery`, over HTTPS with its CA-issued serving certificate (verified against the CA
 * root it made). The injector's `config` and `values` come from `var/lib/mesh/inject` in its
 * working directory, as the reference mounts them: an injected pod comes back as a JSONPatch that
 * applies to the pod as sent and carries what those files say; a bad `config` keeps the last good
 * one and a good change is applied; unusable reviews are answered 200 (allowed or denied), never
 * with a server error; every request is counted in the `sidecar_injection_*` metrics.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:https"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ContainerNames, InjectAnnotations, InjectLabels } from "../../src/services/injection/names.js"
import { applyPatch } from "../services/injection/json-patch-apply.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"

const SERVER_NAME = "meshd.mesh-system.svc"

// biome-ignore lint/suspicious/noExplicitAny: admission answers are walked loosely in assertions
type Loose = any

interface Answer {
  readonly status: number
  readonly body: string
  readonly subjectAltName: string | undefined
}

let daemon: Daemon
let dir: string
let port: number
let monitoring: number
let rootPem: string
const agent = new Agent({ keepAlive: true, maxSockets: 8 })

/** One request verifying the server as SERVER_NAME against the CA root. */
const call = (body: string, options: { method?: string; contentType?: string } = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        servername: SERVER_NAME,
        ca: rootPem,
        agent,
        method: options.method ?? "POST",
        path: "/inject",
        headers: { "content-type": options.contentType ?? "application/json" },
      },
      (res) => {
        const socket = res.socket as import("node:tls").TLSSocket
        const subjectAltName = socket.getPeerX509Certificate()?.subjectAltName
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          text += chunk
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, subjectAltName }))
      },
    )
    req.on("error", reject)
    req.end(body)
  })

/** A Deployment's pod with two containers (ports, probes, resources), opted in by label. */
const pod = (labels: Record<string, string> = { [InjectLabels.inject]: "true" }) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    generateName: "reviews-v1-5b7f9d8c4-",
    labels: { app: "reviews", "pod-template-hash": "5b7f9d8c4", ...labels },
    ownerReferences: [
      { apiVersion: "apps/v1", kind: "ReplicaSet", name: "reviews-v1-5b7f9d8c4", uid: "u", controller: true },
    ],
  },
  spec: {
    containers: ["reviews", "cache"].map((name, i) => ({
      name,
      image: `example/${name}:1.0`,
      ports: [{ containerPort: 9080 + i }],
      readinessProbe: { httpGet: { path: "/ready", port: 9080 + i } },
      resources: { requests: { cpu: "100m", memory: "64Mi" } },
    })),
  },
})

const review = (object: unknown, uid = "uid-1") =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      namespace: "shop",
      operation: "CREATE",
      object,
    },
  })

/** Injects `object` and returns the pod the answer's patch makes of it. */
const injected = async (object: Record<string, unknown>): Promise<Loose> => {
  const answer = await call(review(object))
  expect(answer.status).toBe(200)
  const response = JSON.parse(answer.body).response
  expect(response).toMatchObject({ uid: "uid-1", allowed: true, patchType: "JSONPatch" })
  const patch = JSON.parse(Buffer.from(response.patch, "base64").toString("utf8")) as ReadonlyArray<{
    op: string
    path: string
    value?: unknown
  }>
  return applyPatch(object, patch)
}

const metrics = async (): Promise<Record<string, number>> => {
  const text = await (await fetch(`http://127.0.0.1:${monitoring}/metrics`)).text()
  const out: Record<string, number> = {}
  for (const kind of ["requests", "success", "skip", "failure"]) {
    const line = text.split("\n").find((l) => l.startsWith(`sidecar_injection_${kind}_total `))
    out[kind] = Number(line?.split(" ")[1] ?? Number.NaN)
  }
  return out
}

const until = async (what: string, check: () => Promise<boolean>, timeoutMillis = 15_000) => {
  const deadline = Date.now() + timeoutMillis
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** Replaces a file atomically, as a ConfigMap mount's update does. */
const replaceFile = (file: string, text: string) => {
  writeFileSync(`${file}.tmp`, text)
  renameSync(`${file}.tmp`, file)
}

beforeAll(async () => {
  dir = exampleMeshDir("inject-webhook-")
  const injectDir = join(dir, "var/lib/mesh/inject")
  mkdirSync(injectDir, { recursive: true })
  writeFileSync(join(injectDir, "config"), "policy: enabled\ninjectedAnnotations:\n  team: platform\n")
  writeFileSync(join(injectDir, "values"), "global:\n  hub: registry.example.com/mesh\n  tag: 1.2.3\n")
  daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh")), {}, dir)
  port = Number((await daemon.waitFor(/webhook HTTPS listener on [\d.]+:(\d+)/, 30_000))[1])
  monitoring = Number((await daemon.waitFor(/monitoring listening on [\d.]+:(\d+)/, 30_000))[1])
  rootPem = readFileSync(join(dir, "var/lib/meshd/ca/ca-cert.pem"), "utf8")
}, 60_000)

afterAll(async () => {
  agent.destroy()
  await daemon?.stop()
})

describe("the /inject webhook of mesh-discovery", () => {
  it("injects a pod over HTTPS as a JSONPatch that applies, with the mounted config and values", async () => {
    const before = await metrics()
    const answer = await call(review(pod()))
    expect(answer.subjectAltName).toBe(`DNS:${SERVER_NAME}`)
    const result = await injected(pod())
    const containers = result.spec.containers as Array<Loose>
    expect(containers.map((c) => c.name)).toEqual(["reviews", "cache", ContainerNames.proxy])
    const proxy = containers.find((c) => c.name === ContainerNames.proxy)
    expect(proxy.image).toBe("registry.example.com/mesh/proxyv2:1.2.3")
    expect(result.metadata.annotations.team).toBe("platform")
    expect(result.metadata.annotations[InjectAnnotations.status]).toBeDefined()
    // The application's containers keep their ports and resources.
    expect(containers[0].ports).toEqual([{ containerPort: 9080 }])
    expect(containers[1].resources).toEqual({ requests: { cpu: "100m", memory: "64Mi" } })
    // The workload is the ReplicaSet's Deployment, in the request's namespace.
    expect(JSON.stringify(result)).toContain("namespaces/shop/deployments/reviews-v1")
    const after = await metrics()
    expect(after.requests - before.requests).toBe(2)
    expect(after.success - before.success).toBe(2)
  })

  it("allows a pod it does not inject without a patch (no namespace label without an orchestrator)", async () => {
    const before = await metrics()
    const answer = await call(review(pod({})))
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body).response).toEqual({ uid: "uid-1", allowed: true })
    const after = await metrics()
    expect(after.skip - before.skip).toBe(1)
  })

  it("answers malformed reviews 200 with allowed or denied, never a server error", async () => {
    const before = await metrics()
    const bodies = [
      "{",
      "{}",
      JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }),
      review(pod()).replace('"uid-1"', '""'),
      review("a string"),
      review({ kind: "Pod", metadata: { name: "no-containers" }, spec: {} }),
      review({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" } }),
    ]
    const answers = await Promise.all(bodies.map((body) => call(body)))
    for (const [i, answer] of answers.entries()) {
      expect(answer.status, bodies[i]).toBe(200)
      const response = JSON.parse(answer.body).response
      expect(typeof response.allowed).toBe("boolean")
      if (!response.allowed) expect(response.status.message).not.toBe("")
    }
    // The Deployment (not a Pod) is allowed with a warning; the others are denied.
    expect(answers.map((a) => JSON.parse(a.body).response.allowed)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      true,
    ])
    // What is not a request at all is an HTTP error, as on /validate.
    expect((await call("", {})).status).toBe(400)
    expect((await call(review(pod()), { contentType: "text/plain" })).status).toBe(415)
    const after = await metrics()
    expect(after.requests - before.requests).toBe(bodies.length + 2)
    expect(after.failure - before.failure).toBe(bodies.length - 1 + 2)
    expect(after.skip - before.skip).toBe(1)
  })

  it("keeps the last good config when the mounted config turns bad, and applies a good change", async () => {
    const config = join(dir, "var/lib/mesh/inject/config")
    replaceFile(config, "policy: sometimes\n")
    await daemon.waitFor(/sidecar injector configuration from .* is invalid; keeping/, 10_000)
    expect(daemon.output()).toMatch(/policy must be "enabled" or "disabled"/)
    expect((await injected(pod())).metadata.annotations.team).toBe("platform")

    replaceFile(config, "policy: enabled\ninjectedAnnotations:\n  team: payments\n")
    await until("the new config to be applied", async () => {
      return (await injected(pod())).metadata.annotations.team === "payments"
    })
  })
})
