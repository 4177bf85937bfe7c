/**
 * End-to-end, sidecar mode with a stand-in proxy: the built `mesh-agent proxy` gets its
 * certificate from the real CA, writes the proxy bootstrap, launches the stand-in as the proxy
 * binary (mesh config binaryPath) with the reference's arguments, reports ready once the proxy
 * is live and xDS flowed through the agent's socket, and on SIGTERM drains the proxy (graceful
 * admin drain, then until zero active connections) before stopping it. A second agent renders
 * its bootstrap from --templateFile with PROXY_CONFIG merged into the proxy config and
 * MESH_BOOTSTRAP_OVERRIDE merged over the result; a bad template or CA_PROVIDER stops the start-up.
 */
import { execFile } from "node:child_process"
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { ORCHESTRATOR_REGISTRY } from "../../src/services/registry/orchestrator/service.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { type ControlPlane, startControlPlane } from "../fixtures/agent/control-plane.js"
import { ECHO, endpoint, input, service } from "../fixtures/xds/mesh.js"
import { freePort, freePorts } from "../support/ports.js"
import { type Daemon, ROOT, startDaemon } from "../support/processes.js"
import { outboundHttp } from "../support/proxygen/evaluator.js"
import { StandInType, startStandInProxy } from "../support/proxygen/stand-in-proxy.js"

const execFileAsync = promisify(execFile)

let cp: ControlPlane
let dir: string
let agent: Daemon
let readinessPort: number
let adminPort: number
let dnsPort: number
/** An orchestrator service with a VIP: it and its short forms are in the name table the DNS proxy answers from. */
const DB = "db.default.svc.cluster.local"
const DB_VIP = "10.96.0.50"

/** `dig` against the agent's DNS proxy: the answer's addresses (`+short`). */
const dig = async (name: string, type = "A"): Promise<string> => {
  const { stdout } = await execFileAsync("dig", [
    "@127.0.0.1",
    "-p",
    String(dnsPort),
    "+short",
    "+time=1",
    "+tries=1",
    name,
    type,
  ]).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? "" }))
  return stdout.trim()
}

const events = async () =>
  (await readFile(join(dir, "record"), "utf8").catch(() => ""))
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { event: string; args?: string[] })

