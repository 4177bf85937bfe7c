import { describe, expect, it } from "vitest"
import {
  invalidFromVersion,
  MIN_ORCHESTRATOR_VERSION,
  type ObjectSummary,
  type PrecheckInput,
  podRevision,
  runPrechecks,
} from "../../../src/services/precheck/checks.js"

const obj = (
  name: string,
  namespace = "",
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): ObjectSummary => ({ name, namespace, labels, annotations })

const injected = (revision: string) => ({
  "sidecar.mesh.io/status": JSON.stringify({ containers: ["mesh-proxy"], revision }),
})

const input = (overrides: Partial<PrecheckInput> = {}): PrecheckInput => ({
  serverVersion: { major: "1", minor: String(MIN_ORCHESTRATOR_VERSION.minor + 2), gitVersion: "v1.30.0" },
  permissions: { _tag: "Checked", denied: [] },
  revision: "",
  installedRevisions: [],
  tags: {},
  namespaces: [obj("default")],
  pods: [],
  skipControlPlane: false,
  fromVersion: "",
  meshConfig: {},
  ...overrides,
})

const codes = (i: PrecheckInput) => runPrechecks(i).map((m) => `${m.type.name}:${m.level}`)

describe("runPrechecks", () => {
  it("finds nothing on a clean cluster", () => {
    expect(runPrechecks(input())).toEqual([])
  })

  it("reports an unreachable orchestrator and stops there", () => {
    const messages = runPrechecks(input({ serverVersion: undefined, reachError: "connection refused" }))
    expect(messages.map((m) => m.type.name)).toEqual(["OrchestratorUnreachable"])
    expect(messages[0]!.text).toContain("connection refused")
  })

  it("checks the orchestrator version against the minimum (providers' '+' suffix accepted)", () => {
    expect(codes(input({ serverVersion: { major: "1", minor: "20", gitVersion: "v1.20.1" } }))).toEqual([
      "UnsupportedOrchestratorVersion:Error",
    ])
    expect(codes(input({ serverVersion: { major: "1", minor: `${MIN_ORCHESTRATOR_VERSION.minor}+` } }))).toEqual([])
    expect(codes(input({ serverVersion: { major: "x", minor: "y" } }))).toEqual([
      "UnsupportedOrchestratorVersion:Error",
    ])
  })

  it("reports denied permissions as errors and an unavailable review API as info", () => {
    expect(codes(input({ permissions: { _tag: "Checked", denied: ["secrets", "deployments.apps"] } }))).toEqual([
      "InsufficientPermissions:Error",
      "InsufficientPermissions:Error",
    ])
    expect(codes(input({ permissions: { _tag: "Unavailable", reason: "404" } }))).toEqual([
      "PermissionsNotChecked:Info",
    ])
  })

  it("tells about installed revisions: the same one (in-place upgrade) and others", () => {
    const messages = runPrechecks(input({ revision: "canary", installedRevisions: ["canary", "default", "canary"] }))
    expect(messages.map((m) => m.type.name)).toEqual(["RevisionAlreadyInstalled", "OtherRevisionInstalled"])
    expect(messages[1]!.text).toContain('"default"')
    expect(codes(input({ installedRevisions: ["default"] }))).toEqual(["RevisionAlreadyInstalled:Info"])
  })

  it("skips the control-plane checks with --skip-controlplane", () => {
    expect(codes(input({ skipControlPlane: true, serverVersion: { major: "1", minor: "2" } }))).toEqual([])
  })

  it("finds namespaces with both injection labels", () => {
    const messages = runPrechecks(
      input({
        namespaces: [
          obj("both", "", { "mesh-injection": "enabled", "mesh.io/rev": "canary" }),
          obj("one", "", { "mesh-injection": "enabled" }),
        ],
      }),
    )
    expect(messages.map((m) => [m.type.code, m.resource?.name])).toEqual([["MSH0123", "both"]])
  })

  it("finds pods injected by a revision that is gone (tags and the target revision keep one alive)", () => {
    const pods = [
      obj("old", "shop", {}, injected("1-20")),
      obj("tagged", "shop", {}, injected("prod")),
      obj("current", "shop", {}, injected("canary")),
      obj("labelled", "shop", { "mesh.io/rev": "ghost" }, { "sidecar.mesh.io/status": "{}" }),
      obj("plain", "shop"),
    ]
    const messages = runPrechecks(input({ revision: "canary", pods, tags: { prod: "1-21" } }))
    expect(messages.map((m) => [m.type.name, m.resource?.name])).toEqual([
      ["PodInjectedByMissingRevision", "old"],
      ["PodInjectedByMissingRevision", "labelled"],
    ])
    expect(messages[0]!.text).toContain('"1-20"')
  })

  it("reports removed and deprecated settings in use when --from-version is given", () => {
    const meshConfig = { mixerCheckServer: "x", enableTracing: true, defaultConfig: { tracing: { sampling: 1 } } }
    expect(codes(input({ meshConfig }))).toEqual([])
    expect(codes(input({ meshConfig, fromVersion: "1.7" }))).toEqual([
      "RemovedSetting:Error",
      "Deprecated:Warning",
      "Deprecated:Warning",
    ])
    expect(runPrechecks(input({ meshConfig, fromVersion: "1.7" }))[0]!.text).toMatch(/removed in 1\.8 \(after 1\.7\)/)
  })
})

describe("helpers", () => {
  it("reads the injecting revision", () => {
    expect(podRevision(obj("p", "n", {}, injected("canary")))).toBe("canary")
    expect(podRevision(obj("p", "n", { "mesh.io/rev": "r1" }, { "sidecar.mesh.io/status": "not json" }))).toBe("r1")
    expect(podRevision(obj("p", "n", {}, { "sidecar.mesh.io/status": "{}" }))).toBe("default")
    expect(podRevision(obj("p", "n"))).toBeUndefined()
  })

  it("validates --from-version", () => {
    expect(invalidFromVersion("")).toBeUndefined()
    expect(invalidFromVersion("1.22.3")).toBeUndefined()
    expect(invalidFromVersion("v1.22")).toBeUndefined()
    expect(invalidFromVersion("latest")).toMatch(/--from-version "latest"/)
  })
})
