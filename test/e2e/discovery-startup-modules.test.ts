/**
 * What the built mesh-discovery loads on its way to `/ready` (issue 38, start-up): with only the
 * Mock registry it never talks to an orchestrator, so `@kubernetes/client-node` (about 0.45 s of
 * CPU to load) must stay unloaded; with an orchestrator it stays unloaded too while the kubeconfig
 * user's credentials are static (certificates, tokens: read by services/orchestrator/kubeconfig.ts),
 * and is loaded for a user whose credentials a program or an auth provider makes. A preloaded hook (test/fixtures/startup/module-log.cjs) logs every require as it happens.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { discoveryArgs, exampleMeshDir, orchestratorDiscoveryArgs } from "../support/discovery.js"
import { type Daemon, ROOT, startDaemon } from "../support/processes.js"

const ORCHESTRATOR_CLIENT = "@kubernetes/client-node"

let daemon: Daemon | undefined
let dir = ""

afterEach(async () => {
  if (daemon?.process.exitCode === null) await daemon.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
  dir = ""
})

/** Environment that preloads the module log hook, writing to `log`. */
const moduleLogEnv = (log: string): Record<string, string> => ({
  NODE_OPTIONS: `--require ${join(ROOT, "test/fixtures/startup/module-log.cjs")}`,
  MESH_TEST_MODULE_LOG: log,
})

const requests = (log: string): ReadonlyArray<string> =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : []

/** Waits (polling every 20 ms) until `condition` holds, or fails after `timeoutMillis`. */
const waitUntil = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMillis = 30_000) => {
  const deadline = Date.now() + timeoutMillis
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${daemon?.output()}`)
    if (daemon?.process.exitCode !== null) throw new Error(`mesh-discovery exited: ${daemon?.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("mesh-discovery start-up modules", () => {
  it("reaches /ready with --registries Mock without loading the orchestrator client library", async () => {
    dir = exampleMeshDir("discovery-startup-modules-")
    const log = join(dir, "modules.log")
    daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh")), moduleLogEnv(log), dir)
    const http = (await daemon.waitFor(/http listening on ([\d.]+:\d+)/, 60_000))[1]!
    await waitUntil("/ready", () =>
      fetch(`http://${http}/ready`).then(
        (response) => response.status === 200,
        () => false,
      ),
    )
    const loaded = requests(log)
    // The hook saw the packages the server does load (so an absence below means something).
    expect(loaded).toContain("@grpc/grpc-js")
    expect(loaded.filter((request) => request.startsWith(ORCHESTRATOR_CLIENT))).toEqual([])
    // Nor proto-loader (its descriptors cost the start ~30 ms; layers/grpc/proto-methods.ts), nor
    // undici (the bundle's stand-in loads it only if the HTTP client is used).
    expect(loaded.filter((request) => /^(@grpc\/proto-loader|undici)(\/|$)/.test(request))).toEqual([])
  }, 90_000)

  /** Starts the server on an orchestrator at port 1 (nothing listens) with this kubeconfig user. */
  const startOnOrchestrator = (user: string) => {
    dir = mkdtempSync(join(tmpdir(), "discovery-startup-modules-"))
    const log = join(dir, "modules.log")
    const kubeconfig = join(dir, "kubeconfig")
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]",
        `users: [{name: u, user: ${user}}]`,
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
      ].join("\n"),
    )
    daemon = startDaemon("mesh-discovery", orchestratorDiscoveryArgs(kubeconfig), moduleLogEnv(log), dir)
    return log
  }

  it("talks to an orchestrator with static credentials without loading the orchestrator client library", async () => {
    const log = startOnOrchestrator("{token: t}")
    // The client is built and has asked the API server for lists.
    await daemon!.waitFor(/list failed \(\/api\/v1\/\w+: connect ECONNREFUSED 127\.0\.0\.1:1\)/, 60_000)
    const loaded = requests(log)
    expect(loaded).toContain("@grpc/grpc-js")
    expect(loaded.filter((request) => request.startsWith(ORCHESTRATOR_CLIENT))).toEqual([])
  }, 90_000)

  it("loads the orchestrator client library for a kubeconfig user whose credentials a program makes", async () => {
    const log = startOnOrchestrator(
      "{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/false, interactiveMode: Never}}",
    )
    await waitUntil(`a require of ${ORCHESTRATOR_CLIENT}`, () => requests(log).includes(ORCHESTRATOR_CLIENT))
  }, 90_000)
})
