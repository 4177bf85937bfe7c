/**
 * `meshctl x authz check` as a process (the built binary) on a saved config dump whose inbound
 * listener comes from this repo's generator with DENY, ALLOW and AUDIT policies; and the
 * `experimental` name refusing to run without a pod or a file.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { generateInboundListener } from "../../../../src/services/xds/proxygen/inbound/index.js"
import { push, security, sidecar } from "../../../services/xds/proxygen/inbound/fixtures.js"
import { run } from "../../../support/processes.js"

let dumpFile: string

const ap = (name: string, spec: unknown, namespace = "default") =>
  security("AuthorizationPolicy", name, spec, namespace)

beforeAll(() => {
  const policies = [
    ap("allow", {
      rules: [
        { from: [{ source: { principals: ["cluster.local/ns/default/sa/productpage"] } }] },
        { to: [{ operation: { ports: ["3306"] } }] },
      ],
    }),
    ap("deny-admin", { action: "DENY", rules: [{ to: [{ operation: { paths: ["/admin*"] } }] }] }),
    ap("audit", { action: "AUDIT", rules: [{}] }, "mesh-system"),
  ]
  const listener = generateInboundListener(
    push({ authorizationPolicies: policies as never }),
    sidecar(),
  ).resources[0]!.build()
  const dump = {
    configs: [
      {
        "@type": "type.googleapis.com/envoy.admin.v3.ListenersConfigDump",
        dynamic_listeners: [{ name: listener.name, active_state: { listener } }],
      },
    ],
  }
  dumpFile = join(mkdtempSync(join(tmpdir(), "authz-cli-")), "dump.json")
  writeFileSync(dumpFile, JSON.stringify(dump))
})

describe("meshctl x authz check", () => {
  it("prints one row per policy of a saved dump", async () => {
    const result = await run("meshctl", ["x", "authz", "check", "-f", dumpFile])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.split("\n")).toEqual([
      expect.stringMatching(/^ACTION {3}AuthorizationPolicy {3}RULES$/),
      expect.stringMatching(/^DENY +deny-admin\.default +1$/),
      expect.stringMatching(/^ALLOW +allow\.default +2$/),
      expect.stringMatching(/^AUDIT +audit\.mesh-system +1$/),
      "",
    ])
  })

  it("needs a pod or a file", async () => {
    const result = await run("meshctl", ["experimental", "authz", "check"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("expecting a pod ([<type>/]<name>[.<namespace>]) or --file with a config dump")
    expect(result.stdout).toBe("")
  })
})
