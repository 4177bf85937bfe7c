/**
 * The mesh's life on the real orchestrator API server: `meshctl install` then `verify-install`;
 * server-side apply ownership between meshctl (forced) and another field manager;
 * two mesh-discovery processes (as the installed ServiceAccount) on one Lease, the leader killed
 * outright and the other taking over once the lease lapsed and going on with the leader's
 * work (root-certificate ConfigMaps); a mesh-discovery whose ClusterRole lacks Pods serving
 * its other listeners while refusing ADS streams and answering 503 on `/ready`, until allowed;
 * `meshctl uninstall --purge` leaving none of the mesh's
 * objects behind. No controller-manager runs: the test marks Deployments ready through their
 * status subresource, and the deleted namespace stays Terminating (no namespace controller
 * empties it), which the test states.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FIELD_MANAGER } from "../../src/services/install/names.js"
import { DEFAULT_TIMING } from "../../src/services/orchestrator/lease.js"
import { discoveryArgs } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { openRawStream, rawSession } from "../support/raw-ads.js"
import { markDeploymentsReady, meshctlWith } from "../support/real-install.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll })
const MESH_NS = "mesh-system"
/**
 * How long a follower can take to hold a Lease whose holder died without releasing it: the lease
 * lapses a lease duration after the follower *observed* the last renewal (its own clock, as the
 * reference's leader election measures), and a follower polls every retry period plus up to 1.2
 * times more (jitter, leader-election.ts): up to one poll to observe, the duration, one poll to take.
 */
const TAKEOVER_BOUND_MILLIS = DEFAULT_TIMING.leaseDurationMillis + 2 * 2.2 * DEFAULT_TIMING.retryPeriodMillis

const daemons: Array<Daemon> = []
let readiness: NodeJS.Timeout | undefined

const meshctl = (args: ReadonlyArray<string>) => meshctlWith(args, real.get().kubeconfig)

