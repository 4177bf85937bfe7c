/**
 * The mesh page's orchestrator facts (`/debug/ui/state`), from the built mesh-discovery on the
 * in-process orchestrator (which can be taken down at will): the API server URL, that it was
 * reached, that the registries synced, and that this instance leads (its Lease identity); with
 * the API server down, the next probe says it cannot be reached, and why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoveryArgs } from "../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { meshCustomResources } from "../support/orchestrator/mesh-crds.js"
import { type Daemon, startDaemon } from "../support/processes.js"

interface Facts {
  readonly server?: string
  readonly reachable?: boolean
  readonly error?: string
  readonly checkedAt?: string
  readonly registriesSynced: boolean
  readonly configSynced: boolean
  readonly leader?: { readonly identity: string; readonly isLeader: boolean }
}

let orchestrator: Orchestrator
let discovery: Daemon
let monitoring = ""

const facts = async (): Promise<Facts> =>
  ((await (await fetch(`http://${monitoring}/debug/ui/state`)).json()) as { orchestrator: Facts }).orchestrator

/** Polls until `check` holds for the page's orchestrator facts. */
const until = async (what: string, check: (f: Facts) => boolean, ms = 30_000): Promise<Facts> => {
  const limit = Date.now() + ms
  for (;;) {
    const f = await facts()
    if (check(f)) return f
    if (Date.now() > limit) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(f)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

beforeAll(async () => {
  orchestrator = await startOrchestrator({ customResources: meshCustomResources(), token: "meshd-token" })
  orchestrator.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } })
  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": orchestrator.kubeconfig() }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  discovery = startDaemon("mesh-discovery", args, { POD_NAME: "meshd-ui" })
  monitoring = (await discovery.waitFor(/monitoring listening on ([\d.]+:\d+)/, 30_000))[1]!
}, 60_000)

afterAll(async () => {
  await discovery?.stop("SIGKILL")
  await orchestrator?.close()
})

describe("the mesh page on the orchestrator", () => {
  it("shows the API server reached, the registries synced and this instance leading; then the API server down", async () => {
    const up = await until(
      "reached, synced and leading",
      (f) => f.reachable === true && f.registriesSynced && f.configSynced && f.leader?.isLeader === true,
    )
    expect(up.server).toBe(orchestrator.url)
    expect(up.leader?.identity).toBe("meshd-ui")
    const checked = up.checkedAt ?? ""
    await orchestrator.down()
    // The next probe (every 10 s, 5 s to answer) says the API server cannot be reached.
    const down = await until("the probe to fail", (f) => f.reachable === false && f.checkedAt !== checked, 30_000)
    expect(down.error ?? "").not.toBe("")
    await orchestrator.up()
  }, 60_000)
})
