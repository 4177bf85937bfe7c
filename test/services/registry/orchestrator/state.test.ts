import { describe, expect, it } from "vitest"
import type { OrchNamespace, OrchPod } from "../../../../src/services/orchestrator/objects.js"
import {
  OrchestratorRegistryState,
  type OrchestratorStateOptions,
} from "../../../../src/services/registry/orchestrator/state.js"
import { diffSnapshots } from "../../../../src/services/registry/registry.js"
import { serviceEntry, workloadEntry } from "../fixtures.js"
import { added, deleted, endpointsObject, node, pod, service, slice, updated } from "./objects.js"

const HOST = "reviews.default.svc.cluster.local"
const KEY = `default/${HOST}`

const make = (overrides: Partial<OrchestratorStateOptions> = {}) =>
  new OrchestratorRegistryState({
    clusterId: "c1",
    domain: "cluster.local",
    trustDomain: "cluster.local",
    drainingLabel: "mesh.io/draining",
    sendUnhealthyEndpoints: false,
    selectWorkloadEntries: true,
    selectPods: true,
    ...overrides,
  })

const zoned = node("node-1", {
  "topology.kubernetes.io/region": "us-east",
  "topology.kubernetes.io/zone": "us-east-1a",
  "topology.mesh.io/subzone": "rack-7",
})

/** A service with one slice of two pods on node-1. */
const basic = (overrides: Partial<OrchestratorStateOptions> = {}) => {
  const state = make(overrides)
  state.applyNodes(added(zoned))
  state.applyPods(added(pod("r1", "10.1.0.1"), pod("r2", "10.1.0.2")))
  state.applyServices(added(service("reviews")))
  state.applyEndpointSlices(
    added(
      slice("reviews-abc", "reviews", [
        { ip: "10.1.0.1", pod: "r1" },
        { ip: "10.1.0.2", pod: "r2" },
      ]),
    ),
  )
  return state
}

