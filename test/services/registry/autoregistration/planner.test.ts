/**
 * Auto-registration decisions on plain data: the target of a proxy, the entry built from a
 * group, connect/disconnect marks (a later connection elsewhere wins), the cleanup deadline
 * (grace period after the disconnect), and health conditions.
 */
import { describe, expect, it } from "vitest"
import {
  AUTO_REGISTRATION_GROUP_ANNOTATION,
  CONNECTED_AT_ANNOTATION,
  DISCONNECTED_AT_ANNOTATION,
  HEALTH_CHECK_ANNOTATION,
  type OrchWorkloadEntry,
  type OrchWorkloadGroup,
  WORKLOAD_CONTROLLER_ANNOTATION,
} from "../../../../src/services/registry/autoregistration/objects.js"
import {
  autoRegisteredName,
  cleanupOf,
  conditionsAfter,
  entryFromGroup,
  markConnected,
  markDisconnected,
  targetOf,
} from "../../../../src/services/registry/autoregistration/planner.js"
import { healthReportOf, isHealthReport } from "../../../../src/services/registry/autoregistration/proxy-connections.js"

const on = { autoRegistration: true, healthChecks: true }
const proxy = (metadata: Record<string, unknown>, ip = "10.0.0.7") => ({
  id: `sidecar~${ip}~vm-1.apps~apps.svc.cluster.local`,
  metadata,
})
const at = (ms: number) => ({ ms, text: new Date(ms).toISOString() })

describe("targetOf", () => {
  it("names an auto-registered entry <group>-<ip>[-<network>] in the proxy's namespace", () => {
    expect(targetOf(proxy({ AUTO_REGISTER_GROUP: "vms", NAMESPACE: "apps" }), on)).toEqual({
      _tag: "Auto",
      namespace: "apps",
      name: "vms-10.0.0.7",
      group: "vms",
    })
    expect(
      targetOf(proxy({ AUTO_REGISTER_GROUP: "vms", INSTANCE_IPS: "fd00::1,10.1.1.1", NETWORK: "net1" }), on),
    ).toEqual({ _tag: "Auto", namespace: "apps", name: "vms-fd00--1-net1", group: "vms" })
  })

  it("is none without the metadata or with the variable off, and a health-checked entry by name", () => {
    expect(targetOf(proxy({}), on)._tag).toBe("None")
    expect(targetOf(proxy({ AUTO_REGISTER_GROUP: "vms" }), { ...on, autoRegistration: false })._tag).toBe("None")
    expect(targetOf(proxy({ WORKLOAD_ENTRY: "vm-a" }), on)).toEqual({
      _tag: "HealthChecked",
      namespace: "apps",
      name: "vm-a",
    })
    expect(targetOf(proxy({ WORKLOAD_ENTRY: "vm-a" }), { ...on, healthChecks: false })._tag).toBe("None")
  })

  it("refuses a proxy with no address or no namespace", () => {
    expect(targetOf({ id: "sidecar~~x~y", metadata: { AUTO_REGISTER_GROUP: "g", NAMESPACE: "a" } }, on)._tag).toBe(
      "Invalid",
    )
    expect(targetOf({ id: "sidecar~10.0.0.1~x~y", metadata: { AUTO_REGISTER_GROUP: "g" } }, on)._tag).toBe("Invalid")
  })

  it("cuts long names from the front to 253 characters", () => {
    const name = autoRegisteredName("g".repeat(300), "10.0.0.1", "")
    expect(name).toHaveLength(253)
    expect(name.endsWith("-10.0.0.1")).toBe(true)
  })
})

const group: OrchWorkloadGroup = {
  apiVersion: "networking.mesh.io/v1",
  kind: "WorkloadGroup",
  metadata: { name: "vms", namespace: "apps", uid: "uid-1" },
  spec: {
    metadata: { labels: { app: "vm", tier: "group" }, annotations: { team: "a" } },
    template: { serviceAccount: "vm-sa", labels: { tier: "template", version: "v1" }, ports: { http: 8080 } },
  },
}

describe("entryFromGroup", () => {
  it("fills the template with the proxy's address, labels, network and locality, owned by the group", () => {
    const p = {
      ...proxy({ LABELS: { version: "v2", "mesh-locality": "r.z" }, NETWORK: "net1", NAMESPACE: "apps" }),
      locality: { region: "r", zone: "z" },
    }
    const entry = entryFromGroup("vms-10.0.0.7-net1", p, group, "meshd-0", "2026-01-01T00:00:00.000Z")
    expect(entry.metadata.namespace).toBe("apps")
    expect(entry.spec).toEqual({
      address: "10.0.0.7",
      serviceAccount: "vm-sa",
      ports: { http: 8080 },
      labels: { app: "vm", tier: "group", version: "v2" },
      network: "net1",
      locality: "r/z",
    })
    expect(entry.metadata.annotations).toEqual({
      team: "a",
      [AUTO_REGISTRATION_GROUP_ANNOTATION]: "vms",
      [WORKLOAD_CONTROLLER_ANNOTATION]: "meshd-0",
      [CONNECTED_AT_ANNOTATION]: "2026-01-01T00:00:00.000Z",
    })
    expect(entry.metadata.ownerReferences).toEqual([
      { apiVersion: "networking.mesh.io/v1", kind: "WorkloadGroup", name: "vms", uid: "uid-1", controller: true },
    ])
  })

  it("enables health checks when the proxy has a readiness probe", () => {
    const p = proxy({ PROXY_CONFIG: { readinessProbe: { httpGet: { port: 8080 } } } })
    expect(entryFromGroup("n", p, group, "c", "t").metadata.annotations?.[HEALTH_CHECK_ANNOTATION]).toBe("true")
  })
})

