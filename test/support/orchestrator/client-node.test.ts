/**
 * The fake orchestrator API server driven by the real `@kubernetes/client-node` 1.4 (over
 * HTTP/1.1): list+watch with resourceVersion, the informer relisting after 410 Gone,
 * bookmarks, paging, optimistic concurrency, TokenReview, Lease, custom objects, injected
 * faults and an API server going down and up; plus one request over HTTP/2.
 */
import { connect } from "node:http2"
import {
  ApiException,
  AuthenticationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  Watch,
} from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Orchestrator, startOrchestrator } from "./index.js"

let server: Orchestrator
let kc: KubeConfig
let core: CoreV1Api

beforeAll(async () => {
  server = await startOrchestrator({
    token: "client-token",
    customResources: [
      { group: "networking.mesh.io", versions: ["v1", "v1alpha3"], kind: "Gateway", plural: "gateways" },
    ],
  })
  kc = new KubeConfig()
  kc.loadFromFile(server.kubeconfig())
  core = kc.makeApiClient(CoreV1Api)
})
afterAll(() => server.close())

/** A fresh namespace per test keeps the shared server's state apart. */
let counter = 0
const namespace = async (): Promise<string> => {
  const name = `ns-${++counter}`
  await core.createNamespace({ body: { metadata: { name } } })
  return name
}
const configMap = (
  name: string,
  data: Record<string, string> = {},
  labels: Record<string, string> = {},
): V1ConfigMap => ({
  metadata: { name, labels },
  data,
})

