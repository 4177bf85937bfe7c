/**
 * The two control planes of the side-by-side benchmark (scripts/bench-versus.ts), each started as
 * a process on loopback against the same real API server: mesh-discovery from dist/ and the
 * reference's pilot-discovery built by scripts/build-reference.sh. Also what is read about a
 * process from /proc (CPU seconds, peak RSS) and the machine's load average. Built as a script
 * entry of its own, it does nothing when run.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { discoveryArgs } from "../test/support/discovery.js"
import { freePorts } from "../test/support/ports.js"
import { binary, ROOT } from "../test/support/processes.js"

export interface ControlPlane {
  readonly name: "mesh" | "reference"
  readonly pid: number
  /** Resolves once the server's readiness endpoint answers 200, with its plaintext ADS host:port. */
  readonly ready: () => Promise<string>
  readonly output: () => string
  /** SIGTERM (a CPU profile is written then), SIGKILL after 15 s. */
  readonly stop: () => Promise<void>
  /** How it was started, for the report. */
  readonly command: string
}

/** Debounce both servers use (each one's PILOT_DEBOUNCE_AFTER). */
export const DEBOUNCE = "100ms"

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

const hasSetpriv = (() => {
  try {
    execFileSync("setpriv", ["--help"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** Started with the kernel's parent-death signal when setpriv is there: no server outlives the run. */
const startProcess = (file: string, args: ReadonlyArray<string>, env: Record<string, string>, cwd: string) => {
  const child: ChildProcess = hasSetpriv
    ? spawn("setpriv", ["--pdeathsig", "SIGKILL", "--", file, ...args], {
        env: { ...process.env, ...env },
        cwd,
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn(file, args, { env: { ...process.env, ...env }, cwd, stdio: ["ignore", "pipe", "pipe"] })
  // Only the tail and the first lines are kept: a verbose server must not grow this process.
  let head = ""
  let tail = ""
  const append = (chunk: Buffer) => {
    if (head.length < 20_000) head += chunk.toString()
    else tail = (tail + chunk.toString()).slice(-100_000)
  }
  child.stdout?.on("data", append)
  child.stderr?.on("data", append)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
      await exited
      clearTimeout(timer)
    }
    // Its working directory (mesh config, anything it wrote) goes with it.
    rmSync(cwd, { recursive: true, force: true })
  }
  return { child, output: () => `${head}${tail === "" ? "" : `\n[...]\n${tail}`}`, stop, exited }
}

const waitHttp200 = async (url: string, what: string, output: () => string, exited: () => boolean) => {
  const deadline = Date.now() + 600_000
  for (;;) {
    if (exited()) throw new Error(`${what} exited before it was ready:\n${output().slice(-6000)}`)
    const status = await fetch(url)
      .then((r) => r.status)
      .catch(() => 0)
    if (status === 200) return
    if (Date.now() > deadline) throw new Error(`${what} was not ready in 600 s:\n${output().slice(-6000)}`)
    await sleep(50)
  }
}

const waitOutput = async (output: () => string, pattern: RegExp, what: string, exited: () => boolean) => {
  const deadline = Date.now() + 120_000
  for (;;) {
    const match = output().match(pattern)
    if (match !== null) return match
    if (exited() || Date.now() > deadline)
      throw new Error(`${what}: no line matching ${pattern}:\n${output().slice(-6000)}`)
    await sleep(20)
  }
}

export interface StartOptions {
  readonly kubeconfig: string
  /** Directory for a V8 CPU profile of mesh-discovery (written when it stops), or "". */
  readonly cpuProfDir: string
}

/** mesh-discovery: the orchestrator registry, config from the API server, its CA and leader election on (defaults). */
export const startMesh = async (options: StartOptions): Promise<ControlPlane> => {
  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": options.kubeconfig }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  const nodeFlags = options.cpuProfDir === "" ? [] : ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`]
  const env = {
    POD_NAME: "meshd-bench",
    POD_NAMESPACE: "mesh-system",
    PILOT_DEBOUNCE_AFTER: DEBOUNCE,
    // The reference waits on a slow reader's flow control without a deadline; mesh-discovery's
    // default 5 s deadline closes the stream, and on a loaded machine the reconnects never settle.
    PILOT_XDS_SEND_TIMEOUT: "0s",
    NO_COLOR: "1",
  }
  const cwd = mkdtempSync(join(tmpdir(), "bench-versus-mesh-"))
  // Profiled, the bundle runs without bin/launch.cjs: loaded through its V8 code cache, the
  // daemon's lazy imports fail under --cpu-prof ("A dynamic import callback was not specified").
  const entry = options.cpuProfDir === "" ? binary("mesh-discovery") : join(ROOT, "dist", "mesh-discovery.cjs")
  const p = startProcess(process.execPath, [...nodeFlags, entry, ...args], env, cwd)
  const exited = () => p.child.exitCode !== null || p.child.signalCode !== null
  const listening = async (what: RegExp) => (await waitOutput(p.output, what, "mesh-discovery", exited))[1]!
  return {
    name: "mesh",
    pid: p.child.pid!,
    ready: async () => {
      const http = await listening(/http listening on ([\d.]+:\d+)/)
      await waitHttp200(`http://${http}/ready`, "mesh-discovery", p.output, exited)
      return await listening(/ADS server listening on ([\d.]+:\d+)/)
    },
    output: p.output,
    stop: p.stop,
    command: `${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")} node ${nodeFlags.join(" ")} dist/mesh-discovery ${args.join(" ")}`,
  }
}

/** Where build-reference.sh puts pilot-discovery (building it when missing: minutes when cold). */
export const referenceBinary = (): string =>
  execFileSync("bash", [join(ROOT, "scripts/build-reference.sh")], { stdio: ["ignore", "pipe", "inherit"] })
    .toString()
    .trim()

/** The pinned istio.io/istio version (test/reference/go/go.mod). */
export const referenceVersion = (): string =>
  readFileSync(join(ROOT, "test/reference/go/go.mod"), "utf8").match(/^\s*istio\.io\/istio\s+(v\S+)/m)?.[1] ?? "?"

/** The reference's own CRDs, from its Go module's manifests (downloaded by the build; not committed here). */
export const referenceCrdsYaml = (): string => {
  const dir = execFileSync("go", ["list", "-m", "-f", "{{.Dir}}", "istio.io/istio"], {
    cwd: join(ROOT, "test/reference/go"),
    env: { ...process.env, GOFLAGS: "-mod=readonly" },
  })
    .toString()
    .trim()
  return readFileSync(join(dir, "manifests/charts/base/files/crd-all.gen.yaml"), "utf8")
}

/**
 * pilot-discovery outside a cluster, as its local-run setups start it: `--kubeconfig`, its
 * namespace, a mesh config file, every listener on a loopback port. Its CA (self-signed root kept
 * in a Secret of its namespace) and leader election stay on, as mesh-discovery's do. What cannot
 * run here is absent, not faked: no injection template (the injector is skipped), no webhook
 * configurations to patch.
 */
export const startReference = async (file: string, options: StartOptions): Promise<ControlPlane> => {
  const cwd = mkdtempSync(join(tmpdir(), "bench-versus-reference-"))
  const meshConfig = join(cwd, "mesh.yaml")
  writeFileSync(meshConfig, "trustDomain: cluster.local\nrootNamespace: istio-system\n")
  const [grpc, http, monitoring, https, secure, ctrlz] = (await freePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  const args = [
    "discovery",
    `--kubeconfig=${options.kubeconfig}`,
    `--meshConfig=${meshConfig}`,
    `--networksConfig=${join(cwd, "absent-networks.yaml")}`,
    "--namespace=istio-system",
    "--registries=Kubernetes",
    "--domain=cluster.local",
    `--grpcAddr=127.0.0.1:${grpc}`,
    `--httpAddr=127.0.0.1:${http}`,
    `--monitoringAddr=127.0.0.1:${monitoring}`,
    `--httpsAddr=127.0.0.1:${https}`,
    `--secureGRPCAddr=127.0.0.1:${secure}`,
    "--ctrlz_address=127.0.0.1",
    `--ctrlz_port=${ctrlz}`,
    "--log_output_level=default:info",
  ]
  const env = {
    POD_NAME: "istiod-bench",
    POD_NAMESPACE: "istio-system",
    REVISION: "default",
    PILOT_DEBOUNCE_AFTER: DEBOUNCE,
    KUBECONFIG: options.kubeconfig,
  }
  const p = startProcess(file, args, env, cwd)
  const exited = () => p.child.exitCode !== null || p.child.signalCode !== null
  return {
    name: "reference",
    pid: p.child.pid!,
    ready: async () => {
      await waitHttp200(`http://127.0.0.1:${http}/ready`, "pilot-discovery", p.output, exited)
      return `127.0.0.1:${grpc}`
    },
    output: p.output,
    stop: p.stop,
    command: `${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")} pilot-discovery ${args.join(" ")}`,
  }
}

/** CPU seconds (user + system) of a process, from /proc/<pid>/stat (clock ticks of 1/100 s). */
export const cpuSecondsOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Peak RSS (VmHWM) of a process in MiB. */
export const peakRssMiBOf = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Math.round(Number(status.match(/^VmHWM:\s+(\d+) kB/m)?.[1] ?? 0) / 1024)
}

/** The machine's 1-minute load average now. */
export const loadAverage = (): number => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0])
