/**
 * In-pod redirection rules of ambient mode, case by case as the reference's node agent writes
 * them (its golden cases, chains renamed ISTIO_* → MESH_*): the restore input per table, in
 * order, and the policy-routing commands.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type InpodSettings,
  inpodRouteCommands,
  inpodRules,
  NO_OVERRIDES,
  podOverridesOf,
} from "../../../src/services/cni/inpod-rules.js"
import { chainsByTable, renderRestore, ruleLine } from "../../../src/services/iptables/builder.js"

const SETTINGS: InpodSettings = {
  dnsCapture: true,
  ipv6: false,
  hostProbeSnatV4: "169.254.7.127",
  hostProbeSnatV6: "e9ac:1e77:90ca:399f:4d6d:ece2:2f9b:3164",
}

/** `-A` lines per table, in order. */
const linesByTable = (rules: ReturnType<typeof inpodRules>["v4"]) => {
  const out: Record<string, Array<string>> = {}
  for (const rule of rules) {
    const lines = out[rule.table] ?? []
    lines.push(ruleLine(rule))
    out[rule.table] = lines
  }
  return out
}

const MANGLE = [
  "-A PREROUTING -j MESH_PRERT",
  "-A OUTPUT -j MESH_OUTPUT",
  "-A MESH_PRERT -m mark --mark 0x539/0xfff -j CONNMARK --set-xmark 0x111/0xfff",
  "-A MESH_OUTPUT -m connmark --mark 0x111/0xfff -j CONNMARK --restore-mark --nfmask 0xffffffff --ctmask 0xffffffff",
]
const RAW = [
  "-A PREROUTING -j MESH_PRERT",
  "-A OUTPUT -j MESH_OUTPUT",
  "-A MESH_OUTPUT -p udp -m mark --mark 0x539/0xfff -m udp --dport 53 -j CT --zone 1",
  "-A MESH_PRERT -p udp -m mark ! --mark 0x539/0xfff -m udp --sport 53 -j CT --zone 1",
]
const natDefault = (probe: string, loopback: string) => [
  "-A OUTPUT -j MESH_OUTPUT",
  "-A PREROUTING -j MESH_PRERT",
  `-A MESH_PRERT -s ${probe} -p tcp -m tcp -j ACCEPT`,
  `-A MESH_OUTPUT -d ${probe} -p tcp -m tcp -j ACCEPT`,
  `-A MESH_PRERT ! -d ${loopback} -p tcp ! --dport 15008 -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15006`,
  "-A MESH_OUTPUT ! -o lo -p udp -m mark ! --mark 0x539/0xfff -m udp --dport 53 -j REDIRECT --to-port 15053",
  `-A MESH_OUTPUT ! -d ${loopback} -p tcp --dport 53 -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15053`,
  "-A MESH_OUTPUT -p tcp -m mark --mark 0x111/0xfff -j ACCEPT",
  `-A MESH_OUTPUT ! -d ${loopback} -o lo -j ACCEPT`,
  `-A MESH_OUTPUT ! -d ${loopback} -p tcp -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15001`,
]

