/**
 * The four binaries as a user meets them: help, version in every format, usage errors,
 * environment errors, logging flags — through the built bin/ entry points.
 */
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { run } from "../support/processes.js"

const BINARIES = ["mesh-discovery", "mesh-agent", "install-cni", "meshctl"] as const
const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")
const strip = (text: string) => text.replace(ansi, "")

describe.concurrent.each(BINARIES)("%s", (name) => {
  it("prints help", async () => {
    const result = await run(name, ["--help"])
    expect(result.code).toBe(0)
    expect(strip(result.stdout)).toContain(name)
    expect(strip(result.stdout)).toContain("version")
  })

  it("prints its version as JSON, YAML, short and full", async () => {
    const json = await run(name, ["version", "-o", "json", ...(name === "meshctl" ? ["--remote=false"] : [])])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual({ clientVersion: { version: expect.any(String) } })

    const yaml = await run(name, [
      "version",
      "-o",
      "yaml",
      "--short=false",
      ...(name === "meshctl" ? ["--remote=false"] : []),
    ])
    expect(yaml.code).toBe(0)
    const full = parseYaml(yaml.stdout).clientVersion
    expect(Object.keys(full).sort()).toEqual([
      "build_time",
      "node_version",
      "platform",
      "revision",
      "status",
      "version",
    ])
    expect(full.node_version).toBe(process.version)

    const short = await run(name, ["version", ...(name === "meshctl" ? ["--remote=false"] : [])])
    expect(short.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it("rejects an unknown flag with a message and exit code 1", async () => {
    const result = await run(name, ["version", "--no-such-flag"])
    expect(result.code).toBe(1)
    expect(strip(result.stdout + result.stderr)).toContain("--no-such-flag")
  })

  it("rejects an unknown log scope and an unknown level", async () => {
    const scope = await run(name, ["version", "--log_output_level", "nosuchscope:debug"])
    expect(scope.code).toBe(1)
    expect(strip(scope.stdout + scope.stderr)).toContain('unknown scope "nosuchscope"')
    const level = await run(name, ["version", "--log_output_level", "default:loud"])
    expect(level.code).toBe(1)
    expect(strip(level.stdout + level.stderr)).toContain('unknown level "loud"')
  })
})

describe.concurrent("flags and environment", () => {
  it("stops mesh-discovery with the variable's name and type on a bad environment value", async () => {
    const result = await run("mesh-discovery", ["discovery", "--registries", "Mock"], {
      PILOT_DEBOUNCE_AFTER: "soon",
      PILOT_PUSH_THROTTLE: "many",
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      'PILOT_DEBOUNCE_AFTER: expected a duration such as 100ms, 30s or 1h0m0s, got "soon"',
    )
    expect(result.stderr).toContain('PILOT_PUSH_THROTTLE: expected an integer, got "many"')
  })

  it("validates discovery flags: registries, durations, addresses, ports", async () => {
    const registry = await run("mesh-discovery", ["discovery", "--registries", "Consul"])
    expect(registry.code).toBe(1)
    expect(strip(registry.stdout + registry.stderr)).toContain('unknown registry "Consul"')
    const duration = await run("mesh-discovery", ["discovery", "--keepaliveInterval", "often"])
    expect(duration.code).toBe(1)
    expect(strip(duration.stdout + duration.stderr)).toContain("--keepaliveInterval")
    const envDuration = await run("mesh-discovery", ["discovery"], { GRPC_KEEPALIVE_INTERVAL: "often" })
    expect(envDuration.code).toBe(1)
    expect(strip(envDuration.stdout + envDuration.stderr)).toContain("GRPC_KEEPALIVE_INTERVAL")
    const address = await run("mesh-discovery", ["discovery", "--grpcAddr", "nowhere"])
    expect(address.code).toBe(1)
    expect(strip(address.stdout + address.stderr)).toContain("--grpcAddr")
    const port = await run("mesh-discovery", ["discovery", "--ctrlz_port", "70000"])
    expect(port.code).toBe(1)
    expect(strip(port.stdout + port.stderr)).toContain("out of range")
  })

  it("lists meshctl's global options", async () => {
    const result = await run("meshctl", ["options"])
    expect(result.code).toBe(0)
    for (const flag of [
      "--as ",
      "--as-group",
      "--as-uid",
      "--context",
      "--meshNamespace",
      "--orchclient-timeout",
      "--orchconfig",
      "--namespace",
      "--vklog",
    ]) {
      expect(result.stdout).toContain(flag)
    }
  })

  it("honours meshctl version --remote=false and reports the missing control plane otherwise", async () => {
    const local = await run("meshctl", ["version", "--remote=false"])
    expect(local.code).toBe(0)
    expect(local.stderr).toBe("")
    const remote = await run("meshctl", ["version", "-n", "default", "-i", "mesh-system"])
    expect(remote.code).toBe(0)
    expect(remote.stderr).toContain("control plane version: unavailable")
  })

  it("reports what install-cni and mesh-agent proxy lack to start on a machine that is not a node", async () => {
    const proxy = await run("mesh-agent", ["proxy"])
    expect(proxy.code).toBe(1)
    expect(proxy.stderr).toContain("CA root certificate (CA_ROOT_CA) ./var/run/secrets/mesh/root-cert.pem")
    const cni = await run("install-cni", ["--repair-enabled=false"])
    expect(cni.code).toBe(1)
    expect(cni.stderr).toContain("cannot use the CNI bin directory (--cni-bin-dir) /host/opt/cni/bin")
  })
})
