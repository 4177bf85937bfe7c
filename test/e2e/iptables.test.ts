/**
 * mesh-iptables for real: the command (through @effect/cli, as the binary runs it) applies the
 * capture rules inside a throw-away "pod" network namespace joined by a veth pair to a "peer"
 * namespace, and real sockets prove where connections land. Needs root, `ip netns` and iptables;
 * skipped (with the reason printed) when any of them is unusable. The dry-run test needs none.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Logger, LogLevel } from "effect"
import { layerWith } from "../../src/layers/iptables/iptables.js"
import { iptablesCommand } from "../../src/programs/mesh-agent/iptables-command.js"
import { loggingOptions } from "../../src/programs/shared/logging-options.js"
import { defaultIptablesConfig } from "../../src/services/iptables/config.js"
import { type ApplyOptions, Iptables } from "../../src/services/iptables/service.js"
import { agentScopes } from "../../src/services/logging/scopes.js"

const cli = Command.run(iptablesCommand(loggingOptions(agentScopes)), { name: "mesh-agent", version: "test" })

/** Runs `mesh-agent mesh-iptables <args>` in-process with the given environment. */
const runCommand = (args: ReadonlyArray<string>, env: Record<string, string> = {}, logTarget?: string) =>
  Effect.runPromiseExit(
    cli([
      "node",
      "mesh-iptables",
      ...(logTarget === undefined
        ? ["--log_output_level", "iptables:error,default:error"]
        : ["--log_output_level", "iptables:info", "--log_target", logTarget]),
      ...args,
    ]).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
    ),
  )

