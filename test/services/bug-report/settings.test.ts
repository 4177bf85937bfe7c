import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { importantLogsSummary, logImportance, rankLogs } from "../../../src/services/bug-report/importance.js"
import { Paths } from "../../../src/services/bug-report/layout.js"
import { REDACTED, redactSecret } from "../../../src/services/bug-report/redact.js"
import {
  type BugReportFlags,
  type BugReportSettings,
  DEFAULT_CONCURRENCY,
  overlayConfigFile,
  resolveSettings,
  trimAfter,
} from "../../../src/services/bug-report/settings.js"

const flags = (overrides: Partial<BugReportFlags> = {}): BugReportFlags => ({
  meshNamespace: "mesh-system",
  include: [],
  exclude: ["kube-system"],
  fullSecrets: false,
  dryRun: false,
  duration: "0s",
  startTime: "",
  endTime: "",
  criticalErrs: [],
  ignoreErrs: [],
  rqConcurrency: 0,
  timeout: "30m0s",
  outputDir: "",
  dir: "",
  ...overrides,
})

const now = new Date("2026-01-02T10:00:00Z")
const settings = (overrides: Partial<BugReportFlags> = {}): BugReportSettings => {
  const s = resolveSettings(flags(overrides), now)
  if (typeof s === "string") throw new Error(s)
  return s
}

describe("resolveSettings", () => {
  it("applies the defaults: concurrency 32, 30m timeout, no log window", () => {
    const s = settings()
    expect(s.concurrency).toBe(DEFAULT_CONCURRENCY)
    expect(Duration.toMinutes(s.timeout)).toBe(30)
    expect(s.since).toBeUndefined()
    expect(s.until).toEqual(now)
    expect(settings({ rqConcurrency: 4 }).concurrency).toBe(4)
  })

  it("derives the window from --duration back from --end-time, or from --start-time", () => {
    expect(settings({ duration: "1h" }).since).toEqual(new Date("2026-01-02T09:00:00Z"))
    const s = settings({ duration: "30m", endTime: "2026-01-01T00:00:00Z" })
    expect(s.since).toEqual(new Date("2025-12-31T23:30:00Z"))
    expect(settings({ startTime: "2026-01-02T08:00:00Z" }).since).toEqual(new Date("2026-01-02T08:00:00Z"))
  })

  it("rejects bad combinations and values, naming the flag", () => {
    expect(resolveSettings(flags({ duration: "1h", startTime: "2026-01-02T08:00:00Z" }), now)).toMatch(
      /--duration and --start-time/,
    )
    expect(resolveSettings(flags({ duration: "soon" }), now)).toMatch(/^--duration/)
    expect(resolveSettings(flags({ timeout: "0s" }), now)).toMatch(/--timeout/)
    expect(resolveSettings(flags({ startTime: "yesterday" }), now)).toMatch(/--start-time "yesterday"/)
    expect(resolveSettings(flags({ endTime: "x" }), now)).toMatch(/--end-time/)
    expect(resolveSettings(flags({ startTime: "2026-01-03T00:00:00Z" }), now)).toMatch(/after --end-time/)
    expect(resolveSettings(flags({ include: ["a/b/c/d/e/f/g"] }), now)).toMatch(/^--include:/)
    expect(resolveSettings(flags({ exclude: ["x///k*=v"] }), now)).toMatch(/^--exclude:/)
  })
})

describe("overlayConfigFile", () => {
  it("lays the file over the flags, replacing lists and accepting the reference's spellings", () => {
    const merged = overlayConfigFile(flags({ include: ["a", "b"], criticalErrs: ["x"] }), {
      include: ["c"],
      istioNamespace: "other-system",
      fullSecrets: true,
      commandTimeout: "5m",
      ignoredErrors: ["noise*"],
      rqConcurrency: 3,
    })
    expect(merged).toMatchObject({
      include: ["c"],
      exclude: ["kube-system"],
      criticalErrs: ["x"],
      ignoreErrs: ["noise*"],
      meshNamespace: "other-system",
      fullSecrets: true,
      timeout: "5m",
      rqConcurrency: 3,
    })
  })

  it("keeps the flags for an empty document and rejects bad ones", () => {
    expect(overlayConfigFile(flags(), null)).toEqual(flags())
    expect(overlayConfigFile(flags(), ["a"])).toMatch(/not a mapping/)
    expect(overlayConfigFile(flags(), { colour: "red" })).toMatch(/unknown key "colour"/)
    expect(overlayConfigFile(flags(), { include: "a" })).toMatch(/list of strings/)
    expect(overlayConfigFile(flags(), { dryRun: "yes" })).toMatch(/true or false/)
    expect(overlayConfigFile(flags(), { rqConcurrency: -1 })).toMatch(/non-negative/)
  })
})

