/**
 * The installer on real temporary directories: it installs the plugin executable, the kubeconfig
 * and the config entry; puts back what is tampered with or removed; follows token rotation;
 * leaves a malformed config untouched (logged) until it is fixed; takes everything out when its
 * scope closes (a `.conf` it turned into a list comes back as it was); and refuses to start,
 * saying why, without a bin directory or with an unwritable kubeconfig. Waits are on conditions.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer, Logger, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { makeInstaller } from "../../../src/layers/cni/install-installer.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { DEFAULT_TEMPLATE } from "../../../src/services/cni/conflist-template.js"
import type { CniInstallStatusShape, InstallSettings } from "../../../src/services/cni/install-settings.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"

const CALICO = `${JSON.stringify({ name: "k8s-pod-network", cniVersion: "0.3.1", plugins: [{ type: "calico" }, { type: "portmap" }] }, null, 2)}\n`
const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const setup = (overrides: Partial<InstallSettings> = {}) => {
  const root = mkdtempSync(join(tmpdir(), "install-cni-"))
  dirs.push(root)
  const netDir = join(root, "net.d")
  const binDir = join(root, "bin")
  const saDir = join(root, "sa")
  for (const dir of [netDir, binDir, saDir]) mkdirSync(dir)
  writeFileSync(join(saDir, "token"), "token-1\n")
  writeFileSync(join(saDir, "ca.crt"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
  const pluginSource = join(root, "mesh-cni.cjs")
  writeFileSync(pluginSource, "// plugin\n")
  const settings: InstallSettings = {
    netDir,
    binDir,
    pluginSource,
    nodePath: process.execPath,
    confName: "",
    chained: true,
    meshOwned: false,
    meshOwnedFilename: "",
    template: { text: DEFAULT_TEMPLATE, source: "built-in" },
    logLevel: "warn",
    nodeName: "node-1",
    service: { protocol: "https", host: "10.96.0.1", port: "443" },
    serviceAccountDir: saDir,
    caFile: "",
    skipTlsVerify: false,
    kubeconfigMode: 384,
    ...overrides,
  }
  return { root, netDir, binDir, saDir, settings }
}

interface Running {
  readonly status: CniInstallStatusShape
  readonly logs: Array<string>
  readonly metrics: () => Promise<string>
  readonly stop: () => Promise<void>
}

const start = async (settings: InstallSettings): Promise<Running> => {
  const logs: Array<string> = []
  const logger = Logger.make(({ message }) => {
    logs.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  const scope = Effect.runSync(Scope.make())
  const layer = Layer.merge(metricsLayer("test"), Logger.replace(Logger.defaultLogger, logger))
  const { status, metrics } = await Effect.runPromise(
    Effect.gen(function* () {
      const status = yield* makeInstaller(settings, { debounce: "20 millis", resync: "1 second" })
      return { status, metrics: yield* Metrics }
    }).pipe(Scope.extend(scope), Effect.provide(layer)),
  )
  return {
    status,
    logs,
    metrics: () => metrics.registry.metrics(),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  }
}

const startFailure = (settings: InstallSettings) =>
  Effect.runPromise(makeInstaller(settings).pipe(Effect.scoped, Effect.provide(metricsLayer("test")), Effect.flip))

const eventually = async (check: () => boolean, what: string, within = 5000) => {
  const deadline = Date.now() + within
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : undefined)
const typesIn = (path: string): Array<string> =>
  (JSON.parse(readFileSync(path, "utf8")) as { plugins: Array<{ type: string }> }).plugins.map((p) => p.type)
const isReady = (running: Running) => Effect.runSync(running.status.ready)

describe("CNI installer", () => {
  it("installs, reinstalls what is tampered with, follows the token, and removes everything on exit", async () => {
    const { netDir, binDir, saDir, settings } = setup()
    const primary = join(netDir, "10-calico.conflist")
    writeFileSync(primary, CALICO)
    const running = await start(settings)
    const launcher = join(binDir, "mesh-cni")
    const kubeconfig = join(netDir, "ZZZ-mesh-cni-kubeconfig")

    expect(typesIn(primary)).toEqual(["calico", "portmap", "mesh-cni"])
    expect(read(launcher)).toContain(settings.pluginSource)
    expect(statSync(launcher).mode & 0o777).toBe(0o755)
    expect(statSync(kubeconfig).mode & 0o777).toBe(0o600)
    expect(read(kubeconfig)).toContain("token-1")
    expect(isReady(running)).toBe(true)
    expect(await running.metrics()).toMatch(/mesh_cni_install_ready 1/)
    expect(await running.metrics()).toMatch(/mesh_cni_installs_total\{result="SUCCESS"\} 1/)

    // The primary network rewrites its file without the entry: it comes back.
    writeFileSync(primary, CALICO)
    await eventually(() => typesIn(primary).includes("mesh-cni"), "entry restored")
    // The executable is deleted: it comes back.
    rmSync(launcher)
    await eventually(() => existsSync(launcher), "launcher restored")
    // The token rotates: the kubeconfig follows.
    writeFileSync(join(saDir, "token"), "token-2\n")
    await eventually(() => read(kubeconfig)?.includes("token-2") === true, "kubeconfig rewritten")
    expect(isReady(running)).toBe(true)

    await running.stop()
    expect(read(primary)).toBe(CALICO)
    expect(existsSync(kubeconfig)).toBe(false)
    expect(existsSync(launcher)).toBe(false)
    expect(running.logs.join("\n")).toContain("mesh CNI plugin removed from the node")
  })

  it("waits for a primary network, then installs into it", async () => {
    const { netDir, settings } = setup()
    const running = await start(settings)
    expect(isReady(running)).toBe(false)
    expect(running.logs.join("\n")).toContain("waiting for the primary CNI network config")
    writeFileSync(join(netDir, "10-flannel.conflist"), CALICO)
    await eventually(() => isReady(running), "ready after the primary appears")
    expect(typesIn(join(netDir, "10-flannel.conflist"))).toContain("mesh-cni")
    await running.stop()
  })

  it("turns a .conf into a .conflist and gives the .conf back on exit", async () => {
    const { netDir, settings } = setup()
    const conf = `${JSON.stringify({ cniVersion: "0.4.0", name: "bridge", type: "bridge", bridge: "cni0" }, null, 2)}\n`
    writeFileSync(join(netDir, "10-bridge.conf"), conf)
    const running = await start(settings)
    expect(existsSync(join(netDir, "10-bridge.conf"))).toBe(false)
    expect(typesIn(join(netDir, "10-bridge.conflist"))).toEqual(["bridge", "mesh-cni"])
    await running.stop()
    expect(read(join(netDir, "10-bridge.conf"))).toBe(conf)
    expect(existsSync(join(netDir, "10-bridge.conflist"))).toBe(false)
  })

  it("leaves a malformed config untouched and logged, and installs once it is fixed", async () => {
    const { netDir, settings } = setup({ confName: "10-calico.conflist" })
    const primary = join(netDir, "10-calico.conflist")
    const broken = '{"name": "k8s-pod-network", "plugins": [{"type": "calico"},'
    writeFileSync(primary, broken)
    const running = await start(settings)
    expect(read(primary)).toBe(broken)
    expect(isReady(running)).toBe(false)
    expect(running.logs.join("\n")).toMatch(/10-calico\.conflist: not valid JSON.*left untouched/)
    expect(await running.metrics()).toMatch(/mesh_cni_installs_total\{result="CREATE_CNI_CONFIG_FAILURE"\} 1/)
    writeFileSync(primary, CALICO)
    await eventually(() => isReady(running), "ready once fixed")
    expect(typesIn(primary)).toContain("mesh-cni")
    await running.stop()
    expect(read(primary)).toBe(CALICO)
  })

  it("chains into a --cni-conf-name file whatever its extension, under its own name", async () => {
    const { netDir, settings } = setup({ confName: "10-calico" })
    const primary = join(netDir, "10-calico")
    writeFileSync(primary, CALICO)
    const running = await start(settings)
    await eventually(() => isReady(running), "ready with the named file")
    expect(typesIn(primary)).toEqual(["calico", "portmap", "mesh-cni"])
    expect(running.logs.join("\n")).not.toContain("does not exist yet")
    expect(existsSync(join(netDir, "10-calico.conflist"))).toBe(false)
    await running.stop()
    expect(read(primary)).toBe(CALICO)
  })

  it("writes the mesh-owned list beside the primary and removes only that on exit", async () => {
    const { netDir, settings } = setup({ meshOwned: true })
    const primary = join(netDir, "10-calico.conflist")
    writeFileSync(primary, CALICO)
    const running = await start(settings)
    expect(read(primary)).toBe(CALICO)
    expect(typesIn(join(netDir, "02-mesh-cni.conflist"))).toEqual(["calico", "portmap", "mesh-cni"])
    // The owned list is deleted: it comes back.
    rmSync(join(netDir, "02-mesh-cni.conflist"))
    await eventually(() => existsSync(join(netDir, "02-mesh-cni.conflist")), "owned list restored")
    await running.stop()
    expect(existsSync(join(netDir, "02-mesh-cni.conflist"))).toBe(false)
    expect(read(primary)).toBe(CALICO)
  })

  it("writes its own config file in standalone mode and removes it on exit", async () => {
    const { netDir, settings } = setup({ chained: false })
    const running = await start(settings)
    const own = join(netDir, "YYY-mesh-cni.conf")
    expect(JSON.parse(read(own) ?? "{}").type).toBe("mesh-cni")
    await running.stop()
    expect(existsSync(own)).toBe(false)
  })

  it("refuses to start without a bin directory, a plugin program or a writable kubeconfig", async () => {
    const missingBin = setup()
    rmSync(missingBin.binDir, { recursive: true })
    const noBin = await startFailure(missingBin.settings)
    expect(noBin.result).toBe("COPY_BINARIES_FAILURE")
    expect(noBin.message).toContain("--cni-bin-dir")
    expect(noBin.message).toContain(missingBin.binDir)

    const missingPlugin = setup()
    rmSync(missingPlugin.settings.pluginSource)
    expect((await startFailure(missingPlugin.settings)).message).toContain(missingPlugin.settings.pluginSource)

    // A directory where the kubeconfig goes cannot be replaced by a file, even as root.
    const blocked = setup()
    mkdirSync(join(blocked.netDir, "ZZZ-mesh-cni-kubeconfig"))
    const noKubeconfig = await startFailure(blocked.settings)
    expect(noKubeconfig.result).toBe("CREATE_KUBECONFIG_FAILURE")
    expect(noKubeconfig.message).toContain("ZZZ-mesh-cni-kubeconfig")
    // Nothing was configured: the node's networking is as it was.
    expect(existsSync(join(blocked.netDir, "YYY-mesh-cni.conf"))).toBe(false)

    const noToken = setup()
    chmodSync(noToken.saDir, 0o755)
    rmSync(join(noToken.saDir, "token"))
    expect((await startFailure(noToken.settings)).result).toBe("READ_SERVICE_ACCOUNT_FAILURE")

    const outsidePod = setup({ service: { protocol: "https", host: "", port: "" } })
    expect((await startFailure(outsidePod.settings)).message).toContain("not set")
  })
})
