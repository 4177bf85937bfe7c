/**
 * How the end-to-end tests start `mesh-discovery discovery`: on loopback, every listener on an
 * ephemeral port unless a test fixes one, from a copy of the example mesh.
 */
import { cpSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Daemon, ROOT, startDaemon } from "./processes.js"

/** `discovery` with the Mock registry and its listeners on 127.0.0.1:0; `flags` override or add. */
export const discoveryArgs = (configDir: string, flags: Readonly<Record<string, string>> = {}): Array<string> => {
  const all: Record<string, string> = {
    "--configDir": configDir,
    "--registries": "Mock",
    "--grpcAddr": "127.0.0.1:0",
    "--secureGRPCAddr": "127.0.0.1:0",
    "--httpAddr": "127.0.0.1:0",
    "--monitoringAddr": "127.0.0.1:0",
    "--httpsAddr": "127.0.0.1:0",
    "--ctrlz_address": "127.0.0.1",
    "--ctrlz_port": "0",
    ...flags,
  }
  return ["discovery", ...Object.entries(all).flat()]
}

/** `discovery` on the orchestrator of `kubeconfig` (its CRs as config source: no `--configDir`). */
export const orchestratorDiscoveryArgs = (
  kubeconfig: string,
  flags: Readonly<Record<string, string>> = {},
): Array<string> =>
  discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": kubeconfig, ...flags }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )

/**
 * The built `mesh-discovery` on the orchestrator of `kubeconfig` as pod `podName`, once its
 * debug listener is up (slow on a loaded machine: the orchestrator syncs first); its loopback
 * `host:port` too. `env` adds to its environment.
 */
export const startOrchestratorDiscovery = async (
  kubeconfig: string,
  podName: string,
  flags: Readonly<Record<string, string>> = {},
  timeoutMillis = 120_000,
  env: Readonly<Record<string, string>> = {},
): Promise<{ readonly daemon: Daemon; readonly httpAddr: string }> => {
  const daemon = startDaemon("mesh-discovery", orchestratorDiscoveryArgs(kubeconfig, flags), {
    POD_NAME: podName,
    ...env,
  })
  const port = (await daemon.waitFor(/http listening on [\d.]+:(\d+)/, timeoutMillis))[1]!
  return { daemon, httpAddr: `127.0.0.1:${port}` }
}

/** A new temporary working directory holding a copy of `examples/mesh` in `mesh/`. */
export const exampleMeshDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cpSync(join(ROOT, "examples/mesh"), join(dir, "mesh"), { recursive: true })
  return dir
}

/**
 * A gRPC xDS bootstrap (JSON) for a proxyless client of `serverUri` (insecure channel) as
 * `nodeId`. grpc-js-xds 1.14 reads no bootstrap without a node locality, so one is always set.
 */
export const proxylessBootstrap = (serverUri: string, nodeId: string): string =>
  JSON.stringify({
    xds_servers: [{ server_uri: serverUri, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
    node: { id: nodeId, locality: { region: "region1", zone: "zone1" }, metadata: { GENERATOR: "grpc" } },
  })

/** Waits (polling every 20 ms) until `daemon` answers 200 on `http://<httpAddr>/ready`; fails if it exits or after `timeoutMillis`. */
export const untilReady = async (daemon: Daemon, httpAddr: string, timeoutMillis = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMillis
  for (;;) {
    const ready = await fetch(`http://${httpAddr}/ready`).then(
      (response) => response.status === 200,
      () => false,
    )
    if (ready) return
    if (daemon.process.exitCode !== null) throw new Error(`mesh-discovery exited: ${daemon.output()}`)
    if (Date.now() > deadline) throw new Error(`timed out waiting for /ready; output:\n${daemon.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