const until = async <A>(what: string, check: () => Promise<A | undefined>, timeoutMillis = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMillis
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\n${daemons.map((d) => d.output().slice(-3_000)).join("\n---\n")}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** mesh-discovery as `POD_NAME=name`, authenticated as the installed meshd ServiceAccount. */
const startMeshd = async (name: string): Promise<Daemon> => {
  const orch = real.get()
  const token = (
    await orch.ok("POST", `/api/v1/namespaces/${MESH_NS}/serviceaccounts/meshd/token`, {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
    })
  ).status.token as string
  const args = discoveryArgs("", {
    "--registries": "Orchestrator",
    "--orchconfig": orch.kubeconfigWithToken(token),
  }).filter((a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir")
  const daemon = startDaemon("mesh-discovery", args, { POD_NAME: name, POD_NAMESPACE: MESH_NS, REVISION: "default" })
  daemons.push(daemon)
  await daemon.waitFor(/ADS server listening on/, 60_000)
  return daemon
}

const holder = async (): Promise<string | undefined> => {
  const lease = await real.get().api("GET", `/apis/coordination.k8s.io/v1/namespaces/${MESH_NS}/leases/mesh-leader`)
  return lease.status === 200 ? lease.body.spec.holderIdentity || undefined : undefined
}

beforeAll(async () => {
  if (real.skip) return
  readiness = setInterval(() => void markDeploymentsReady(real.get(), MESH_NS).catch(() => undefined), 200)
}, 10_000)

afterAll(async () => {
  if (readiness !== undefined) clearInterval(readiness)
  for (const d of daemons) await d.stop("SIGKILL")
})

describe.skipIf(real.skip)("the mesh's life on the real orchestrator API server", () => {
  it("installs with meshctl install and verify-install finds everything in place", async () => {
    const install = await meshctl(["install", "-y", "--readiness-timeout", "2m"])
    expect(install.stderr).toBe("")
    expect(install.code).toBe(0)
    const verify = await meshctl(["verify-install"])
    expect(verify.stderr).toBe("")
    expect(verify.code).toBe(0)
    expect(verify.stdout).toMatch(/verified successfully|✔/)
  }, 240_000)

  it("server-side applies: meshctl takes back a field another manager took, whose own apply then conflicts", async () => {
    const orch = real.get()
    const path = `/api/v1/namespaces/${MESH_NS}/configmaps/mesh`
    const installed = (await orch.ok("GET", path)).data.mesh as string
    const apply = (force: boolean) =>
      orch.api("PATCH", `${path}?fieldManager=platform-team${force ? "&force=true" : ""}`, {
        body: {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "mesh", namespace: MESH_NS },
          data: { mesh: "trustDomain: theirs.example\n" },
        },
        contentType: "application/apply-patch+yaml",
      })
    // Without force another manager's apply of meshctl's field is refused, naming meshctl.
    const refused = await apply(false)
    expect(refused.status).toBe(409)
    expect(refused.body.message).toContain(`conflict with "${FIELD_MANAGER}"`)
    expect((await apply(true)).status).toBe(200)
    expect((await orch.ok("GET", path)).data.mesh).toBe("trustDomain: theirs.example\n")
    // meshctl applies forced: it takes the field back and owns it again.
    const again = await meshctl(["install", "-y", "--readiness-timeout", "2m"])
    expect(again.code, again.stderr).toBe(0)
    const after = await orch.ok("GET", path)
    expect(after.data.mesh).toBe(installed)
    const owners = (after.metadata.managedFields as Array<{ manager: string; fieldsV1?: { "f:data"?: object } }>)
      .filter((m) => m.fieldsV1?.["f:data"] !== undefined)
      .map((m) => m.manager)
    expect(owners).toEqual([FIELD_MANAGER])
    expect((await apply(false)).status).toBe(409)
  }, 240_000)

  it("hands the Lease to the second mesh-discovery once the lease lapses when the leader is killed", async () => {
    const orch = real.get()
    const first = await startMeshd("meshd-a")
    expect(await until("meshd-a to lead", async () => ((await holder()) === "meshd-a" ? true : undefined))).toBe(true)
    const second = await startMeshd("meshd-b")
    // The follower does the leader's work only after taking over: meshd-a keeps the Lease.
    const early = await orch.namespace("before")
    await until("meshd-a's root certificate ConfigMap", async () => {
      const answer = await orch.api("GET", `/api/v1/namespaces/${early}/configmaps/mesh-ca-root-cert`)
      return answer.status === 200 ? true : undefined
    })
    expect(await holder()).toBe("meshd-a")

    // Killed outright: no release, so meshd-b waits for the lease to lapse.
    const killed = Date.now()
    await first.stop("SIGKILL")
    await until(
      "meshd-b to take the Lease",
      async () => ((await holder()) === "meshd-b" ? true : undefined),
      TAKEOVER_BOUND_MILLIS + 10_000,
    )
    const takeover = Date.now() - killed
    console.info(
      `leader killed → meshd-b holds the Lease after ${takeover} ms (lease ${DEFAULT_TIMING.leaseDurationMillis} ms, bound ${TAKEOVER_BOUND_MILLIS} ms)`,
    )
    // Not before the lease lapsed (the follower respected it), and within the bound.
    // (The last renewal was up to one jittered retry period before the kill.)
    expect(takeover).toBeGreaterThanOrEqual(DEFAULT_TIMING.leaseDurationMillis - 2.2 * DEFAULT_TIMING.retryPeriodMillis)
    expect(takeover).toBeLessThan(TAKEOVER_BOUND_MILLIS)
    // The new leader goes on with the leader's writes.
    const late = await orch.namespace("after")
    await until("meshd-b's root certificate ConfigMap", async () => {
      const answer = await orch.api("GET", `/api/v1/namespaces/${late}/configmaps/mesh-ca-root-cert`)
      return answer.status === 200 ? true : undefined
    })
    expect(second.output()).toMatch(/meshd-b leads/)
    await second.stop()
  }, 180_000)

  it("until it may list Pods, mesh-discovery serves its other listeners but refuses ADS streams and is not ready", async () => {
    const orch = real.get()
    // The installed ClusterRole, its Pod rules taken away (RBAC only adds: the role is edited).
    const binding = (await orch.ok("GET", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings")).items.find(
      (b: { subjects?: Array<{ name: string; namespace?: string }> }) =>
        b.subjects?.some((s) => s.name === "meshd" && s.namespace === MESH_NS),
    )
    const rolePath = `/apis/rbac.authorization.k8s.io/v1/clusterroles/${binding.roleRef.name}`
    const role = await orch.ok("GET", rolePath)
    const withoutPods = {
      ...role,
      metadata: { name: role.metadata.name, resourceVersion: role.metadata.resourceVersion },
      rules: role.rules.map((r: { resources?: Array<string> }) => ({
        ...r,
        ...(r.resources !== undefined ? { resources: r.resources.filter((x) => x !== "pods") } : {}),
      })),
    }
    expect(JSON.stringify(withoutPods.rules)).not.toMatch(/"pods"/)
    await orch.ok("PUT", rolePath, { body: withoutPods })
    let restored = false
    const restore = async () => {
      if (restored) return
      restored = true
      const now = await orch.ok("GET", rolePath)
      await orch.ok("PUT", rolePath, {
        body: { ...role, metadata: { ...role.metadata, resourceVersion: now.metadata.resourceVersion } },
      })
    }
    try {
      const daemon = await startMeshd("meshd-nopods")
      const ads = Number((await daemon.waitFor(/ADS server listening on [\d.]+:(\d+)/, 60_000))[1])
      const http = (await daemon.waitFor(/http listening on ([\d.]+:\d+)/, 60_000))[1]
      // The CA and the webhook listener were built while the registry waits for its Pods.
      await daemon.waitFor(/secure gRPC listener on/, 60_000)
      await daemon.waitFor(/pods\.v1: list failed .*forbidden/, 60_000)
      const ready = async () => (await fetch(`http://${http}/ready`)).status
      expect(await ready()).toBe(503)
      const session = rawSession(ads, { reads: true })
      try {
        const refused = openRawStream(session, "StreamAggregatedResources")
        const outcome = await refused.closed
        expect(outcome.grpcStatus).toBe(14) // UNAVAILABLE, as the reference before its caches sync
        expect(outcome.message).toMatch(/not ready/)
        expect(await ready()).toBe(503)

        // Allowed again: the informer's next try lists them, and both serve.
        await restore()
        await until("/ready to answer 200", async () => ((await ready()) === 200 ? true : undefined), 60_000)
        expect(daemon.output()).toMatch(/orchestrator registry synced/)
        const served = openRawStream(session, "StreamAggregatedResources")
        let received = 0
        served.stream.on("data", (chunk: Buffer) => {
          received += chunk.length
        })
        await served.send({
          node: {
            id: "sidecar~10.0.0.1~probe.default~default.svc.cluster.local",
            metadata: { CLUSTER_ID: "Orchestrator" },
          },
          type_url: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
        })
        await until("a CDS response", async () => (served.stream.closed || received > 0 ? true : undefined))
        expect(served.stream.closed).toBe(false)
        served.stream.close()
      } finally {
        session.close()
      }
      await daemon.stop()
    } finally {
      await restore()
    }
  }, 180_000)

  it("uninstall --purge leaves none of the mesh's cluster objects; the namespace waits for a namespace controller", async () => {
    const orch = real.get()
    const uninstall = await meshctl(["uninstall", "--purge", "-y"])
    expect(uninstall.code, uninstall.stderr).toBe(0)
    const names = async (path: string, match: (name: string) => boolean) =>
      ((await orch.ok("GET", path)).items as Array<{ metadata: { name: string } }>)
        .map((o) => o.metadata.name)
        .filter(match)
    // CRD deletion is finished by the API server itself (its CRD finalizer), so wait for it.
    await until("the mesh CRDs to be gone", async () => {
      const left = await names("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", (n) => n.endsWith("mesh.io"))
      return left.length === 0 ? true : undefined
    })
    expect(await names("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", () => true)).toEqual([])
    expect(await names("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", () => true)).toEqual([])
    expect(
      await names("/apis/rbac.authorization.k8s.io/v1/clusterroles", (n) => n.includes("meshd") || n.includes("mesh-")),
    ).toEqual([])
    expect(
      await names(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        (n) => n.includes("meshd") || n.includes("mesh-"),
      ),
    ).toEqual([])
    // Deleted, but only a namespace controller (kube-controller-manager, not run here) empties and removes it.
    const ns = await orch.api("GET", `/api/v1/namespaces/${MESH_NS}`)
    expect(ns.status === 404 || ns.body.status.phase === "Terminating").toBe(true)
  }, 120_000)
})