describe("trimAfter", () => {
  it("drops timestamped lines after the end time and keeps unstamped lines", () => {
    const log = "2026-01-02T09:59:00Z early\nplain line\n2026-01-02T10:00:01.5Z late\n2026-01-02T10:00:00Z edge"
    expect(trimAfter(log, now)).toBe("2026-01-02T09:59:00Z early\nplain line\n2026-01-02T10:00:00Z edge")
  })
})

describe("redactSecret", () => {
  const secret = {
    metadata: {
      name: "cacerts",
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"k":"c2VjcmV0"}}', a: "b" },
    },
    type: "Opaque",
    data: { "ca-key.pem": "c2VjcmV0", "ca-cert.pem": "Y2VydA==" },
  }
  it("keeps names, types and keys, and replaces values", () => {
    const out = redactSecret(secret, false)
    expect(out.data).toEqual({ "ca-key.pem": REDACTED, "ca-cert.pem": REDACTED })
    expect(out.type).toBe("Opaque")
    expect(out.metadata.annotations).toEqual({ "kubectl.kubernetes.io/last-applied-configuration": REDACTED, a: "b" })
    expect(JSON.stringify(out)).not.toContain("c2VjcmV0")
    expect(secret.data["ca-key.pem"]).toBe("c2VjcmV0")
  })
  it("keeps everything with --full-secrets", () => {
    expect(redactSecret(secret, true)).toEqual(secret)
  })
})

describe("importance", () => {
  const opts = { criticalErrs: ["*deadline exceeded*"], ignoreErrs: ["*known noise error*"] }
  it("counts critical, panic and error lines, skipping ignored ones", () => {
    const log = [
      "info all good",
      "error: cannot connect",
      "level=error msg=x",
      "known noise error again",
      "panic: runtime error",
      "rpc error: context deadline exceeded",
      "terror is not a word match",
    ].join("\n")
    expect(logImportance(log, opts)).toMatchObject({ criticalLines: 1, panicLines: 1, errorLines: 2 })
    expect(logImportance("all fine\n", opts).score).toBe(0)
  })

  it("ranks critical above panics above errors and summarises", () => {
    const ranked = rankLogs([
      { path: "a.log", importance: logImportance("error\nerror\nerror", opts) },
      { path: "b.log", importance: logImportance("panic: x", opts) },
      { path: "c.log", importance: logImportance("deadline exceeded", opts) },
      { path: "d.log", importance: logImportance("fine", opts) },
    ])
    expect(ranked.map((r) => r.path)).toEqual(["c.log", "b.log", "a.log"])
    expect(importantLogsSummary(ranked)).toMatch(/1\. c\.log: 1 critical, 0 panic, 0 error lines/)
    expect(importantLogsSummary([])).toMatch(/No logs with errors/)
    expect(rankLogs(ranked, 1)).toHaveLength(1)
  })
})

describe("layout", () => {
  it("places artifacts under bug-report/ with safe path segments", () => {
    expect(Paths.containerLog("shop", "web-1", "mesh-proxy")).toBe("bug-report/pods/shop/web-1/mesh-proxy.log")
    expect(Paths.proxyConfigDump("shop", "web-1")).toBe("bug-report/pods/shop/web-1/proxy/config_dump.json")
    expect(Paths.controlPlaneConfigDump("mesh-system", "meshd-1", "sidecar~1.2.3.4~a.b~c")).toBe(
      "bug-report/meshd/mesh-system/meshd-1/config_dump/sidecar_1.2.3.4_a.b_c.json",
    )
    expect(Paths.pod("..", "a/b")).toBe("bug-report/pods/_/a_b/pod.yaml")
  })
})