/** Resolves when `predicate` holds, re-checked on every event pushed to `events`. */
const until = <A>(events: Array<A>, predicate: (events: Array<A>) => boolean, what: string) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}: ${JSON.stringify(events)}`)), 5000)
    const check = () => {
      if (predicate(events)) {
        clearTimeout(timer)
        clearInterval(poll)
        resolve()
      }
    }
    // The events array is filled by callbacks; a short poll avoids wiring a listener per test.
    const poll = setInterval(check, 10)
    check()
  })

const apiError = async (promise: Promise<unknown>): Promise<ApiException<string>> => {
  try {
    await promise
  } catch (e) {
    if (e instanceof ApiException) return e as ApiException<string>
    throw e
  }
  throw new Error("expected an ApiException")
}

describe("@kubernetes/client-node against the fake orchestrator", () => {
  it("watch from a list's resourceVersion replays later changes, then streams", async () => {
    const ns = await namespace()
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap("a") })
    const list = await core.listNamespacedConfigMap({ namespace: ns })
    expect(list.items.map((i) => i.metadata?.name)).toEqual(["a"])
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap("b") })
    const events: Array<string> = []
    const request = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { resourceVersion: list.metadata!.resourceVersion },
      (type, object) => events.push(`${type} ${object.metadata.name}`),
      () => {},
    )
    await until(events, (e) => e.includes("ADDED b"), "replayed ADDED b")
    await core.patchNamespacedConfigMap(
      { namespace: ns, name: "a", body: { data: { k: "v" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )
    await core.deleteNamespacedConfigMap({ namespace: ns, name: "b" })
    await until(events, (e) => e.length === 3, "MODIFIED a, DELETED b")
    expect(events).toEqual(["ADDED b", "MODIFIED a", "DELETED b"])
    request.abort()
  })

  it("an informer relists after 410 Gone and sees what changed meanwhile", async () => {
    const ns = await namespace()
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap("keep") })
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap("drop") })
    const path = `/api/v1/namespaces/${ns}/configmaps`
    const informer = makeInformer(kc, path, () => core.listNamespacedConfigMap({ namespace: ns }))
    const events: Array<string> = []
    informer.on("add", (o) => events.push(`add ${o.metadata?.name}`))
    informer.on("update", (o) => events.push(`update ${o.metadata?.name}`))
    informer.on("delete", (o) => events.push(`delete ${o.metadata?.name}`))
    informer.on("error", (e) => events.push(`error ${String(e)}`))
    await informer.start()
    await until(events, (e) => e.includes("add keep") && e.includes("add drop"), "initial adds")
    const lists = server.requestCount({ verb: "list", path })

    // Changes while the watch is down, then history compacted: the resumed watch is expired.
    server.dropWatches()
    server.remove("v1", "ConfigMap", ns, "drop")
    server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep", namespace: ns }, data: { v: "2" } })
    server.compact()
    await until(events, (e) => e.includes("delete drop") && e.includes("update keep"), "relist")
    expect(server.requestCount({ verb: "list", path })).toBe(lists + 1)
    expect(events.filter((e) => e.startsWith("error"))).toEqual([])
    await informer.stop()
  })

  it("a watch from an expired resourceVersion gets an ERROR event with a 410 Status", async () => {
    const ns = await namespace()
    const rv = String(server.resourceVersion())
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap("x") })
    server.compact()
    const events: Array<{ type: string; code?: number; reason?: string }> = []
    const done = new Promise<unknown>((resolve) =>
      new Watch(kc).watch(
        `/api/v1/namespaces/${ns}/configmaps`,
        { resourceVersion: rv },
        (type, o) => events.push({ type, code: o.code, reason: o.reason }),
        resolve,
      ),
    )
    expect(await done).toBeNull()
    expect(events).toEqual([{ type: "ERROR", code: 410, reason: "Expired" }])
  })

  it("bookmarks carry the current resourceVersion", async () => {
    const ns = await namespace()
    const events: Array<{ type: string; rv: string }> = []
    const request = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { allowWatchBookmarks: true, resourceVersion: String(server.resourceVersion()) },
      (type, o) => events.push({ type, rv: o.metadata.resourceVersion }),
      () => {},
    )
    await core.createNamespacedConfigMap({ namespace: "default", body: configMap(`elsewhere-${ns}`) })
    server.bookmark()
    await until(events, (e) => e.some((x) => x.type === "BOOKMARK"), "a bookmark")
    expect(events).toEqual([{ type: "BOOKMARK", rv: String(server.resourceVersion()) }])
    request.abort()
  })

  it("pages with limit/continue from one snapshot; an expired continue is 410", async () => {
    const ns = await namespace()
    for (const name of ["c1", "c2", "c3", "c4", "c5"])
      await core.createNamespacedConfigMap({ namespace: ns, body: configMap(name, {}, { page: "yes" }) })
    const first = await core.listNamespacedConfigMap({ namespace: ns, limit: 2 })
    expect(first.items.map((i) => i.metadata?.name)).toEqual(["c1", "c2"])
    expect(first.metadata?.remainingItemCount).toBe(3)
    // Written after the first page: the following pages still show the snapshot.
    await core.deleteNamespacedConfigMap({ namespace: ns, name: "c3" })
    const second = await core.listNamespacedConfigMap({
      namespace: ns,
      limit: 2,
      _continue: first.metadata!._continue!,
    })
    expect(second.items.map((i) => i.metadata?.name)).toEqual(["c3", "c4"])
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion)
    const selected = await core.listNamespacedConfigMap({ namespace: ns, limit: 1, labelSelector: "page=yes" })
    expect(selected.metadata?.remainingItemCount).toBeUndefined()
    expect(selected.metadata?._continue).toBeDefined()
    server.compact()
    const error = await apiError(
      core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: second.metadata!._continue! }),
    )
    expect(error.code).toBe(410)
    expect(JSON.parse(error.body).reason).toBe("Expired")
  })

  it("an update from a stale resourceVersion is a 409 Conflict", async () => {
    const ns = await namespace()
    const created = await core.createNamespacedConfigMap({ namespace: ns, body: configMap("cm", { v: "1" }) })
    const updated = await core.replaceNamespacedConfigMap({
      namespace: ns,
      name: "cm",
      body: { ...created, data: { v: "2" } },
    })
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion))
    const error = await apiError(
      core.replaceNamespacedConfigMap({ namespace: ns, name: "cm", body: { ...created, data: { v: "3" } } }),
    )
    expect(error.code).toBe(409)
    const status = JSON.parse(error.body)
    expect(status).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Conflict",
      code: 409,
      details: { name: "cm", kind: "configmaps" },
    })
    expect((await apiError(core.readNamespacedConfigMap({ namespace: ns, name: "nope" }))).code).toBe(404)
    expect((await apiError(core.createNamespacedConfigMap({ namespace: ns, body: configMap("cm") }))).code).toBe(409)
  })

  it("TokenReview is answered by the pluggable reviewer", async () => {
    server.addToken("good", { username: "system:serviceaccount:default:app", groups: ["system:serviceaccounts"] }, [
      "mesh-ca",
    ])
    const auth = kc.makeApiClient(AuthenticationV1Api)
    const review = (token: string, audiences: Array<string>) =>
      auth.createTokenReview({ body: { spec: { token, audiences } } })
    const good = await review("good", ["mesh-ca"])
    expect(good.status).toMatchObject({
      authenticated: true,
      user: { username: "system:serviceaccount:default:app" },
      audiences: ["mesh-ca"],
    })
    expect((await review("good", ["other"])).status?.authenticated).toBe(false)
    expect((await review("bad", [])).status?.authenticated).toBe(false)
  })

  it("Lease create and update, with conflicts for the loser", async () => {
    const ns = await namespace()
    const leases = kc.makeApiClient(CoordinationV1Api)
    const lease = await leases.createNamespacedLease({
      namespace: ns,
      body: { metadata: { name: "leader" }, spec: { holderIdentity: "a", leaseDurationSeconds: 15 } },
    })
    const renewed = await leases.replaceNamespacedLease({
      namespace: ns,
      name: "leader",
      body: { ...lease, spec: { ...lease.spec, holderIdentity: "b", leaseTransitions: 1 } },
    })
    expect(renewed.spec?.holderIdentity).toBe("b")
    const lost = await apiError(
      leases.replaceNamespacedLease({
        namespace: ns,
        name: "leader",
        body: { ...lease, spec: { ...lease.spec, holderIdentity: "c" } },
      }),
    )
    expect(lost.code).toBe(409)
    expect((await leases.readNamespacedLease({ namespace: ns, name: "leader" })).spec?.holderIdentity).toBe("b")
  })

  it("custom objects at each served version, with a status subresource", async () => {
    const ns = await namespace()
    const custom = kc.makeApiClient(CustomObjectsApi)
    const base = { group: "networking.mesh.io", namespace: ns, plural: "gateways" }
    const created = await custom.createNamespacedCustomObject({
      ...base,
      version: "v1alpha3",
      body: {
        apiVersion: "networking.mesh.io/v1alpha3",
        kind: "Gateway",
        metadata: { name: "gw" },
        spec: { servers: [] },
        status: { x: 1 },
      },
    })
    expect(created.status).toBeUndefined()
    expect(created.metadata.generation).toBe(1)
    const v1 = await custom.getNamespacedCustomObject({ ...base, version: "v1", name: "gw" })
    expect(v1.apiVersion).toBe("networking.mesh.io/v1")
    const patched = await custom.patchNamespacedCustomObject(
      { ...base, version: "v1", name: "gw", body: { spec: { selector: { istio: "ingress" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )
    expect(patched.metadata.generation).toBe(2)
    const status = await custom.patchNamespacedCustomObjectStatus(
      { ...base, version: "v1", name: "gw", body: { status: { ready: true }, spec: { ignored: true } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )
    expect(status.status).toEqual({ ready: true })
    expect(status.spec.ignored).toBeUndefined()
    expect(status.metadata.generation).toBe(2)
    const list = await custom.listNamespacedCustomObject({ ...base, version: "v1alpha3" })
    expect(list.items.map((i: { apiVersion: string }) => i.apiVersion)).toEqual(["networking.mesh.io/v1alpha3"])
  })

  it("injected 500 and 429 (Retry-After), then a server down and up on the same port", async () => {
    server.failNext({ verb: "list", path: "/api/v1/nodes", status: 429, retryAfterSeconds: 3 })
    server.failNext({ verb: "list", path: "/api/v1/nodes", status: 500 })
    const throttled = await apiError(core.listNode())
    expect(throttled.code).toBe(429)
    expect(throttled.headers["retry-after"]).toBe("3")
    expect(JSON.parse(throttled.body).details.retryAfterSeconds).toBe(3)
    expect((await apiError(core.listNode())).code).toBe(500)
    expect((await core.listNode()).items).toEqual([])

    await server.down()
    await expect(core.listNode()).rejects.toThrow(/ECONNREFUSED/)
    await server.up()
    expect((await core.listNode()).items).toEqual([])
  })

  it("watch selectors turn objects moving in and out into ADDED/DELETED; timeoutSeconds ends the stream", async () => {
    const ns = await namespace()
    const events: Array<string> = []
    const ended = new Promise<unknown>((resolve) =>
      new Watch(kc).watch(
        `/api/v1/namespaces/${ns}/pods`,
        { labelSelector: "app=web", fieldSelector: "spec.nodeName=node-1", timeoutSeconds: 1 },
        (type, o) => events.push(`${type} ${o.metadata.name}`),
        resolve,
      ),
    )
    const pod = (name: string, labels: Record<string, string>, nodeName: string) => ({
      metadata: { name, labels },
      spec: { nodeName, containers: [{ name: "c", image: "i" }] },
    })
    await core.createNamespacedPod({ namespace: ns, body: pod("p1", { app: "web" }, "node-1") })
    await core.createNamespacedPod({ namespace: ns, body: pod("p2", { app: "web" }, "node-2") })
    await core.createNamespacedPod({ namespace: ns, body: pod("p3", { app: "db" }, "node-1") })
    const relabel = (name: string, app: string) =>
      core.patchNamespacedPod(
        { namespace: ns, name, body: { metadata: { labels: { app } } } },
        setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
      )
    await relabel("p3", "web")
    await relabel("p1", "db")
    expect(await ended).toBeNull()
    expect(events).toEqual(["ADDED p1", "ADDED p3", "DELETED p1"])
    const pods = await core.listNamespacedPod({
      namespace: ns,
      fieldSelector: "spec.nodeName=node-1,status.phase=Pending",
    })
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(["p1", "p3"])
    const refused = await apiError(core.listNamespacedPod({ namespace: ns, fieldSelector: "spec.bogus=1" }))
    expect(JSON.parse(refused.body)).toMatchObject({ code: 400, message: "field label not supported: spec.bogus" })
  })

  it("also serves plain HTTP", async () => {
    const plain = await startOrchestrator({ tls: false })
    try {
      const config = new KubeConfig()
      config.loadFromFile(plain.kubeconfig())
      expect(plain.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const names = (await config.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name)
      expect(names).toEqual(["default", "kube-node-lease", "kube-public", "kube-system"])
    } finally {
      await plain.close()
    }
  })

  it("serves HTTP/2 with ALPN on the same port", async () => {
    const session = connect(server.url, { ca: server.caPem! })
    const body = await new Promise<string>((resolve, reject) => {
      const stream = session.request({ ":path": "/api/v1/namespaces/default", authorization: "Bearer client-token" })
      let text = ""
      stream.on("data", (chunk: Buffer) => {
        text += chunk.toString()
      })
      stream.on("end", () => resolve(text))
      stream.on("error", reject)
    })
    session.close()
    expect(JSON.parse(body)).toMatchObject({
      kind: "Namespace",
      metadata: { name: "default" },
      status: { phase: "Active" },
    })
  })
})
