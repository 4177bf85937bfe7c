/** src/services/xds/protocol/xds-types.ts is generated from the xDS protos; it must not drift. */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { ROOT } from "../support/processes.js"

it("xds-types.ts matches the protos (regenerate with dist/scripts/gen-xds-types.mjs)", () => {
  const generated = execFileSync(process.execPath, [join(ROOT, "dist", "scripts", "gen-xds-types.mjs")], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  })
  const committed = readFileSync(join(ROOT, "src", "services", "xds", "protocol", "xds-types.ts"), "utf8")
  expect(
    committed === generated,
    "xds-types.ts is stale: node scripts/build.mjs && node dist/scripts/gen-xds-types.mjs > src/services/xds/protocol/xds-types.ts",
  ).toBe(true)
  // What the generators rely on: a served resource type, an Any payload, an enum by name.
  expect(generated).toContain('"type.googleapis.com/envoy.config.cluster.v3.Cluster": Cluster')
  expect(generated).toContain('"type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC": Http_Rbac_RBAC')
  expect(generated).toMatch(/export type Cluster_DiscoveryType = "STATIC" \| "STRICT_DNS"/)
})
