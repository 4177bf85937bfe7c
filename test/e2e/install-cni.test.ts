/**
 * The built `install-cni` as a process, with its directories in a temporary tree and the
 * in-process orchestrator API server as its cluster: it becomes ready once the plugin is
 * installed (executable, kubeconfig, entry in the primary list), serves its metrics and
 * introspection, repairs a broken pod of its node, and on SIGTERM takes everything out and exits
 * cleanly. Also: a missing bin directory stops it at once with a message naming the flag.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { freePorts } from "../support/ports.js"
import { run, startDaemon } from "../support/processes.js"

const CALICO = `${JSON.stringify({ name: "k8s-pod-network", cniVersion: "0.3.1", plugins: [{ type: "calico" }] }, null, 2)}\n`

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ token: "sa-token" })
})
afterAll(() => server.close())

const tree = () => {
  const root = mkdtempSync(join(tmpdir(), "install-cni-e2e-"))
  const netDir = join(root, "net.d")
  const binDir = join(root, "bin")
  const saDir = join(root, "sa")
  for (const dir of [netDir, binDir, saDir]) mkdirSync(dir)
  writeFileSync(join(saDir, "token"), "sa-token")
  writeFileSync(join(saDir, "ca.crt"), server.caPem ?? "")
  const plugin = join(root, "mesh-cni.cjs")
  writeFileSync(plugin, "process.exit(0)\n")
  return { netDir, binDir, saDir, plugin }
}

const status = async (url: string): Promise<number> => {
  try {
    return (await fetch(url)).status
  } catch {
    return 0
  }
}
const eventually = async (check: () => boolean | Promise<boolean>, what: string, within = 20_000) => {
  const deadline = Date.now() + within
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("install-cni process", () => {
  it("installs, becomes ready, repairs a broken pod, and removes everything on SIGTERM", async () => {
    const { netDir, binDir, saDir, plugin } = tree()
    const primary = join(netDir, "10-calico.conflist")
    writeFileSync(primary, CALICO)
    const [readiness, monitoring, ctrlz] = await freePorts(3)
    const daemon = startDaemon("install-cni", ["--ctrlz_port", String(ctrlz), "--repair-label-pods"], {
      MOUNTED_CNI_NET_DIR: netDir,
      CNI_BIN_DIR: binDir,
      CNI_SERVICE_ACCOUNT_DIR: saDir,
      CNI_PLUGIN_SOURCE: plugin,
      CNI_READINESS_PORT: String(readiness),
      MONITORING_PORT: String(monitoring),
      ORCHESTRATOR_SERVICE_HOST: "127.0.0.1",
      ORCHESTRATOR_SERVICE_PORT: String(server.port),
      NODE_NAME: "node-1",
    })
    try {
      await eventually(
        async () => (await status(`http://127.0.0.1:${readiness}/readyz`)) === 200,
        `readiness; output:\n${daemon.output()}`,
      )
      const plugins = (JSON.parse(readFileSync(primary, "utf8")) as { plugins: Array<{ type: string }> }).plugins
      expect(plugins.map((p) => p.type)).toEqual(["calico", "mesh-cni"])
      expect(readFileSync(join(binDir, "mesh-cni"), "utf8")).toContain(plugin)
      expect(readFileSync(join(netDir, "ZZZ-mesh-cni-kubeconfig"), "utf8")).toContain("sa-token")

      const metrics = await (await fetch(`http://127.0.0.1:${monitoring}/metrics`)).text()
      expect(metrics).toMatch(/^mesh_cni_install_ready 1$/m)
      expect((await fetch(`http://127.0.0.1:${ctrlz}/scopej/`)).status).toBe(200)

      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "broken", namespace: "default", annotations: { "sidecar.mesh.io/status": "{}" } },
        spec: { nodeName: "node-1", containers: [{ name: "app", image: "app" }] },
        status: {
          initContainerStatuses: [{ name: "mesh-validation", lastState: { terminated: { exitCode: 126 } } }],
        },
      })
      await eventually(
        () =>
          (server.get("v1", "Pod", "default", "broken")?.metadata.labels as Record<string, string> | undefined)?.[
            "cni.mesh.io/uninitialized"
          ] === "true",
        `pod labelled; output:\n${daemon.output()}`,
      )
    } finally {
      const code = await daemon.stop("SIGTERM")
      expect(code, daemon.output()).toBe(0)
    }
    expect(readFileSync(primary, "utf8")).toBe(CALICO)
    expect(existsSync(join(binDir, "mesh-cni"))).toBe(false)
    expect(existsSync(join(netDir, "ZZZ-mesh-cni-kubeconfig"))).toBe(false)
  })

  it("stops at once, naming the flag, without a CNI bin directory", async () => {
    const { netDir, saDir, plugin } = tree()
    const [readiness, monitoring, ctrlz] = await freePorts(3)
    const result = await run("install-cni", ["--repair-enabled=false", "--ctrlz_port", String(ctrlz)], {
      MOUNTED_CNI_NET_DIR: netDir,
      CNI_BIN_DIR: join(netDir, "missing"),
      CNI_SERVICE_ACCOUNT_DIR: saDir,
      CNI_PLUGIN_SOURCE: plugin,
      CNI_READINESS_PORT: String(readiness),
      MONITORING_PORT: String(monitoring),
      ORCHESTRATOR_SERVICE_HOST: "127.0.0.1",
      ORCHESTRATOR_SERVICE_PORT: String(server.port),
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("--cni-bin-dir")
    expect(result.stderr).toContain(join(netDir, "missing"))
  })
})