const entry = (annotations: Record<string, string>, status?: OrchWorkloadEntry["status"]): OrchWorkloadEntry => ({
  metadata: {
    name: "vms-10.0.0.7",
    namespace: "apps",
    annotations: { [AUTO_REGISTRATION_GROUP_ANNOTATION]: "vms", ...annotations },
  },
  spec: { address: "10.0.0.7" },
  ...(status === undefined ? {} : { status }),
})

describe("connect and disconnect marks", () => {
  it("a connection takes the entry and clears the disconnect time; an older one does not", () => {
    const e = entry({ [WORKLOAD_CONTROLLER_ANNOTATION]: "a", [DISCONNECTED_AT_ANNOTATION]: at(500).text })
    const connected = markConnected(e, "b", at(1000))
    expect(connected?.metadata.annotations).toEqual({
      [AUTO_REGISTRATION_GROUP_ANNOTATION]: "vms",
      [WORKLOAD_CONTROLLER_ANNOTATION]: "b",
      [CONNECTED_AT_ANNOTATION]: at(1000).text,
    })
    expect(markConnected(connected!, "a", at(900))).toBeUndefined()
    expect(markConnected(connected!, "b", at(1000))).toBeUndefined()
  })

  it("only the holding instance marks a disconnect, and not one older than the connection", () => {
    const e = entry({ [WORKLOAD_CONTROLLER_ANNOTATION]: "a", [CONNECTED_AT_ANNOTATION]: at(1000).text })
    expect(markDisconnected(e, "b", at(2000))).toBeUndefined()
    expect(markDisconnected(e, "a", at(999))).toBeUndefined()
    expect(markDisconnected(e, "a", at(2000))?.metadata.annotations).toEqual({
      [AUTO_REGISTRATION_GROUP_ANNOTATION]: "vms",
      [WORKLOAD_CONTROLLER_ANNOTATION]: "a",
      [DISCONNECTED_AT_ANNOTATION]: at(2000).text,
    })
  })
})

describe("cleanupOf", () => {
  const settings = { gracePeriodMs: 10_000 }
  it("cleans up after the grace period from the disconnect", () => {
    const e = entry({ [DISCONNECTED_AT_ANNOTATION]: at(1000).text })
    expect(cleanupOf(e, 5000, settings)).toEqual({ _tag: "Later", at: 11_000 })
    expect(cleanupOf(e, 10_999, settings)._tag).toBe("Later")
    expect(cleanupOf(e, 11_000, settings)._tag).toBe("Now")
  })

  it("never cleans up a connected entry, unless older than the max connection age", () => {
    const e = entry({ [CONNECTED_AT_ANNOTATION]: at(1000).text })
    expect(cleanupOf(e, 1e9, settings)._tag).toBe("Never")
    expect(cleanupOf(e, 5000, { ...settings, maxConnectionAgeMs: 60_000 })).toEqual({ _tag: "Later", at: 61_001 })
    expect(cleanupOf(e, 61_001, { ...settings, maxConnectionAgeMs: 60_000 })._tag).toBe("Now")
  })

  it("leaves entries it did not register alone, and cleans up an unreadable time at once", () => {
    const manual: OrchWorkloadEntry = { metadata: { name: "m", annotations: { [DISCONNECTED_AT_ANNOTATION]: "x" } } }
    expect(cleanupOf(manual, 1e9, settings)._tag).toBe("Never")
    expect(cleanupOf(entry({ [DISCONNECTED_AT_ANNOTATION]: "yesterday" }), 0, settings)._tag).toBe("Now")
  })

  it("clears a health-checked entry's condition once its proxy is gone", () => {
    const checked: OrchWorkloadEntry = {
      metadata: {
        name: "m",
        annotations: { [HEALTH_CHECK_ANNOTATION]: "true", [DISCONNECTED_AT_ANNOTATION]: at(0).text },
      },
      status: { conditions: [{ type: "Healthy", status: "True" }] },
    }
    expect(cleanupOf(checked, 10_000, settings)._tag).toBe("Now")
    expect(cleanupOf({ ...checked, status: {} }, 10_000, settings)._tag).toBe("Never")
  })
})

describe("conditionsAfter", () => {
  it("sets Healthy, moves the transition time only when the status flips, skips repeats", () => {
    const e = entry({})
    const first = conditionsAfter(e, { healthy: true }, "t1")
    expect(first).toEqual([{ type: "Healthy", status: "True", lastProbeTime: "t1", lastTransitionTime: "t1" }])
    expect(conditionsAfter(entry({}, { conditions: first! }), { healthy: true }, "t2")).toBeUndefined()
    const down = conditionsAfter(entry({}, { conditions: first! }), { healthy: false, message: "refused" }, "t3")
    expect(down).toEqual([
      { type: "Healthy", status: "False", lastProbeTime: "t3", lastTransitionTime: "t3", message: "refused" },
    ])
  })
})

describe("health reports over xDS", () => {
  it("are requests of the health type, healthy unless they carry an error", () => {
    expect(isHealthReport("mesh.io/health")).toBe(true)
    expect(isHealthReport("istio.io/health")).toBe(true)
    expect(isHealthReport("type.googleapis.com/envoy.config.cluster.v3.Cluster")).toBe(false)
    expect(healthReportOf({})).toEqual({ healthy: true })
    expect(healthReportOf({ error_detail: { message: "probe failed" } })).toEqual({
      healthy: false,
      message: "probe failed",
    })
  })
})