const until = async <A>(f: () => Promise<A>, ok: (a: A) => boolean, ms = 20_000) => {
  const limit = Date.now() + ms
  for (;;) {
    const value = await f()
    if (ok(value)) return value
    if (Date.now() > limit) throw new Error(`condition not reached: ${JSON.stringify(value)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const ready = async () => (await fetch(`http://127.0.0.1:${readinessPort}/healthz/ready`)).status

beforeAll(async () => {
  cp = await startControlPlane(
    input({
      services: [service(ECHO, [80]), { ...service(DB, [5432]), addresses: [DB_VIP], registry: ORCHESTRATOR_REGISTRY }],
      endpoints: [endpoint(ECHO, "127.0.0.1", 9)],
    }),
  )
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-sidecar-"))
  ;[adminPort, readinessPort, dnsPort] = await freePorts(3)
  const wrapper = join(dir, "proxy")
  await writeFile(
    wrapper,
    `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "test/fixtures/agent/fake-proxy.mjs")}" "$@"\n`,
  )
  await chmod(wrapper, 0o755)
  await mkdir(join(dir, "etc/mesh/config"), { recursive: true })
  await mkdir(join(dir, "var/run/secrets/mesh"), { recursive: true })
  await writeFile(join(dir, "var/run/secrets/mesh/root-cert.pem"), cp.rootPem)
  await writeFile(join(dir, "token"), await cp.issuer.token({ sub: "system:serviceaccount:default:app" }))
  await writeFile(
    join(dir, "etc/mesh/config/mesh"),
    [
      "defaultConfig:",
      `  discoveryAddress: 127.0.0.1:${cp.xds.port}`,
      "  controlPlaneAuthPolicy: NONE",
      `  binaryPath: ${wrapper}`,
      `  proxyAdminPort: ${adminPort}`,
      "  drainDuration: 30s",
      "",
    ].join("\n"),
  )
  // Names outside the table are forwarded: to a loopback port where nothing answers, never to
  // the machine's own resolver.
  await writeFile(
    join(dir, "resolv.conf"),
    "search default.svc.cluster.local svc.cluster.local\nnameserver 127.0.0.1\n",
  )
  agent = startDaemon(
    "mesh-agent",
    ["proxy", "--proxyLogLevel", "info,upstream:debug", "--concurrency", "2"],
    {
      CA_ADDR: `127.0.0.1:${cp.caPort}`,
      MESHD_SAN: "meshd.mesh-system.svc",
      MESH_TOKEN_PATH: join(dir, "token"),
      POD_NAME: "app-1",
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: "app",
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(readinessPort),
      STATUS_PORT: "0",
      MINIMUM_DRAIN_DURATION: "100ms",
      EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
      FAKE_PROXY_RECORD: join(dir, "record"),
      FAKE_PROXY_ACTIVE: join(dir, "active"),
      MESH_META_DNS_CAPTURE: "true",
      DNS_PROXY_ADDR: `127.0.0.1:${dnsPort}`,
      DNS_PROXY_RESOLV_CONF: join(dir, "resolv.conf"),
    },
    dir,
  )
  await until(events, (e) => e.some((x) => x.event === "listening"), 30_000)
}, 60_000)

afterAll(async () => {
  if (agent && agent.process.exitCode === null) await agent.stop("SIGKILL")
  await cp?.close()
  await rm(dir, { recursive: true, force: true })
})

describe("mesh-agent proxy, sidecar mode (stand-in proxy)", () => {
  it("writes the proxy bootstrap and launches the proxy with it", async () => {
    const start = (await events()).find((e) => e.event === "start")!
    const configFile = join(dir, "etc/mesh/proxy/proxy-rev.json")
    expect(start.args).toEqual(
      expect.arrayContaining(["-c", configFile, "--drain-time-s", "30", "-l", "info", "--concurrency", "2"]),
    )
    expect(start.args).toEqual(expect.arrayContaining(["--component-log-level", "upstream:debug"]))
    const bootstrap = JSON.parse(await readFile(configFile, "utf8"))
    expect(bootstrap.node.id).toBe("sidecar~127.0.0.1~app-1.default~default.svc.cluster.local")
    expect(bootstrap.admin.address.socket_address.port_value).toBe(adminPort)
    expect(
      bootstrap.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.pipe.path,
    ).toBe(join(dir, "etc/mesh/proxy/XDS"))
  })

  it("becomes ready once the proxy is live and xDS has flowed through the agent", async () => {
    expect(await ready()).toBe(503)
    // the proxy's ADS stream, played by the project's ADS client on the agent's socket
    const scope = await Effect.runPromise(Scope.make())
    try {
      const client = await Effect.runPromise(
        makeAdsClient({
          address: `unix://${join(dir, "etc/mesh/proxy/XDS")}`,
          mode: "sotw",
          node: { id: "sidecar~127.0.0.1~app-1.default~default.svc.cluster.local", metadata: plainToStruct({}) },
        }).pipe(Scope.extend(scope)),
      )
      await Effect.runPromise(client.subscribe(TypeUrl.Cluster))
      await Effect.runPromise(client.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.acks ?? 0) >= 1, "10 seconds"))
      await until(ready, (s) => s === 200)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("serves a stand-in proxy's whole ADS handshake through the agent with config it accepts", async () => {
    // What the proxy does at start: CDS, EDS of its EDS clusters, LDS, RDS of the routes its
    // listeners name; every resource is checked against the protos' shape and validate.rules
    // (what the proxy checks before it applies config) and NACKed otherwise.
    const proxy = startStandInProxy({
      address: `unix://${join(dir, "etc/mesh/proxy/XDS")}`,
      node: {
        id: "sidecar~127.0.0.1~app-1.default~default.svc.cluster.local",
        // As the bootstrap the agent wrote says (MESH_META_DNS_CAPTURE): the agent then asks for NDS.
        metadata: { NAMESPACE: "default", LABELS: { app: "echo" }, INSTANCE_IPS: "127.0.0.1", DNS_CAPTURE: "true" },
      },
    })
    try {
      await proxy.waitFor((p) => p.version(StandInType.route) !== "" && p.version(StandInType.endpoint) !== "", 20_000)
      expect(proxy.nacks).toEqual([])
      const listeners = proxy.resources(StandInType.listener)
      expect(proxy.names(StandInType.listener)).toEqual(
        expect.arrayContaining(["virtualOutbound", "virtualInbound", "0.0.0.0_80"]),
      )
      expect(proxy.names(StandInType.cluster)).toEqual(
        expect.arrayContaining([`outbound|80||${ECHO}`, "PassthroughCluster", "BlackHoleCluster", "inbound|9||"]),
      )
      // Plain HTTP to echo:80 from the app reaches echo's cluster (gRPC port: h2 only).
      const routed = outboundHttp({
        listeners,
        routes: proxy.resources(StandInType.route),
        port: 80,
        host: ECHO,
        path: "/echo.Echo/Call",
      })
      expect(routed).toMatchObject({ kind: "route", cluster: `outbound|80||${ECHO}` })
    } finally {
      proxy.close()
    }
  })

  it("answers mesh names from the control plane's name table with DNS capture on, and the short form too", async () => {
    // The table came with the proxy's ADS stream of the test above (the agent subscribes for it).
    expect(
      await until(
        () => dig(DB),
        (a) => a === DB_VIP,
      ),
    ).toBe(DB_VIP)
    expect(await dig("db.default", "A")).toBe(DB_VIP)
    // A name the mesh knows with no IPv6 address: an empty answer, not NXDOMAIN.
    expect(await dig(DB, "AAAA")).toBe("")
  })

  it("on SIGTERM drains the proxy until its connections reach zero, then stops it and exits 0", async () => {
    await writeFile(join(dir, "active"), "1")
    agent.process.kill("SIGTERM")
    await until(events, (e) => e.some((x) => x.event === "drain"))
    expect((await events()).some((e) => e.event === "sigterm")).toBe(false)
    expect(agent.process.exitCode).toBeNull()
    await writeFile(join(dir, "active"), "0")
    const code = await new Promise<number | null>((resolve) =>
      agent.process.exitCode !== null ? resolve(agent.process.exitCode) : agent.process.once("exit", resolve),
    )
    expect(code).toBe(0)
    expect((await events()).map((e) => e.event).slice(-2)).toEqual(["drain", "sigterm"])
  })
})

describe("mesh-agent proxy, sidecar mode: --templateFile, PROXY_CONFIG and MESH_BOOTSTRAP_OVERRIDE", () => {
  let dir2: string
  let agent2: Daemon | undefined
  let adminPort2: number
  const TEMPLATE = `{
  "node": {"id": "{{ .nodeID }}", "cluster": "{{ .cluster }}", "metadata": {{ .meta_json_str }}},
  "admin": {"address": {"socket_address": {"address": "{{ .localhost }}", "port_value": {{ .adminPort }}}}},
  "stats_config": {"stats_tags": {{ toJSON .extraStatTags }}},
  "tracing_address": "{{ .config.tracing.zipkin.address }}",
  "static_resources": {"clusters": [
    {"name": "xds-grpc", "pipe": "{{ .xdsSocket }}"},
    {"name": "sds-grpc", "pipe": "{{ .sdsSocket }}"}
  ]}
}
`
  const events2 = async () =>
    (await readFile(join(dir2, "record"), "utf8").catch(() => ""))
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { event: string; args?: string[] })

  const env2 = (extra: Record<string, string>) => ({
    CA_ADDR: `127.0.0.1:${cp.caPort}`,
    CA_ROOT_CA: join(dir2, "root-cert.pem"),
    MESHD_SAN: "meshd.mesh-system.svc",
    MESH_TOKEN_PATH: join(dir2, "token"),
    POD_NAME: "app-2",
    POD_NAMESPACE: "default",
    SERVICE_ACCOUNT: "app",
    INSTANCE_IP: "127.0.0.1",
    PROXY_STATUS_PORT: "0",
    STATUS_PORT: "0",
    MINIMUM_DRAIN_DURATION: "100ms",
    ECC_SIGNATURE_ALGORITHM: "ECDSA",
    FAKE_PROXY_RECORD: join(dir2, "record"),
    ...extra,
  })

  /** Runs an agent in dir2 that must fail at start-up; resolves with its exit code and output. */
  const failing = async (args: ReadonlyArray<string>, extra: Record<string, string>) => {
    const daemon = startDaemon("mesh-agent", ["proxy", ...args], env2(extra), dir2)
    const code = await new Promise<number | null>((resolve) =>
      daemon.process.exitCode !== null ? resolve(daemon.process.exitCode) : daemon.process.once("exit", resolve),
    )
    return { code, output: daemon.output() }
  }

  beforeAll(async () => {
    dir2 = await mkdtemp(join(tmpdir(), "mesh-agent-sidecar-template-"))
    adminPort2 = await freePort()
    const wrapper = join(dir2, "proxy")
    await writeFile(
      wrapper,
      `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "test/fixtures/agent/fake-proxy.mjs")}" "$@"\n`,
    )
    await chmod(wrapper, 0o755)
    await mkdir(join(dir2, "etc/mesh/config"), { recursive: true })
    await writeFile(join(dir2, "root-cert.pem"), cp.rootPem)
    await writeFile(join(dir2, "token"), await cp.issuer.token({ sub: "system:serviceaccount:default:app" }))
    await writeFile(join(dir2, "bootstrap.tmpl.json"), TEMPLATE)
    await writeFile(join(dir2, "bad.tmpl.json"), '{"node": {"id": "{{ .nodeId }}"}}\n')
    await writeFile(
      join(dir2, "override.yaml"),
      ["admin:", "  access_log_path: /dev/null", "stats_config:", "  stats_tags: []", "layered_runtime: {}", ""].join(
        "\n",
      ),
    )
    // proxyAdminPort comes from PROXY_CONFIG, not from the mesh config
    await writeFile(
      join(dir2, "etc/mesh/config/mesh"),
      [
        "defaultConfig:",
        `  discoveryAddress: 127.0.0.1:${cp.xds.port}`,
        "  controlPlaneAuthPolicy: NONE",
        `  binaryPath: ${wrapper}`,
        "  extraStatTags: [from_mesh_config]",
        "",
      ].join("\n"),
    )
  }, 30_000)

  afterAll(async () => {
    if (agent2 && agent2.process.exitCode === null) await agent2.stop("SIGKILL")
    await rm(dir2, { recursive: true, force: true })
  })

  it("the stand-in proxy gets the rendered template with PROXY_CONFIG and the override merged", async () => {
    agent2 = startDaemon(
      "mesh-agent",
      ["proxy", "--templateFile", join(dir2, "bootstrap.tmpl.json"), "--serviceCluster", "app.default"],
      env2({
        PROXY_CONFIG: JSON.stringify({
          proxyAdminPort: adminPort2,
          tracing: { zipkin: { address: "zipkin.test:9411" } },
        }),
        MESH_BOOTSTRAP_OVERRIDE: join(dir2, "override.yaml"),
      }),
      dir2,
    )
    // the stand-in listens on the admin port it read from the bootstrap
    await until(events2, (e) => e.some((x) => x.event === "listening"), 30_000)
    const start = (await events2()).find((e) => e.event === "start")!
    const configFile = start.args![start.args!.indexOf("-c") + 1]!
    expect(configFile).toBe(join(dir2, "etc/mesh/proxy/proxy-rev.json"))
    const bootstrap = JSON.parse(await readFile(configFile, "utf8"))
    expect(bootstrap).toEqual({
      node: {
        id: "sidecar~127.0.0.1~app-2.default~default.svc.cluster.local",
        cluster: "app.default",
        metadata: expect.objectContaining({ NAMESPACE: "default" }),
      },
      admin: {
        address: { socket_address: { address: "127.0.0.1", port_value: adminPort2 } },
        access_log_path: "/dev/null",
      },
      // the template rendered [from_mesh_config]; the override's list replaced it
      stats_config: { stats_tags: [] },
      tracing_address: "zipkin.test:9411",
      static_resources: {
        clusters: [
          { name: "xds-grpc", pipe: join(dir2, "etc/mesh/proxy/XDS") },
          { name: "sds-grpc", pipe: expect.stringMatching(/workload-spiffe-uds\/socket$/) },
        ],
      },
      layered_runtime: {},
    })
    expect((await fetch(`http://127.0.0.1:${adminPort2}/ready`)).status).toBe(200)
    expect(await agent2.stop("SIGTERM")).toBe(0)
  })

  it("a template with an unknown field stops the start-up with exit 1, naming the file and field", async () => {
    const { code, output } = await failing(["--templateFile", join(dir2, "bad.tmpl.json")], {})
    expect(code).toBe(1)
    expect(output).toContain(`--templateFile ${join(dir2, "bad.tmpl.json")}:1: unknown field .nodeId`)
  })

  it("a missing MESH_BOOTSTRAP_OVERRIDE file or a bad PROXY_CONFIG stops the start-up with exit 1", async () => {
    const missing = await failing([], { MESH_BOOTSTRAP_OVERRIDE: join(dir2, "nope.json") })
    expect(missing.code).toBe(1)
    expect(missing.output).toMatch(/MESH_BOOTSTRAP_OVERRIDE .*nope\.json: cannot read: ENOENT/)
    const bad = await failing([], { PROXY_CONFIG: "concurrency: -2" })
    expect(bad.code).toBe(1)
    expect(bad.output).toContain("PROXY_CONFIG: field concurrency: concurrency must be greater than or equal to 0")
  })

  it("an unsupported CA_PROVIDER or CREDENTIAL_FETCHER_TYPE stops the start-up with exit 1, naming the supported values", async () => {
    const ca = await failing([], { CA_PROVIDER: "GoogleCA" })
    expect(ca.code).toBe(1)
    expect(ca.output).toContain('CA_PROVIDER "GoogleCA" is not supported: use MeshCA or Citadel')
    const fetcher = await failing([], { CREDENTIAL_FETCHER_TYPE: "GoogleComputeEngine" })
    expect(fetcher.code).toBe(1)
    expect(fetcher.output).toContain('CREDENTIAL_FETCHER_TYPE "GoogleComputeEngine" is not supported: use JWT')
  })
})