describe("OrchestratorRegistryState", () => {
  it("services and endpoints with locality, identity and labels from pod and node", () => {
    const state = basic()
    const snap = state.snapshot()
    expect(snap.services.map((s) => s.hostname)).toEqual([HOST])
    expect(snap.endpoints(HOST, "default", 80)).toEqual([
      {
        hostname: HOST,
        namespace: "default",
        servicePortName: "http",
        address: "10.1.0.1",
        port: 8080,
        labels: { app: "reviews", "topology.mesh.io/cluster": "c1" },
        serviceAccount: "spiffe://cluster.local/ns/default/sa/reviews",
        locality: "us-east/us-east-1a/rack-7",
        network: "",
        weight: 1,
        healthStatus: "HEALTHY",
        clusterId: "c1",
      },
      expect.objectContaining({ address: "10.1.0.2", port: 8080 }),
    ])
    expect(state.stats).toEqual({ endpointsNoPod: 0, endpointsNotReady: 0 })
  })

  it("the pod's locality label overrides the node's", () => {
    const state = basic()
    state.applyPods(updated(pod("r1", "10.1.0.1", { labels: { app: "reviews", "mesh-locality": "eu.west.z" } })))
    expect(state.snapshot().endpoints(HOST, "default")[0]?.locality).toBe("eu/west/z")
  })

  it("only slice ports named like a service port give endpoints", () => {
    const state = make()
    state.applyPods(added(pod("r1", "10.1.0.1")))
    state.applyServices(added(service("reviews")))
    state.applyEndpointSlices(
      added(
        slice(
          "s",
          "reviews",
          [{ ip: "10.1.0.1", pod: "r1" }],
          [
            { name: "http", port: 8080 },
            { name: "metrics", port: 9090 },
          ],
        ),
      ),
    )
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => `${e.servicePortName}:${e.port}`),
    ).toEqual(["http:8080"])
  })

  it("not-ready endpoints are left out, or sent UNHEALTHY with PILOT_SEND_UNHEALTHY_ENDPOINTS; both are counted", () => {
    const notReady = slice("reviews-abc", "reviews", [
      { ip: "10.1.0.1", pod: "r1" },
      { ip: "10.1.0.2", pod: "r2", ready: false },
    ])
    const hidden = basic()
    hidden.applyEndpointSlices(updated(notReady))
    expect(
      hidden
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.address),
    ).toEqual(["10.1.0.1"])
    expect(hidden.stats.endpointsNotReady).toBe(1)

    const shown = basic({ sendUnhealthyEndpoints: true })
    shown.applyEndpointSlices(updated(notReady))
    expect(
      shown
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => [e.address, e.healthStatus]),
    ).toEqual([
      ["10.1.0.1", "HEALTHY"],
      ["10.1.0.2", "UNHEALTHY"],
    ])
    expect(shown.stats.endpointsNotReady).toBe(1)
  })

  it("a serving, terminating endpoint of a persistent-session service is DRAINING", () => {
    const state = basic()
    state.applyServices(updated(service("reviews", {}, { labels: { "mesh.io/persistent-session": "cookie" } })))
    state.applyEndpointSlices(
      updated(
        slice("reviews-abc", "reviews", [
          { ip: "10.1.0.1", pod: "r1", ready: false, serving: true, terminating: true },
          { ip: "10.1.0.2", pod: "r2", ready: false, serving: false, terminating: true },
        ]),
      ),
    )
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => [e.address, e.healthStatus]),
    ).toEqual([["10.1.0.1", "DRAINING"]])
  })

  it("a pod carrying PILOT_DRAINING_LABEL makes its endpoints DRAINING; an empty label name disables it", () => {
    const draining = pod("r1", "10.1.0.1", { labels: { app: "reviews", "mesh.io/draining": "true" } })
    const state = basic()
    state.snapshot()
    state.applyPods(updated(draining))
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.healthStatus),
    ).toEqual(["DRAINING", "HEALTHY"])

    const off = basic({ drainingLabel: "" })
    off.applyPods(updated(draining))
    expect(
      off
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.healthStatus),
    ).toEqual(["HEALTHY", "HEALTHY"])
  })

  it("an endpoint whose pod is not known yet is left out and counted until the pod arrives", () => {
    const state = basic()
    state.applyEndpointSlices(
      updated(
        slice("reviews-abc", "reviews", [
          { ip: "10.1.0.1", pod: "r1" },
          { ip: "10.1.0.3", pod: "r3" },
        ]),
      ),
    )
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.address),
    ).toEqual(["10.1.0.1"])
    expect(state.stats.endpointsNoPod).toBe(1)
    state.applyPods(added(pod("r3", "10.1.0.3", { serviceAccount: "late" })))
    const eps = state.snapshot().endpoints(HOST, "default")
    expect(eps.map((e) => e.address)).toEqual(["10.1.0.1", "10.1.0.3"])
    expect(eps[1]?.serviceAccount).toBe("spiffe://cluster.local/ns/default/sa/late")
    expect(state.stats.endpointsNoPod).toBe(0)
  })

  it("an endpoint without targetRef finds its pod by address, and is kept without one", () => {
    const state = make()
    state.applyPods(added(pod("r1", "10.1.0.1", { serviceAccount: "byip" })))
    state.applyServices(added(service("reviews")))
    state.applyEndpointSlices(added(slice("s", "reviews", [{ ip: "10.1.0.1" }, { ip: "192.168.0.9" }])))
    const eps = state.snapshot().endpoints(HOST, "default")
    expect(eps.map((e) => [e.address, e.serviceAccount])).toEqual([
      ["10.1.0.1", "spiffe://cluster.local/ns/default/sa/byip"],
      ["192.168.0.9", ""],
    ])
    expect(state.stats.endpointsNoPod).toBe(0)
  })

  it("a slice arriving before its service gives endpoints once the service arrives", () => {
    const state = make()
    state.applyPods(added(pod("r1", "10.1.0.1")))
    state.applyEndpointSlices(added(slice("s", "reviews", [{ ip: "10.1.0.1", pod: "r1" }])))
    expect(state.snapshot().services).toEqual([])
    state.applyServices(added(service("reviews")))
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.address),
    ).toEqual(["10.1.0.1"])
  })

  it("endpoints of several slices are joined, an address in two slices once", () => {
    const state = basic()
    state.applyPods(added(pod("r3", "10.1.0.3")))
    state.applyEndpointSlices(
      added(
        slice("reviews-def", "reviews", [
          { ip: "10.1.0.2", pod: "r2" },
          { ip: "10.1.0.3", pod: "r3" },
        ]),
      ),
    )
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.address),
    ).toEqual(["10.1.0.1", "10.1.0.2", "10.1.0.3"])
  })

  it("deleting the service, a slice, a pod removes what they gave", () => {
    const state = basic()
    state.snapshot()
    state.applyPods(deleted(pod("r2", "10.1.0.2")))
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.address),
    ).toEqual(["10.1.0.1"])
    expect(state.stats.endpointsNoPod).toBe(1)
    state.applyEndpointSlices(deleted(slice("reviews-abc", "reviews", [])))
    expect(state.snapshot().endpoints(HOST, "default")).toEqual([])
    expect(state.stats.endpointsNoPod).toBe(0)
    state.applyServices(deleted(service("reviews")))
    const snap = state.snapshot()
    expect(snap.services).toEqual([])
    expect(snap.endpointsByKey.size).toBe(0)
  })

  it("core Endpoints as the fallback: addresses ready, notReadyAddresses not", () => {
    const state = make({ sendUnhealthyEndpoints: true })
    state.applyPods(added(pod("r1", "10.1.0.1"), pod("r2", "10.1.0.2")))
    state.applyServices(added(service("reviews")))
    state.applyEndpoints(
      added(endpointsObject("reviews", [{ ip: "10.1.0.1", pod: "r1" }], [{ ip: "10.1.0.2", pod: "r2" }])),
    )
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default", 80)
        .map((e) => [e.address, e.port, e.healthStatus]),
    ).toEqual([
      ["10.1.0.1", 8080, "HEALTHY"],
      ["10.1.0.2", 8080, "UNHEALTHY"],
    ])
    expect(state.stats.endpointsNotReady).toBe(1)
  })

  it("ExternalName services get the external name as their endpoint", () => {
    const state = make()
    state.applyServices(
      added(service("ext", { type: "ExternalName", externalName: "api.example.com", clusterIP: "", selector: {} })),
    )
    expect(
      state
        .snapshot()
        .endpoints("ext.default.svc.cluster.local", "default")
        .map((e) => e.address),
    ).toEqual(["api.example.com"])
  })

  it("a node's locality change reaches its pods' endpoints; other node changes are free", () => {
    const state = basic()
    const before = state.snapshot()
    state.applyNodes(updated({ ...zoned, status: { addresses: [{ type: "InternalIP", address: "10.0.0.1" }] } }))
    expect(state.snapshot()).toBe(before)
    state.applyNodes(
      updated(node("node-1", { "topology.kubernetes.io/region": "eu", "topology.kubernetes.io/zone": "eu-1" })),
    )
    expect(
      state
        .snapshot()
        .endpoints(HOST, "default")
        .map((e) => e.locality),
    ).toEqual(["eu/eu-1/", "eu/eu-1/"])
  })

  it("the system namespace's network label is the network of pods without their own", () => {
    const state = basic()
    state.applyPods(updated(pod("r2", "10.1.0.2", { labels: { app: "reviews", "topology.mesh.io/network": "n2" } })))
    const system: OrchNamespace = { metadata: { name: "mesh-system", labels: { "topology.mesh.io/network": "n1" } } }
    state.applyNamespaces(added(system))
    const eps = state.snapshot().endpoints(HOST, "default")
    expect(eps.map((e) => [e.network, e.labels["topology.mesh.io/network"]])).toEqual([
      ["n1", "n1"],
      ["n2", "n2"],
    ])
  })

  it("a new trust domain re-derives every identity", () => {
    const state = basic()
    state.snapshot()
    state.setTrustDomain("example.org")
    expect(state.snapshot().endpoints(HOST, "default")[0]?.serviceAccount).toBe(
      "spiffe://example.org/ns/default/sa/reviews",
    )
  })

  it("a pod change that endpoints do not read costs nothing; one that they read shares everything else", () => {
    const state = basic()
    state.applyServices(added(service("ratings")))
    state.applyPods(added(pod("x1", "10.2.0.1", { labels: { app: "ratings" } })))
    state.applyEndpointSlices(added(slice("ratings-1", "ratings", [{ ip: "10.2.0.1", pod: "x1" }])))
    const before = state.snapshot()
    const statusOnly: OrchPod = {
      ...pod("r1", "10.1.0.1"),
      status: { ...pod("r1", "10.1.0.1").status, hostIP: "1.2.3.4" },
    }
    state.applyPods(updated(statusOnly))
    expect(state.snapshot()).toBe(before)

    state.applyPods(updated(pod("r1", "10.1.0.1", { labels: { app: "reviews", version: "v2" } })))
    const after = state.snapshot()
    expect(after.servicesByKey).toBe(before.servicesByKey)
    const ratings = "default/ratings.default.svc.cluster.local"
    expect(after.endpointsByKey.get(ratings)).toBe(before.endpointsByKey.get(ratings))
    expect(diffSnapshots(before, after)).toEqual({
      servicesAdded: [],
      servicesUpdated: [],
      servicesRemoved: [],
      endpointsChanged: [KEY],
    })
  })

  it("a bad slice update is reported and the last good one kept", () => {
    const state = basic()
    state.snapshot()
    expect(state.takeProblems()).toEqual([])
    state.applyEndpointSlices(updated({ ...slice("reviews-abc", "reviews", []), endpoints: "nope" as never }))
    expect(state.snapshot().endpoints(HOST, "default")).toHaveLength(2)
    expect(state.takeProblems()).toEqual(["EndpointSlice default/reviews-abc: endpoints is not a list"])
  })

  it("services with selectors select WorkloadEntries of their namespace (unless switched off)", () => {
    const we = workloadEntry("vm1", {
      address: "10.9.0.1",
      labels: { app: "reviews" },
      serviceAccount: "vm",
      ports: { http: 9999 },
    })
    const other = workloadEntry("vm2", { address: "10.9.0.2", labels: { app: "other" } })
    const elsewhere = workloadEntry("vm3", { address: "10.9.0.3", labels: { app: "reviews" } }, { namespace: "prod" })
    const state = basic()
    state.snapshot()
    state.setConfig([], [we, other, elsewhere])
    const eps = state.snapshot().endpoints(HOST, "default")
    expect(eps.map((e) => [e.address, e.port, e.serviceAccount])).toEqual([
      ["10.1.0.1", 8080, "spiffe://cluster.local/ns/default/sa/reviews"],
      ["10.1.0.2", 8080, "spiffe://cluster.local/ns/default/sa/reviews"],
      ["10.9.0.1", 9999, "spiffe://cluster.local/ns/default/sa/vm"],
    ])
    const off = basic({ selectWorkloadEntries: false })
    off.setConfig([], [we])
    expect(off.snapshot().endpoints(HOST, "default")).toHaveLength(2)
  })

  it("ServiceEntries with a workloadSelector select ready pods of their namespace (unless switched off)", () => {
    const se = serviceEntry("db", {
      hosts: ["db.example.com"],
      ports: [{ number: 5432, name: "tcp-db", protocol: "TCP" }],
      workloadSelector: { labels: { app: "db" } },
    })
    const state = make()
    state.applyPods(
      added(
        pod("db-0", "10.3.0.1", { labels: { app: "db" }, containerPorts: [{ name: "tcp-db", containerPort: 15432 }] }),
        pod("db-1", "10.3.0.2", { labels: { app: "db" }, ready: false }),
        pod("db-2", "10.3.0.3", { labels: { app: "db" }, namespace: "prod" }),
      ),
    )
    state.setConfig([se], [])
    const key = "default/db.example.com"
    const snap = state.snapshot()
    expect(snap.services).toEqual([])
    expect(snap.endpointsByKey.get(key)?.map((e) => [e.address, e.port, e.servicePortName])).toEqual([
      ["10.3.0.1", 15432, "tcp-db"],
    ])
    state.applyPods(updated(pod("db-1", "10.3.0.2", { labels: { app: "db" } })))
    expect(
      state
        .snapshot()
        .endpointsByKey.get(key)
        ?.map((e) => [e.address, e.port]),
    ).toEqual([
      ["10.3.0.1", 15432],
      ["10.3.0.2", 5432],
    ])
    state.setConfig([], [])
    expect(state.snapshot().endpointsByKey.has(key)).toBe(false)

    const off = make({ selectPods: false })
    off.applyPods(added(pod("db-0", "10.3.0.1", { labels: { app: "db" } })))
    off.setConfig([se], [])
    expect(off.snapshot().endpointsByKey.size).toBe(0)
  })

  it("1,000 services and 10,000 pods: one pod update rebuilds only its slice", () => {
    const state = make()
    const pods: Array<OrchPod> = []
    for (let s = 0; s < 1000; s++) {
      const name = `svc-${s}`
      state.applyServices(added(service(name, { selector: { app: name } })))
      const eps = []
      for (let p = 0; p < 10; p++) {
        const ip = `10.${Math.floor(s / 250)}.${s % 250}.${p + 1}`
        const po = pod(`${name}-${p}`, ip, { labels: { app: name } })
        pods.push(po)
        eps.push({ ip, pod: po.metadata.name })
      }
      state.applyEndpointSlices(added(slice(`${name}-x`, name, eps)))
    }
    state.applyNodes(added(zoned))
    state.applyPods(added(...pods))
    const t0 = performance.now()
    const first = state.snapshot()
    const initial = performance.now() - t0
    expect(first.services).toHaveLength(1000)
    expect([...first.endpointsByKey.values()].reduce((n, l) => n + l.length, 0)).toBe(10_000)

    const t1 = performance.now()
    state.applyPods(updated(pod("svc-500-3", "10.2.0.4", { labels: { app: "svc-500", version: "v2" } })))
    const next = state.snapshot()
    const one = performance.now() - t1
    const diff = diffSnapshots(first, next)
    expect(diff.endpointsChanged).toEqual(["default/svc-500.default.svc.cluster.local"])
    // Shared: every other list is the same object, so the diff above compared references.
    let shared = 0
    for (const [key, list] of next.endpointsByKey) if (first.endpointsByKey.get(key) === list) shared++
    expect(shared).toBe(999)
    // Loose bound (shared, loaded machines): one update is far cheaper than the initial build.
    expect(one).toBeLessThan(Math.max(50, initial / 5))
  })
})
