/**
 * The admission flow on the real orchestrator API server: `meshctl install` (the built binary)
 * installs the mesh, its CRDs and its webhook configurations into kube-apiserver; the built
 * `mesh-discovery` runs with its ServiceAccount's token (so the installed RBAC is what lets it
 * work) and patches its CA into the webhooks; then the API server itself calls `/inject` when a Pod
 * is created in a labelled namespace (the stored Pod has the sidecar) and `/validate` when a
 * VirtualService is created (an invalid one is refused with our message). The API server's own TLS
 * check proves the patched caBundle: a webhook carrying another CA is refused by it.
 *
 * No controller-manager runs, so the test marks installed Deployments ready through their status
 * subresource, as the deployment controller would; and the webhooks call meshd at
 * https://localhost:<port> (its certificate covers localhost through MESHD_CUSTOM_HOST) instead of
 * through its Service, whose cluster IP nothing routes here.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { lookupKind, normaliseGroup } from "../../src/services/config-model/kinds.js"
import { ContainerNames, InjectAnnotations } from "../../src/services/injection/names.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { createCertificateCall, makeCsr } from "../layers/ca/helpers.js"
import { bySchema, loadCorpus } from "../services/install/crd-cases.js"
import { discoveryArgs } from "../support/discovery.js"
import { freePort } from "../support/ports.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { markDeploymentsReady, meshctlWith } from "../support/real-install.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll })
const MESH_NS = "mesh-system"
const MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
const VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"

let meshd: Daemon | undefined
let webhookPort = 0
let readiness: NodeJS.Timeout | undefined
let install: { code: number; stdout: string; stderr: string }

const meshctl = meshctlWith

/** Every webhook of a configuration calls meshd at https://localhost:<port><path> instead of its Service. */
const pointAtMeshd = async (collection: string, name: string) => {
  const orch = real.get()
  const config = await orch.ok("GET", `${collection}/${name}`)
  const patch = (config.webhooks as Array<{ clientConfig: { service: { path: string } } }>).flatMap((w, i) => [
    { op: "remove", path: `/webhooks/${i}/clientConfig/service` },
    {
      op: "add",
      path: `/webhooks/${i}/clientConfig/url`,
      value: `https://localhost:${webhookPort}${w.clientConfig.service.path}`,
    },
  ])
  await orch.ok("PATCH", `${collection}/${name}`, { body: patch, contentType: "application/json-patch+json" })
}

const until = async <A>(what: string, check: () => Promise<A | undefined>, timeoutMillis = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMillis
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${meshd?.output().slice(-4_000) ?? ""}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The caBundle meshd patched into every webhook of a configuration (all equal), once it has. */
const patchedBundle = async (collection: string, name: string): Promise<string | undefined> => {
  const config = await real.get().ok("GET", `${collection}/${name}`)
  const bundles = new Set(
    (config.webhooks as Array<{ clientConfig: { caBundle?: string } }>).map((w) => w.clientConfig.caBundle ?? ""),
  )
  const [only] = [...bundles]
  return bundles.size === 1 && only !== "" ? only : undefined
}

const pod = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels: { app: "reviews", ...labels } },
  spec: { containers: [{ name: "reviews", image: "example/reviews:1.0", ports: [{ containerPort: 9080 }] }] },
})

const virtualService = (name: string, weights: ReadonlyArray<number>) => ({
  apiVersion: "networking.mesh.io/v1",
  kind: "VirtualService",
  metadata: { name },
  spec: {
    hosts: ["reviews"],
    http: [{ route: weights.map((weight, i) => ({ destination: { host: "reviews", subset: `v${i}` }, weight })) }],
  },
})

