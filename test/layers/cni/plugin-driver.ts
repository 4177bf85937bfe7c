/**
 * A small CNI runtime for tests, doing what libcni does for a network config list: finds each
 * plugin's binary by `type` in CNI_PATH, sets the CNI_* variables, pipes each plugin its config
 * (the list's name and cniVersion added) and, on ADD, hands each plugin's result to the next as
 * `prevResult`; DEL runs the plugins in reverse with the cached ADD result.
 */
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"

export interface ConfList {
  readonly cniVersion: string
  readonly name: string
  readonly plugins: ReadonlyArray<Record<string, unknown> & { readonly type: string }>
}

export interface Sandbox {
  readonly containerId: string
  /** Path of the network namespace (`/var/run/netns/<name>`). */
  readonly netns: string
  readonly ifName: string
  /** CNI_ARGS, e.g. `K8S_POD_NAMESPACE=default;K8S_POD_NAME=app`. */
  readonly args: string
}

export interface PluginRun {
  readonly type: string
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
  readonly millis: number
}

export interface ChainResult {
  readonly ok: boolean
  readonly runs: ReadonlyArray<PluginRun>
  /** ADD: the last plugin's result; on failure the failing plugin's error object. */
  readonly output: Record<string, unknown> | undefined
}

/** Runs one plugin binary with the CNI variables and its config on stdin. */
export const runPlugin = (
  cniPath: string,
  type: string,
  command: "ADD" | "DEL" | "CHECK" | "VERSION",
  sandbox: Sandbox,
  config: unknown,
): Promise<PluginRun> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(join(cniPath, type), [], {
      env: {
        PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
        CNI_COMMAND: command,
        CNI_CONTAINERID: sandbox.containerId,
        CNI_NETNS: sandbox.netns,
        CNI_IFNAME: sandbox.ifName,
        CNI_ARGS: sandbox.args,
        CNI_PATH: cniPath,
      },
      stdio: ["pipe", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) =>
      resolve({ type, exitCode: code ?? 1, stdout, stderr, millis: Math.round(performance.now() - started) }),
    )
    child.stdin.end(JSON.stringify(config))
  })

const parse = (text: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    return undefined
  }
}

/** The config one plugin of the list receives. */
const pluginConfig = (list: ConfList, plugin: ConfList["plugins"][number], prevResult: unknown) => ({
  ...plugin,
  name: list.name,
  cniVersion: list.cniVersion,
  ...(prevResult === undefined ? {} : { prevResult }),
})

export const addNetworkList = async (cniPath: string, list: ConfList, sandbox: Sandbox): Promise<ChainResult> => {
  const runs: Array<PluginRun> = []
  let prevResult: Record<string, unknown> | undefined
  for (const plugin of list.plugins) {
    const run = await runPlugin(cniPath, plugin.type, "ADD", sandbox, pluginConfig(list, plugin, prevResult))
    runs.push(run)
    if (run.exitCode !== 0) return { ok: false, runs, output: parse(run.stdout) }
    prevResult = parse(run.stdout)
  }
  return { ok: true, runs, output: prevResult }
}

export const delNetworkList = async (
  cniPath: string,
  list: ConfList,
  sandbox: Sandbox,
  cachedResult: unknown,
): Promise<ChainResult> => {
  const runs: Array<PluginRun> = []
  for (const plugin of [...list.plugins].reverse()) {
    const run = await runPlugin(cniPath, plugin.type, "DEL", sandbox, pluginConfig(list, plugin, cachedResult))
    runs.push(run)
    if (run.exitCode !== 0) return { ok: false, runs, output: parse(run.stdout) }
  }
  return { ok: true, runs, output: undefined }
}

/** Why iptables cannot be used inside a throw-away network namespace here (undefined when it can). */
export const namespaceIptablesUnusable = (prefix: string): string | undefined => {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`
  const add = spawnSync("ip", ["netns", "add", name])
  if (add.status !== 0) return `ip netns add failed: ${add.stderr.toString().trim()}`
  try {
    const save = spawnSync("nsenter", [`--net=/var/run/netns/${name}`, "--", "iptables-save"])
    if (save.status !== 0) return `iptables-save in a namespace failed: ${save.stderr.toString().trim()}`
  } finally {
    spawnSync("ip", ["netns", "del", name])
  }
  return undefined
}