describe("inpodRules", () => {
  it("default: DNS capture on, IPv4 only", () => {
    const set = inpodRules(SETTINGS)
    expect(set.v6).toEqual([])
    expect(set.dnsCapture).toBe(true)
    expect(linesByTable(set.v4)).toEqual({
      mangle: MANGLE,
      nat: natDefault("169.254.7.127", "127.0.0.1/32"),
      raw: RAW,
    })
    // Chains are created in order of first use, as the reference's restore input lists them.
    expect(chainsByTable(set.v4)).toEqual(
      new Map([
        ["mangle", ["MESH_PRERT", "MESH_OUTPUT"]],
        ["nat", ["MESH_PRERT", "MESH_OUTPUT"]],
        ["raw", ["MESH_OUTPUT", "MESH_PRERT"]],
      ]),
    )
  })

  it("IPv6: the same rules with the IPv6 probe address and loopback", () => {
    const set = inpodRules({ ...SETTINGS, ipv6: true })
    expect(linesByTable(set.v6)).toEqual({
      mangle: MANGLE,
      nat: natDefault("e9ac:1e77:90ca:399f:4d6d:ece2:2f9b:3164", "::1/128"),
      raw: RAW,
    })
  })

  it("DNS capture turned off by the pod although on for the node: no raw table, no DNS redirects", () => {
    const set = inpodRules(SETTINGS, podOverridesOf({ "ambient.mesh.io/dns-capture": "false" }))
    expect(set.dnsCapture).toBe(false)
    expect(linesByTable(set.v4)).toEqual({
      mangle: MANGLE,
      nat: natDefault("169.254.7.127", "127.0.0.1/32").filter((line) => !line.includes("--dport 53")),
    })
  })

  it("DNS capture turned on by the pod although off for the node", () => {
    const set = inpodRules(
      { ...SETTINGS, dnsCapture: false },
      podOverridesOf({ "ambient.mesh.io/dns-capture": "true" }),
    )
    expect(linesByTable(set.v4)).toEqual({
      mangle: MANGLE,
      nat: natDefault("169.254.7.127", "127.0.0.1/32"),
      raw: RAW,
    })
  })

  it("ingress mode (bypass-inbound-capture): no inbound redirection and no probe exemption inbound", () => {
    const set = inpodRules(
      { ...SETTINGS, dnsCapture: false },
      podOverridesOf({ "ambient.mesh.io/bypass-inbound-capture": "true" }),
    )
    expect(linesByTable(set.v4)).toEqual({
      mangle: MANGLE,
      nat: [
        "-A OUTPUT -j MESH_OUTPUT",
        "-A PREROUTING -j MESH_PRERT",
        "-A MESH_OUTPUT -d 169.254.7.127 -p tcp -m tcp -j ACCEPT",
        "-A MESH_OUTPUT -p tcp -m mark --mark 0x111/0xfff -j ACCEPT",
        "-A MESH_OUTPUT ! -d 127.0.0.1/32 -o lo -j ACCEPT",
        "-A MESH_OUTPUT ! -d 127.0.0.1/32 -p tcp -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15001",
      ],
    })
    // Only output rules in nat: its chain MESH_OUTPUT is created first.
    expect(chainsByTable(set.v4).get("nat")).toEqual(["MESH_OUTPUT", "MESH_PRERT"])
  })

  it("virtual interfaces: their inbound TCP goes to the outbound listener, first in MESH_PRERT", () => {
    const set = inpodRules(
      { ...SETTINGS, dnsCapture: false },
      podOverridesOf({ "mesh.io/reroute-virtual-interfaces": "fake1s0f0, fake1s0f1,," }),
    )
    expect(linesByTable(set.v4).nat).toEqual([
      "-A OUTPUT -j MESH_OUTPUT",
      "-A PREROUTING -j MESH_PRERT",
      "-A MESH_PRERT -i fake1s0f0 -p tcp -j REDIRECT --to-ports 15001",
      "-A MESH_PRERT -i fake1s0f0 -p tcp -j RETURN",
      "-A MESH_PRERT -i fake1s0f1 -p tcp -j REDIRECT --to-ports 15001",
      "-A MESH_PRERT -i fake1s0f1 -p tcp -j RETURN",
      "-A MESH_PRERT -s 169.254.7.127 -p tcp -m tcp -j ACCEPT",
      "-A MESH_OUTPUT -d 169.254.7.127 -p tcp -m tcp -j ACCEPT",
      "-A MESH_PRERT ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15006",
      "-A MESH_OUTPUT -p tcp -m mark --mark 0x111/0xfff -j ACCEPT",
      "-A MESH_OUTPUT ! -d 127.0.0.1/32 -o lo -j ACCEPT",
      "-A MESH_OUTPUT ! -d 127.0.0.1/32 -p tcp -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15001",
    ])
  })

  it("unparsable annotation values fall back to the node's settings", () => {
    expect(podOverridesOf({ "ambient.mesh.io/dns-capture": "maybe" })).toEqual(NO_OVERRIDES)
  })

  it("renders one restore input per family with the chains created first", () => {
    const input = renderRestore(inpodRules(SETTINGS).v4)
    expect(input).toContain("* mangle\n-N MESH_PRERT\n-N MESH_OUTPUT\n-A PREROUTING -j MESH_PRERT\n")
    expect(input).toContain("* raw\n-N MESH_OUTPUT\n-N MESH_PRERT\n")
  })
})

describe("inpodRouteCommands", () => {
  it("marked connections are delivered locally through table 100", () => {
    expect(inpodRouteCommands({ ipv6: false }, "add")).toEqual([
      ["-f", "inet", "rule", "add", "fwmark", "0x111/0xfff", "pref", "32764", "lookup", "100"],
      ["-f", "inet", "route", "replace", "local", "0.0.0.0/0", "dev", "lo", "table", "100"],
    ])
    expect(inpodRouteCommands({ ipv6: true }, "del")).toEqual([
      ["-f", "inet", "rule", "del", "fwmark", "0x111/0xfff", "pref", "32764", "lookup", "100"],
      ["-f", "inet", "route", "del", "local", "0.0.0.0/0", "dev", "lo", "table", "100"],
      ["-f", "inet6", "rule", "del", "fwmark", "0x111/0xfff", "pref", "32764", "lookup", "100"],
      ["-f", "inet6", "route", "del", "local", "::/0", "dev", "lo", "table", "100"],
    ])
  })
})