beforeAll(async () => {
  if (real.skip) return
  const orch = real.get()
  readiness = setInterval(() => void markDeploymentsReady(real.get(), MESH_NS).catch(() => undefined), 200)
  install = await meshctl(["install", "-y", "--readiness-timeout", "2m"], orch.kubeconfig)
  if (install.code !== 0)
    throw new Error(`meshctl install failed (${install.code}):\n${install.stdout}\n${install.stderr}`)

  // meshd runs as its ServiceAccount: only what the installed RBAC grants it works.
  const token = (
    await orch.ok("POST", `/api/v1/namespaces/${MESH_NS}/serviceaccounts/meshd/token`, {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
    })
  ).status.token as string
  // The injector's config and values, as the Deployment mounts them from the installed ConfigMap.
  const dir = mkdtempSync(join(tmpdir(), "real-admission-"))
  const injector = await orch.ok("GET", `/api/v1/namespaces/${MESH_NS}/configmaps/mesh-sidecar-injector`)
  mkdirSync(join(dir, "var/lib/mesh/inject"), { recursive: true })
  for (const key of ["config", "values"]) writeFileSync(join(dir, "var/lib/mesh/inject", key), injector.data[key])

  webhookPort = await freePort()
  await pointAtMeshd(MUTATING, "mesh-sidecar-injector")
  await pointAtMeshd(VALIDATING, "mesh-validator-mesh-system")
  const args = discoveryArgs("", {
    "--registries": "Orchestrator",
    "--orchconfig": orch.kubeconfigWithToken(token),
    "--httpsAddr": `127.0.0.1:${webhookPort}`,
  }).filter((a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir")
  // The environment the installed Deployment gives meshd (its fieldRefs filled in by hand).
  const deployment = await orch.ok("GET", `/apis/apps/v1/namespaces/${MESH_NS}/deployments/meshd`)
  const env: Record<string, string> = { POD_NAME: "meshd-test", POD_NAMESPACE: MESH_NS, SERVICE_ACCOUNT: "meshd" }
  for (const e of deployment.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>)
    if (e.value !== undefined) env[e.name] = e.value
  meshd = startDaemon("mesh-discovery", args, { ...env, MESHD_CUSTOM_HOST: "localhost" }, dir)
  await meshd.waitFor(/webhook HTTPS listener on/, 60_000)
  await until(
    "meshd to patch its CA into the injection webhooks",
    () => patchedBundle(MUTATING, "mesh-sidecar-injector"),
    60_000,
  )
  await until("meshd to patch its CA into the validation webhook", () =>
    patchedBundle(VALIDATING, "mesh-validator-mesh-system"),
  )
}, 300_000)

afterAll(async () => {
  if (readiness !== undefined) clearInterval(readiness)
  await meshd?.stop()
})

describe.skipIf(real.skip)("the admission flow on the real orchestrator API server", () => {
  it("meshctl install applied everything to the real API server and saw it ready", () => {
    expect(install.stderr).toBe("")
    expect(install.stdout).toContain("✔ Installation complete")
  })

  it("stores a Pod created in a labelled namespace with the sidecar the API server got from /inject", async () => {
    const orch = real.get()
    const ns = await orch.namespace("inject", { "mesh-injection": "enabled" })
    const stored = await orch.ok("POST", `/api/v1/namespaces/${ns}/pods`, { body: pod("reviews-1") })
    const names = (stored.spec.containers as Array<{ name: string }>).map((c) => c.name)
    expect(names).toEqual(expect.arrayContaining(["reviews", ContainerNames.proxy]))
    expect(stored.metadata.annotations[InjectAnnotations.status]).toBeDefined()
    // What the API server stored, read back: the same sidecar.
    const read = await orch.ok("GET", `/api/v1/namespaces/${ns}/pods/reviews-1`)
    expect(read.spec.containers.map((c: { name: string }) => c.name)).toEqual(names)

    // The API server evaluates the selectors: no label, no call, no sidecar; opted out, likewise.
    const plain = await orch.namespace("plain")
    const untouched = await orch.ok("POST", `/api/v1/namespaces/${plain}/pods`, { body: pod("reviews-1") })
    expect(untouched.spec.containers.map((c: { name: string }) => c.name)).toEqual(["reviews"])
    const optedOut = await orch.ok("POST", `/api/v1/namespaces/${ns}/pods`, {
      body: {
        ...pod("reviews-2"),
        metadata: { ...pod("reviews-2").metadata, annotations: { "sidecar.mesh.io/inject": "false" } },
      },
    })
    expect(optedOut.spec.containers.map((c: { name: string }) => c.name)).toEqual(["reviews"])
  })

  it("refuses an invalid VirtualService with the /validate webhook's message and stores a valid one", async () => {
    const orch = real.get()
    const ns = await orch.namespace("validate")
    const path = `/apis/networking.mesh.io/v1/namespaces/${ns}/virtualservices`
    const refused = await orch.api("POST", path, { body: virtualService("bad", [50, 20]) })
    expect(refused.status).toBeGreaterThanOrEqual(400)
    expect(refused.body.message).toContain('admission webhook "rev.validation.mesh.io" denied the request')
    expect(refused.body.message).toContain("total destination weight 70 != 100")
    expect((await orch.api("GET", `${path}/bad`)).status).toBe(404)
    const stored = await orch.ok("POST", path, { body: virtualService("good", [50, 50]) })
    expect(stored.metadata.name).toBe("good")
  })

  it("calls the webhook only with the CA meshd patched in: the API server's TLS check refuses another", async () => {
    const orch = real.get()
    const ns = await orch.namespace("tls", { "mesh-injection": "enabled" })
    const patched = (await patchedBundle(MUTATING, "mesh-sidecar-injector"))!
    // A copy of one injection webhook, selected by its own label, carrying the orchestrator's CA
    // (which did not sign meshd's certificate) instead of meshd's: failurePolicy Fail.
    const wrong = Buffer.from(orch.caPem).toString("base64")
    const probe = (caBundle: string) => ({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: "tls-probe" },
      webhooks: [
        {
          name: "tls-probe.mesh.io",
          clientConfig: { url: `https://localhost:${webhookPort}/inject`, caBundle },
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
          objectSelector: { matchLabels: { "tls-probe": "yes" } },
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
          failurePolicy: "Fail",
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    })
    await orch.ok("POST", MUTATING, { body: probe(wrong) })
    const refused = await until("the probe webhook to be in force", async () => {
      const answer = await orch.api("POST", `/api/v1/namespaces/${ns}/pods`, {
        body: pod("probe-1", { "tls-probe": "yes" }),
      })
      return answer.status >= 400 ? answer : undefined
    })
    expect(refused.body.message).toMatch(
      /failed calling webhook "tls-probe.mesh.io".*x509: certificate signed by unknown authority/,
    )

    const current = await orch.ok("GET", `${MUTATING}/tls-probe`)
    current.webhooks[0].clientConfig.caBundle = patched
    await orch.ok("PUT", `${MUTATING}/tls-probe`, { body: current })
    const stored = await until("the probe webhook to trust meshd's CA", async () => {
      const answer = await orch.api("POST", `/api/v1/namespaces/${ns}/pods`, {
        body: pod("probe-2", { "tls-probe": "yes" }),
      })
      return answer.status === 201 ? answer.body : undefined
    })
    expect(stored.spec.containers.map((c: { name: string }) => c.name)).toContain(ContainerNames.proxy)
    await orch.ok("DELETE", `${MUTATING}/tls-probe`)
  })

  it("judges the 324-document validation corpus as our CRD schemas and /validate say: valid accepted, invalid refused", async () => {
    const orch = real.get()
    const ns = await orch.namespace("corpus")
    const cases = loadCorpus().filter((c) => typeof c.object !== "string")
    const verdicts: Array<{
      name: string
      expected: string
      by: string
      status: number
      message: string
      ours: ReturnType<typeof bySchema>
    }> = []
    for (const c of cases) {
      const object = structuredClone(c.object as Record<string, unknown>)
      const [group, version] = String(object.apiVersion).split("/") as [string, string]
      const plural = lookupKind(group, String(object.kind))?.plural ?? "unknown"
      object.apiVersion = `${normaliseGroup(group)}/${version}`
      object.metadata = { ...(object.metadata as object), namespace: ns }
      // dryRun=All: admission (webhooks included) and validation run, nothing is stored.
      // fieldValidation=Strict, as kubectl sends: without it an unknown field is dropped with a warning.
      const answer = await orch.api(
        "POST",
        `/apis/${normaliseGroup(group)}/${version}/namespaces/${ns}/${plural}?dryRun=All&fieldValidation=Strict`,
        {
          body: object,
        },
      )
      const message: string = typeof answer.body === "object" ? (answer.body.message ?? "") : String(answer.body)
      const by =
        answer.status < 300 ? "accepted" : /admission webhook "[^"]+" denied/.test(message) ? "webhook" : "apiserver"
      verdicts.push({ name: c.name, expected: c.expected, by, status: answer.status, message, ours: bySchema(object) })
    }
    const count = (expected: string, by: string) =>
      verdicts.filter((v) => v.expected === expected && v.by === by).length
    console.info(
      `corpus on kube-apiserver ${orch.versions.kube}: ${cases.length} documents; valid: ${count("valid", "accepted")} accepted, ` +
        `${count("valid", "apiserver")} refused by the API server, ${count("valid", "webhook")} by /validate; invalid: ` +
        `${count("invalid", "apiserver")} refused by the API server (CRD schema), ${count("invalid", "webhook")} by /validate, ` +
        `${count("invalid", "accepted")} accepted`,
    )
    // Where the real API server's schema verdict and our structural validator's differ.
    const disagreements = verdicts
      .filter((v) => v.by !== "webhook" && (v.by === "apiserver") !== v.ours.issues.length > 0)
      .map(
        (v) =>
          `${v.name}: real ${v.by} (${v.status} ${v.message.slice(0, 300)}); ours: ${v.ours.issues.join("; ") || "accepted"}`,
      )
    if (disagreements.length > 0) console.info(`schema disagreements:\n${disagreements.join("\n")}`)
    const wrong = verdicts
      .filter((v) => (v.expected === "valid") !== (v.by === "accepted"))
      .map((v) => `${v.name}: ${v.by} (${v.status} ${v.message.slice(0, 300)})`)
    expect(wrong).toEqual([])
    expect(disagreements).toEqual([])
  }, 180_000)

  it("drops an unknown field of a custom resource with a warning unless the client asks for Strict", async () => {
    const orch = real.get()
    const ns = await orch.namespace("pruning")
    const path = `/apis/networking.mesh.io/v1/namespaces/${ns}/destinationrules`
    const rule = {
      apiVersion: "networking.mesh.io/v1",
      kind: "DestinationRule",
      metadata: { name: "reviews" },
      spec: { host: "reviews", trafficPolicy: { connectionPool: { http: { maxConnections: 5 } } } },
    }
    const strict = await orch.api("POST", `${path}?fieldValidation=Strict`, { body: rule })
    expect(strict.status).toBe(400)
    expect(strict.body.message).toContain('unknown field "spec.trafficPolicy.connectionPool.http.maxConnections"')
    // No fieldValidation (what a plain client sends): stored without the field, and told so.
    const lenient = await orch.api("POST", path, { body: rule })
    expect(lenient.status).toBe(201)
    expect(lenient.body.spec.trafficPolicy.connectionPool.http).toEqual({})
    expect(lenient.warnings.join("\n")).toMatch(
      /unknown field \\"spec\.trafficPolicy\.connectionPool\.http\.maxConnections\\"/,
    )
  })

  it("meshd, as its installed ServiceAccount, was refused nothing by RBAC", () => {
    const refusals = meshd!
      .output()
      .split("\n")
      .filter((line) => /forbidden|\b403\b/i.test(line))
    expect(refusals).toEqual([])
  })

  it("grants meshd's ServiceAccount what its controllers do and refuses it the rest (SubjectAccessReview)", async () => {
    const orch = real.get()
    const can = async (verb: string, group: string, resource: string, namespace = "") => {
      const review = await orch.ok("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: `system:serviceaccount:${MESH_NS}:meshd`,
            groups: ["system:serviceaccounts", `system:serviceaccounts:${MESH_NS}`, "system:authenticated"],
            resourceAttributes: {
              verb,
              group,
              resource: resource.split("/")[0],
              subresource: resource.split("/")[1] ?? "",
              namespace,
            },
          },
        },
      })
      return review.status.allowed === true
    }
    const needed: Array<[string, string, string, string?]> = [
      ["watch", "", "pods"],
      ["list", "discovery.k8s.io", "endpointslices"],
      ["watch", "networking.mesh.io", "virtualservices"],
      ["patch", "networking.mesh.io", "virtualservices/status"],
      ["update", "admissionregistration.k8s.io", "mutatingwebhookconfigurations"],
      ["create", "authentication.k8s.io", "tokenreviews"],
      ["create", "", "configmaps", "shop"],
      ["update", "coordination.k8s.io", "leases", MESH_NS],
      ["patch", "apps", "deployments", "shop"],
      ["patch", "", "serviceaccounts", "shop"],
    ]
    const refused: Array<[string, string, string, string?]> = [
      ["create", "", "pods", "shop"],
      ["delete", "", "namespaces"],
      ["create", "networking.mesh.io", "virtualservices", "shop"],
      ["update", "coordination.k8s.io", "leases", "shop"],
      ["create", "rbac.authorization.k8s.io", "clusterrolebindings"],
    ]
    const verdicts = async (list: typeof needed) =>
      Promise.all(list.map(async (a) => `${a.join(" ")}: ${(await can(...a)) ? "allowed" : "denied"}`))
    expect(await verdicts(needed)).toEqual(needed.map((a) => `${a.join(" ")}: allowed`))
    expect(await verdicts(refused)).toEqual(refused.map((a) => `${a.join(" ")}: denied`))
  })

  it("serves a Service's ready endpoints from Pods and EndpointSlices to an xDS client, and follows readiness", async () => {
    const orch = real.get()
    const ns = await orch.namespace("registry")
    const ads = (await meshd!.waitFor(/ADS server listening on ([\d.]+:\d+)/))[1]!
    // The API server allocates the cluster IP (the in-process one takes what it is given).
    const service = await orch.ok("POST", `/api/v1/namespaces/${ns}/services`, {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "echo" },
        spec: { selector: { app: "echo" }, ports: [{ name: "grpc", port: 7070, targetPort: 7070 }] },
      },
    })
    expect(service.spec.clusterIP).toMatch(/^10\.96\./)
    // A Pod's status is the kubelet's to write: through the status subresource (a create drops it).
    const created = await orch.ok("POST", `/api/v1/namespaces/${ns}/pods`, {
      body: { ...pod("echo-1", { app: "echo" }), status: { phase: "Running", podIP: "10.1.0.5" } },
    })
    expect(created.status.podIP).toBeUndefined()
    await orch.ok("PUT", `/api/v1/namespaces/${ns}/pods/echo-1/status`, {
      body: {
        ...created,
        status: {
          phase: "Running",
          podIP: "10.1.0.5",
          podIPs: [{ ip: "10.1.0.5" }],
          conditions: [{ type: "Ready", status: "True" }],
        },
      },
    })
    const slice = (ready: boolean) => ({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "echo-abc", labels: { "kubernetes.io/service-name": "echo" } },
      addressType: "IPv4",
      endpoints: [
        { addresses: ["10.1.0.5"], conditions: { ready }, targetRef: { kind: "Pod", namespace: ns, name: "echo-1" } },
      ],
      ports: [{ name: "grpc", port: 7070, protocol: "TCP" }],
    })
    await orch.ok("POST", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { body: slice(true) })

    const cluster = `outbound|7070||echo.${ns}.svc.cluster.local`
    const endpointsOf = (snapshot: {
      types: ReadonlyMap<string, { resources: ReadonlyMap<string, { resource?: unknown }> }>
    }) => JSON.stringify(snapshot.types.get(TypeUrl.Endpoint)?.resources.get(cluster)?.resource ?? {})
    const scope = Effect.runSync(Scope.make())
    try {
      const client = await Effect.runPromise(
        makeAdsClient({
          address: ads,
          mode: "sotw",
          node: { id: `sidecar~10.1.0.9~client.${ns}~${ns}.svc.cluster.local` },
        }).pipe(Scope.extend(scope)),
      )
      await Effect.runPromise(client.subscribe(TypeUrl.Endpoint, [cluster]))
      const healthy = await Effect.runPromise(
        client.waitFor(
          (snap) => /"10\.1\.0\.5"/.test(endpointsOf(snap)) && /7070/.test(endpointsOf(snap)),
          "20 seconds",
        ),
      )
      expect(endpointsOf(healthy)).not.toMatch(/UNHEALTHY/)
      // Not ready: the endpoint leaves the healthy set.
      const live = await orch.ok("GET", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/echo-abc`)
      const started = Date.now()
      await orch.ok("PUT", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/echo-abc`, {
        body: {
          ...slice(false),
          metadata: { ...slice(false).metadata, resourceVersion: live.metadata.resourceVersion },
        },
      })
      await Effect.runPromise(
        client.waitFor(
          (snap) => !/"10\.1\.0\.5"/.test(endpointsOf(snap)) || /UNHEALTHY/.test(endpointsOf(snap)),
          "20 seconds",
        ),
      )
      console.info(`EndpointSlice readiness → xDS client: ${Date.now() - started} ms`)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("meshd's CA issues for a real ServiceAccount token of its audience and refuses one for another", async () => {
    const orch = real.get()
    const ns = await orch.namespace("ca")
    await orch.ok("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "echo" } },
    })
    const token = async (audiences: Array<string>) =>
      (
        await orch.ok("POST", `/api/v1/namespaces/${ns}/serviceaccounts/echo/token`, {
          body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { audiences } },
        })
      ).status.token as string
    const secure = Number((await meshd!.waitFor(/secure gRPC listener on [\d.]+:(\d+)/))[1])
    // The root meshd publishes in every namespace, as a workload reads it.
    const rootPem = await until("the root certificate ConfigMap", async () => {
      const answer = await orch.api("GET", `/api/v1/namespaces/${ns}/configmaps/mesh-ca-root-cert`)
      return answer.status === 200 ? (answer.body.data["root-cert.pem"] as string) : undefined
    })
    const mesh = await orch.ok("GET", `/api/v1/namespaces/${MESH_NS}/configmaps/mesh`)
    const trustDomain = /trustDomain:\s*(\S+)/.exec(mesh.data.mesh)?.[1] ?? "cluster.local"
    const { csrPem } = await makeCsr([`spiffe://${trustDomain}/ns/${ns}/sa/echo`])
    const issued = await createCertificateCall(secure, rootPem, { csr: csrPem }, { token: await token(["mesh-ca"]) })
    expect(issued.error).toBeUndefined()
    expect(issued.chain?.[0]).toContain("BEGIN CERTIFICATE")
    const refused = await createCertificateCall(secure, rootPem, { csr: csrPem }, { token: await token(["elsewhere"]) })
    expect(refused.error?.code).toBe(16) // UNAUTHENTICATED
    // Another ServiceAccount's identity is not this token's to ask for.
    const { csrPem: other } = await makeCsr([`spiffe://${trustDomain}/ns/${ns}/sa/admin`])
    const stolen = await createCertificateCall(secure, rootPem, { csr: other }, { token: await token(["mesh-ca"]) })
    expect(stolen.error).toBeDefined()
  })

  // Last: it restarts the API server under everything above.
  it("loses nothing and pushes no storm when the API server restarts under meshd's watches", async () => {
    const orch = real.get()
    const ns = await orch.namespace("restart")
    const ads = (await meshd!.waitFor(/ADS server listening on ([\d.]+:\d+)/))[1]!
    await orch.ok("POST", `/api/v1/namespaces/${ns}/services`, {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "echo" },
        spec: { selector: { app: "echo" }, ports: [{ name: "grpc", port: 7070 }] },
      },
    })
    const slice = (name: string, ip: string) => ({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, labels: { "kubernetes.io/service-name": "echo" } },
      addressType: "IPv4",
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
      ports: [{ name: "grpc", port: 7070, protocol: "TCP" }],
    })
    await orch.ok("POST", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { body: slice("a", "10.2.0.1") })
    const cluster = `outbound|7070||echo.${ns}.svc.cluster.local`
    type Snap = {
      types: ReadonlyMap<string, { responses: number; resources: ReadonlyMap<string, { resource?: unknown }> }>
    }
    const endpointsOf = (snap: Snap) =>
      JSON.stringify(snap.types.get(TypeUrl.Endpoint)?.resources.get(cluster)?.resource ?? {})
    const scope = Effect.runSync(Scope.make())
    try {
      const client = await Effect.runPromise(
        makeAdsClient({
          address: ads,
          mode: "sotw",
          node: { id: `sidecar~10.2.0.9~client.${ns}~${ns}.svc.cluster.local` },
        }).pipe(Scope.extend(scope)),
      )
      await Effect.runPromise(client.subscribe(TypeUrl.Endpoint, [cluster]))
      await Effect.runPromise(client.waitFor((snap) => endpointsOf(snap).includes("10.2.0.1"), "20 seconds"))
      const before = (await Effect.runPromise(client.snapshot)).types.get(TypeUrl.Endpoint)!.responses

      const restarted = Date.now()
      await orch.restart()
      console.info(`kube-apiserver killed and restarted (kill → /readyz) in ${Date.now() - restarted} ms`)
      // A change made after the restart reaches the client: meshd's watches came back (relisting as needed).
      await orch.ok("POST", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
        body: slice("b", "10.2.0.2"),
      })
      const after = await Effect.runPromise(
        client.waitFor(
          (snap) => endpointsOf(snap).includes("10.2.0.2") && endpointsOf(snap).includes("10.2.0.1"),
          "60 seconds",
        ),
      )
      const pushes = after.types.get(TypeUrl.Endpoint)!.responses - before
      console.info(`EDS responses to the client across the restart: ${pushes}`)
      // One for the new endpoint; a relist that changed nothing may push the same assignment once more.
      expect(pushes).toBeLessThanOrEqual(3)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 150_000)
})