describe("mesh-iptables --dry-run", () => {
  it("prints the restore input and the stand-in writes it to DRY_RUN_FILE_PATH; nothing runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mesh-ipt-dry-"))
    const file = join(dir, "stdin.txt")
    try {
      const exit = await runCommand(
        [
          "-n",
          "-p",
          "15001",
          "-z",
          "15006",
          "-u",
          "1337",
          "-g",
          "1337",
          "-m",
          "REDIRECT",
          "-i",
          "*",
          "-b",
          "*",
          "-d",
          "15020,15021",
        ],
        { DRY_RUN_FILE_PATH: file, INSTANCE_IP: "10.0.0.5" },
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      const text = readFileSync(file, "utf8")
      expect(text.startsWith("* nat\n-N MESH_INBOUND\n-N MESH_REDIRECT\n-N MESH_IN_REDIRECT\n-N MESH_OUTPUT\n")).toBe(
        true,
      )
      expect(text).toContain(
        "-A MESH_INBOUND -p tcp --dport 15020 -j RETURN\n-A MESH_INBOUND -p tcp --dport 15021 -j RETURN\n",
      )
      expect(text).toContain("-A MESH_OUTPUT -j MESH_REDIRECT\nCOMMIT\n")
      // IPv4 only: one restore input with one nat section.
      expect(text.match(/^\* nat$/gm)).toHaveLength(1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("dual stack writes the IPv4 input first, then the IPv6 one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mesh-ipt-dry-"))
    const file = join(dir, "stdin.txt")
    try {
      const exit = await runCommand(["--dry-run", "--dual-stack", "-u", "1337", "-i", "*"], { DRY_RUN_FILE_PATH: file })
      expect(Exit.isSuccess(exit)).toBe(true)
      const sections = readFileSync(file, "utf8").split(/^\* nat$/m)
      expect(sections).toHaveLength(3)
      expect(sections[1]).toContain("-s 127.0.0.6/32")
      expect(sections[2]).toContain("-s ::6/128")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("rejects an unknown interception mode as a usage error", async () => {
    const exit = await runCommand(["-n", "-m", "BOGUS"])
    expect(Exit.isFailure(exit)).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// The real thing

const which = (binary: string) => spawnSync("sh", ["-c", `command -v ${binary}`]).status === 0

const unusableBecause = (): string | undefined => {
  if (process.platform !== "linux") return "not Linux"
  if (process.getuid?.() !== 0) return "not root"
  for (const binary of ["ip", "iptables", "iptables-save", "iptables-restore"]) {
    if (!which(binary)) return `${binary} is not installed`
  }
  const name = `mesh-ipt-check-${randomBytes(3).toString("hex")}`
  const add = spawnSync("ip", ["netns", "add", name])
  if (add.status !== 0) return `ip netns add failed: ${add.stderr.toString().trim()}`
  try {
    const save = spawnSync("ip", ["netns", "exec", name, "iptables-save"])
    if (save.status !== 0) return `iptables-save in a namespace failed: ${save.stderr.toString().trim()}`
  } finally {
    spawnSync("ip", ["netns", "del", name])
  }
  return undefined
}

const skipReason = unusableBecause()
if (skipReason !== undefined) console.warn(`skipping the real iptables tests: ${skipReason}`)

const id = randomBytes(3).toString("hex")
const POD = `mesh-ipt-${id}-pod`
const PEER = `mesh-ipt-${id}-peer`
const POD_IP = "192.168.247.2"
const PEER_IP = "192.168.247.1"
const POD_IP6 = "fd00:247::2"
const PEER_IP6 = "fd00:247::1"
const PROXY_UID = 1337
const APP_UID = 4242

const sh = (...argv: Array<string>) => execFileSync(argv[0]!, argv.slice(1), { encoding: "utf8", stdio: "pipe" })
const inNs = (ns: string, ...argv: Array<string>) => sh("ip", "netns", "exec", ns, ...argv)

/** iptables-save without comments and counters, for comparisons. */
const saved = (ns: string) =>
  inNs(ns, "iptables-save")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => line.replace(/\[\d+:\d+\]/, "[0:0]"))
    .join("\n")

/** Servers answering every TCP connection / UDP datagram with their name. */
const SERVER = `
const net = require("net"), dgram = require("dgram");
const specs = JSON.parse(process.argv[1]);
let left = specs.length;
const ready = () => { if (--left === 0) console.log("ready"); };
for (const s of specs) {
  if (s.proto === "tcp") {
    net.createServer((c) => { c.on("error", () => {}); c.end(s.name); }).listen(s.port, s.host, ready);
  } else {
    const sock = dgram.createSocket(s.host.includes(":") ? "udp6" : "udp4");
    sock.on("message", (m, r) => sock.send(s.name, r.port, r.address));
    sock.bind(s.port, s.host, ready);
  }
}
`

/** One TCP connection or UDP query as a given uid; prints what answered. */
const CLIENT = `
const net = require("net"), dgram = require("dgram");
const c = JSON.parse(process.argv[1]);
if (c.uid !== undefined) { process.setgroups([c.uid]); process.setgid(c.uid); process.setuid(c.uid); }
const done = (text) => { process.stdout.write(text + "\\n", () => process.exit(0)); };
setTimeout(() => done("timeout"), 3000);
if (c.proto === "tcp") {
  const s = net.connect(c.port, c.host);
  let data = "";
  s.on("data", (d) => (data += d));
  s.on("end", () => done(data));
  s.on("error", (e) => done("error:" + e.code));
} else {
  const s = dgram.createSocket(c.host.includes(":") ? "udp6" : "udp4");
  s.on("message", (m) => done(String(m)));
  s.send("query", c.port, c.host);
}
`

/** A transparent (IP_TRANSPARENT) listener, which TPROXY needs; node cannot set the option. */
const TPROXY_LISTENER = `
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_IP, 19, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(sys.argv[2].encode())
    c.close()
`

const children: Array<ChildProcess> = []

/** Starts a long-running helper in a namespace and waits for its "ready" line. */
const startHelper = (ns: string, argv: ReadonlyArray<string>) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn("ip", ["netns", "exec", ns, ...argv], { stdio: ["ignore", "pipe", "pipe"] })
    children.push(child)
    let out = ""
    let err = ""
    child.stdout!.on("data", (chunk) => {
      out += chunk
      if (out.includes("ready")) resolve(child)
    })
    child.stderr!.on("data", (chunk) => (err += chunk))
    child.on("exit", (code) => reject(new Error(`helper ${argv.join(" ")} exited with ${code}: ${err}`)))
  })

const stopHelper = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.removeAllListeners("exit")
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

const connect = (ns: string, request: { proto: "tcp" | "udp"; host: string; port: number; uid?: number }) =>
  inNs(ns, process.execPath, "-e", CLIENT, JSON.stringify(request)).trim()

const FOREIGN = [
  ["-t", "nat", "-N", "FOREIGN_CHAIN"],
  ["-t", "nat", "-A", "FOREIGN_CHAIN", "-p", "tcp", "--dport", "9999", "-j", "RETURN"],
  ["-t", "nat", "-A", "OUTPUT", "-p", "udp", "--dport", "9999", "-j", "FOREIGN_CHAIN"],
  ["-t", "filter", "-A", "INPUT", "-p", "tcp", "--dport", "9998", "-j", "ACCEPT"],
]

const BASE_OPTIONS: ApplyOptions = {
  config: defaultIptablesConfig,
  dryRun: false,
  cleanupOnly: false,
  reconcile: false,
  forceApply: false,
  skipRuleApply: false,
  runValidation: false,
  probePort: 15002,
  probeTimeout: Duration.seconds(5),
  networkNamespace: "",
  cniMode: false,
  dryRunFilePath: "",
}

const CAPTURE_ARGS = [
  "-p",
  "15001",
  "-z",
  "15006",
  "-u",
  String(PROXY_UID),
  "-g",
  String(PROXY_UID),
  "-i",
  "*",
  "-b",
  "*",
]

describe.skipIf(skipReason !== undefined)("mesh-iptables in a network namespace", () => {
  let baseline = ""

  beforeAll(() => {
    sh("ip", "netns", "add", POD)
    sh("ip", "netns", "add", PEER)
    sh("ip", "link", "add", `mp${id}`, "type", "veth", "peer", "name", `mq${id}`)
    sh("ip", "link", "set", `mp${id}`, "netns", POD)
    sh("ip", "link", "set", `mq${id}`, "netns", PEER)
    for (const [ns, link, address, address6] of [
      [POD, `mp${id}`, POD_IP, POD_IP6],
      [PEER, `mq${id}`, PEER_IP, PEER_IP6],
    ] as const) {
      inNs(ns, "ip", "link", "set", "lo", "up")
      inNs(ns, "ip", "addr", "add", `${address}/24`, "dev", link)
      // nodad: usable at once, no duplicate-address detection to wait for.
      inNs(ns, "ip", "-6", "addr", "add", `${address6}/64`, "dev", link, "nodad")
      inNs(ns, "ip", "link", "set", link, "up")
    }
    // The pod's resolver is the peer (ip netns exec shows this file as /etc/resolv.conf).
    mkdirSync(`/etc/netns/${POD}`, { recursive: true })
    writeFileSync(`/etc/netns/${POD}/resolv.conf`, `nameserver ${PEER_IP}\n`)
    for (const rule of FOREIGN) inNs(POD, "iptables", "-w", ...rule)
    baseline = saved(POD)
  })

  afterAll(async () => {
    await Promise.all(children.map(stopHelper))
    spawnSync("ip", ["netns", "del", POD])
    spawnSync("ip", ["netns", "del", PEER])
    rmSync(`/etc/netns/${POD}`, { recursive: true, force: true })
  })

  it("applies with --run-validation: the probe from the proxy uid is redirected", async () => {
    const logDir = mkdtempSync(join(tmpdir(), "mesh-ipt-log-"))
    const log = join(logDir, "log")
    const exit = await runCommand(
      [...CAPTURE_ARGS, "--network-namespace", POD, "--redirect-dns", "--run-validation"],
      {},
      log,
    )
    expect(exit).toStrictEqual(Exit.void)
    expect(readFileSync(log, "utf8")).toContain(
      "validation passed: IPv4 127.0.0.6:15002 from uid 1337 was redirected to the inbound capture port 15006",
    )
    rmSync(logDir, { recursive: true, force: true })
    const state = saved(POD)
    for (const chain of ["MESH_INBOUND", "MESH_REDIRECT", "MESH_IN_REDIRECT", "MESH_OUTPUT", "MESH_OUTPUT_DNS"]) {
      expect(state).toContain(`:${chain} - [0:0]`)
    }
    expect(state).toContain("-A OUTPUT -j MESH_OUTPUT")
    expect(state).toContain("-A PREROUTING -p tcp -j MESH_INBOUND")
    expect(state).toContain(`-A MESH_OUTPUT_DNS -d ${PEER_IP}/32 -p udp -m udp --dport 53 -j REDIRECT --to-ports 15053`)
    // Foreign chains and rules are untouched.
    for (const line of baseline.split("\n").filter((line) => line.startsWith("-A") || line.startsWith(":FOREIGN"))) {
      expect(state).toContain(line)
    }
  })

  it("real sockets land where the rules say", async () => {
    const pod = await startHelper(POD, [
      process.execPath,
      "-e",
      SERVER,
      JSON.stringify([
        { proto: "tcp", host: "0.0.0.0", port: 15001, name: "outbound-capture" },
        { proto: "tcp", host: "0.0.0.0", port: 15006, name: "inbound-capture" },
        { proto: "tcp", host: "0.0.0.0", port: 8080, name: "pod-app" },
        { proto: "udp", host: "0.0.0.0", port: 15053, name: "agent-dns" },
      ]),
    ])
    const peer = await startHelper(PEER, [
      process.execPath,
      "-e",
      SERVER,
      JSON.stringify([
        { proto: "tcp", host: "0.0.0.0", port: 8080, name: "peer-app" },
        { proto: "udp", host: "0.0.0.0", port: 53, name: "peer-dns" },
      ]),
    ])
    try {
      // An application (not the proxy's uid) calling the peer lands on the outbound capture port.
      expect(connect(POD, { proto: "tcp", host: PEER_IP, port: 8080, uid: APP_UID })).toBe("outbound-capture")
      expect(connect(POD, { proto: "tcp", host: PEER_IP, port: 8080 })).toBe("outbound-capture")
      // The proxy's own connection is not captured.
      expect(connect(POD, { proto: "tcp", host: PEER_IP, port: 8080, uid: PROXY_UID })).toBe("peer-app")
      // Inbound to an application port lands on the inbound capture port.
      expect(connect(PEER, { proto: "tcp", host: POD_IP, port: 8080 })).toBe("inbound-capture")
      // DNS to the resolv.conf server lands on the agent; the proxy's own DNS goes upstream.
      expect(connect(POD, { proto: "udp", host: PEER_IP, port: 53, uid: APP_UID })).toBe("agent-dns")
      expect(connect(POD, { proto: "udp", host: PEER_IP, port: 53, uid: PROXY_UID })).toBe("peer-dns")
    } finally {
      await stopHelper(pod)
      await stopHelper(peer)
    }
  })

  it("a second apply without --force-apply changes nothing", async () => {
    const before = saved(POD)
    const exit = await runCommand([...CAPTURE_ARGS, "--network-namespace", POD, "--redirect-dns"])
    expect(exit).toStrictEqual(Exit.void)
    expect(saved(POD)).toBe(before)
    // Through the service, the outcome is reported as already in place.
    const options: ApplyOptions = {
      config: {
        ...defaultIptablesConfig,
        proxyUid: String(PROXY_UID),
        proxyGid: String(PROXY_UID),
        outboundIpRangesInclude: "*",
        inboundPortsInclude: "*",
        redirectDns: true,
        dnsServersV4: [PEER_IP],
      },
      dryRun: false,
      cleanupOnly: false,
      reconcile: false,
      forceApply: false,
      skipRuleApply: false,
      runValidation: false,
      probePort: 15002,
      probeTimeout: Duration.seconds(5),
      networkNamespace: POD,
      cniMode: false,
      dryRunFilePath: "",
    }
    const apply = (overrides: Partial<ApplyOptions>) =>
      Effect.runPromise(
        Effect.flatMap(Iptables, (iptables) => iptables.apply({ ...options, ...overrides })).pipe(
          Effect.provide(layerWith({})),
          Logger.withMinimumLogLevel(LogLevel.None),
        ),
      )
    expect((await apply({})).actions).toEqual([{ family: 4, action: "already-in-place" }])
    // --force-apply replaces them atomically, ending in the same state.
    expect((await apply({ forceApply: true })).actions).toEqual([{ family: 4, action: "replaced" }])
    expect(saved(POD)).toBe(before)
    // Drift (a rule removed by hand) fails without --reconcile and is repaired with it.
    inNs(POD, "iptables", "-w", "-t", "nat", "-D", "MESH_OUTPUT", "-j", "MESH_REDIRECT")
    const drifted = await Effect.runPromiseExit(
      Effect.flatMap(Iptables, (iptables) => iptables.apply(options)).pipe(
        Effect.provide(layerWith({})),
        Logger.withMinimumLogLevel(LogLevel.None),
      ),
    )
    expect(Exit.isFailure(drifted) && String(drifted.cause)).toContain("--reconcile")
    expect((await apply({ reconcile: true })).actions).toEqual([{ family: 4, action: "replaced" }])
    expect(saved(POD)).toBe(before)
  })

  it("--cleanup-only removes every mesh chain and rule and nothing else", async () => {
    const exit = await runCommand([...CAPTURE_ARGS, "--network-namespace", POD, "--redirect-dns", "--cleanup-only"])
    expect(exit).toStrictEqual(Exit.void)
    const state = saved(POD)
    expect(state).not.toContain("MESH_")
    expect(state.split("\n").filter((line) => line.startsWith("-A") || line.startsWith(":FOREIGN"))).toEqual(
      baseline.split("\n").filter((line) => line.startsWith("-A") || line.startsWith(":FOREIGN")),
    )
  })

  it("concurrent writers are serialized: one applies, the other finds the rules in place", async () => {
    const config = {
      ...defaultIptablesConfig,
      proxyUid: String(PROXY_UID),
      proxyGid: String(PROXY_UID),
      outboundIpRangesInclude: "*",
    }
    // Two separate layer instances: only the cross-process file lock stands between them.
    const applyOnce = () =>
      Effect.flatMap(Iptables, (iptables) => iptables.apply({ ...BASE_OPTIONS, config, networkNamespace: POD })).pipe(
        Effect.provide(layerWith({})),
        Logger.withMinimumLogLevel(LogLevel.None),
      )
    const reports = await Effect.runPromise(Effect.all([applyOnce(), applyOnce()], { concurrency: 2 }))
    expect(reports.map((report) => report.actions[0]!.action).sort()).toEqual(["already-in-place", "applied"])
    expect(await runCommand(["--network-namespace", POD, "--cleanup-only"])).toStrictEqual(Exit.void)
    expect(saved(POD)).not.toContain("MESH_")
  })

  it("--run-validation without rules fails, saying which path did not redirect", async () => {
    const exit = await runCommand([
      "-u",
      String(PROXY_UID),
      "--network-namespace",
      POD,
      "--skip-rule-apply",
      "--run-validation",
    ])
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain(
      "validation failed: IPv4 127.0.0.6:15002 from uid 1337 was not redirected to port 15001 or 15006: it reached the probe listener directly",
    )
  })

  it("--dual-stack: ip6tables gets the rules too and IPv6 connections are captured", async () => {
    const args = [...CAPTURE_ARGS, "--dual-stack", "--network-namespace", POD]
    // Validation probes both families (IPv6 through [::6]:15002).
    expect(await runCommand([...args, "--run-validation"])).toStrictEqual(Exit.void)
    expect(inNs(POD, "ip6tables-save")).toContain("-A MESH_OUTPUT -s ::6/128 -o lo -j RETURN")
    expect(inNs(POD, "ip", "-6", "addr", "show", "dev", "lo")).toContain("::6/128")
    const pod = await startHelper(POD, [
      process.execPath,
      "-e",
      SERVER,
      JSON.stringify([{ proto: "tcp", host: "::", port: 15001, name: "outbound-capture" }]),
    ])
    const peer = await startHelper(PEER, [
      process.execPath,
      "-e",
      SERVER,
      JSON.stringify([{ proto: "tcp", host: "::", port: 8080, name: "peer-app" }]),
    ])
    try {
      expect(connect(POD, { proto: "tcp", host: PEER_IP6, port: 8080, uid: APP_UID })).toBe("outbound-capture")
      expect(connect(POD, { proto: "tcp", host: PEER_IP6, port: 8080, uid: PROXY_UID })).toBe("peer-app")
    } finally {
      await stopHelper(pod)
      await stopHelper(peer)
    }
    expect(await runCommand([...args, "--cleanup-only"])).toStrictEqual(Exit.void)
    expect(inNs(POD, "ip6tables-save")).not.toContain("MESH_")
    expect(saved(POD)).not.toContain("MESH_")
  })

  it.skipIf(!which("python3"))("TPROXY: inbound connections land on the transparent capture listener", async () => {
    const args = [...CAPTURE_ARGS, "-m", "TPROXY", "--network-namespace", POD]
    expect(await runCommand(args)).toStrictEqual(Exit.void)
    const state = saved(POD)
    expect(state).toContain("-A PREROUTING -p tcp -j MESH_INBOUND")
    expect(state).toContain("-j TPROXY --on-port 15006")
    // A second run leaves the single policy rule alone.
    expect(await runCommand(args)).toStrictEqual(Exit.void)
    expect(inNs(POD, "ip", "rule").match(/fwmark 0x539 lookup 133/g)).toHaveLength(1)
    const listener = await startHelper(POD, ["python3", "-c", TPROXY_LISTENER, "15006", "tproxy-capture"])
    const app = await startHelper(POD, [
      process.execPath,
      "-e",
      SERVER,
      JSON.stringify([{ proto: "tcp", host: "0.0.0.0", port: 8080, name: "pod-app" }]),
    ])
    try {
      expect(connect(PEER, { proto: "tcp", host: POD_IP, port: 8080 })).toBe("tproxy-capture")
    } finally {
      await stopHelper(listener)
      await stopHelper(app)
    }
    expect(await runCommand([...args, "--cleanup-only"])).toStrictEqual(Exit.void)
    expect(saved(POD)).not.toContain("MESH_")
    expect(inNs(POD, "ip", "rule")).not.toContain("lookup 133")
  })
})
