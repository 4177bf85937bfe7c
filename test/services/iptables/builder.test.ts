/**
 * The capture rule builder: one row per option combination that matters, each asserting the
 * exact iptables-restore input (IPv4 and, when enabled, IPv6) in the reference mesh's order.
 */
import { describe, expect, it } from "@effect/vitest"
import { buildRules, finalState, renderRestore, tproxyRouteCommands } from "../../../src/services/iptables/builder.js"
import { defaultIptablesConfig, type IptablesConfig } from "../../../src/services/iptables/config.js"

type Sections = {
  readonly nat?: ReadonlyArray<string>
  readonly mangle?: ReadonlyArray<string>
  readonly raw?: ReadonlyArray<string>
}

const restore = (sections: Sections): string =>
  (["nat", "mangle", "raw"] as const)
    .filter((table) => sections[table] !== undefined)
    .map((table) => `* ${table}\n${sections[table]!.join("\n")}\nCOMMIT\n`)
    .join("")

const NAT_CHAINS = ["-N MESH_INBOUND", "-N MESH_REDIRECT", "-N MESH_IN_REDIRECT", "-N MESH_OUTPUT"]
const NAT_BASE = [
  "-A MESH_INBOUND -p tcp --dport 15008 -j RETURN",
  "-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001",
  "-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006",
]
const uidRules = (id: string, loopback = "127.0.0.1/32") => [
  `-A MESH_OUTPUT -o lo ! -d ${loopback} -p tcp ! --dport 15008 -m owner --uid-owner ${id} -j MESH_IN_REDIRECT`,
  `-A MESH_OUTPUT -o lo -m owner ! --uid-owner ${id} -j RETURN`,
  `-A MESH_OUTPUT -m owner --uid-owner ${id} -j RETURN`,
]
const gidRules = (id: string, loopback = "127.0.0.1/32") => [
  `-A MESH_OUTPUT -o lo ! -d ${loopback} -p tcp ! --dport 15008 -m owner --gid-owner ${id} -j MESH_IN_REDIRECT`,
  `-A MESH_OUTPUT -o lo -m owner ! --gid-owner ${id} -j RETURN`,
  `-A MESH_OUTPUT -m owner --gid-owner ${id} -j RETURN`,
]
const uidRulesDns = (id: string, loopback = "127.0.0.1/32") => [
  `-A MESH_OUTPUT -o lo ! -d ${loopback} -p tcp -m multiport ! --dports 53,15008 -m owner --uid-owner ${id} -j MESH_IN_REDIRECT`,
  `-A MESH_OUTPUT -o lo -p tcp ! --dport 53 -m owner ! --uid-owner ${id} -j RETURN`,
  `-A MESH_OUTPUT -m owner --uid-owner ${id} -j RETURN`,
]
const gidRulesDns = (id: string, loopback = "127.0.0.1/32") => [
  `-A MESH_OUTPUT -o lo ! -d ${loopback} -p tcp ! --dport 15008 -m owner --gid-owner ${id} -j MESH_IN_REDIRECT`,
  `-A MESH_OUTPUT -o lo -p tcp ! --dport 53 -m owner ! --gid-owner ${id} -j RETURN`,
  `-A MESH_OUTPUT -m owner --gid-owner ${id} -j RETURN`,
]
const SIDECAR: Partial<IptablesConfig> = { proxyUid: "1337", proxyGid: "1337" }

interface Row {
  readonly name: string
  readonly config: Partial<IptablesConfig>
  readonly v4: Sections
  readonly v6?: Sections
  readonly warnings?: ReadonlyArray<string>
}

const rows: ReadonlyArray<Row> = [
  {
    name: "defaults: no capture, only the chains and the loopback exemptions",
    config: {},
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
    },
  },
  {
    name: "REDIRECT sidecar: all inbound but excluded ports, all outbound but excluded CIDRs and ports",
    config: {
      ...SIDECAR,
      inboundPortsInclude: "*",
      inboundPortsExclude: "15020,15021,15090",
      outboundIpRangesInclude: "*",
      outboundIpRangesExclude: "10.96.0.1/32,fd00::1/128",
      outboundPortsExclude: "9000",
    },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 15020 -j RETURN",
        "-A MESH_INBOUND -p tcp --dport 15021 -j RETURN",
        "-A MESH_INBOUND -p tcp --dport 15090 -j RETURN",
        "-A MESH_INBOUND -p tcp -j MESH_IN_REDIRECT",
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -p tcp --dport 9000 -j RETURN",
        "-A MESH_OUTPUT -p udp --dport 9000 -j RETURN",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        ...gidRules("1337"),
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -d 10.96.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "REDIRECT with inbound and outbound port lists and CIDR lists",
    config: {
      ...SIDECAR,
      inboundPortsInclude: "8080,9090",
      inboundPortsExclude: "7070",
      outboundIpRangesInclude: "10.0.0.0/8,172.16.0.0/12",
      outboundPortsInclude: "3306",
    },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 8080 -j MESH_IN_REDIRECT",
        "-A MESH_INBOUND -p tcp --dport 9090 -j MESH_IN_REDIRECT",
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        ...gidRules("1337"),
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -p tcp --dport 3306 -j MESH_REDIRECT",
        "-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT",
        "-A MESH_OUTPUT -d 172.16.0.0/12 -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "TPROXY with all inbound ports but one",
    config: { ...SIDECAR, inboundInterceptionMode: "TPROXY", inboundPortsInclude: "*", inboundPortsExclude: "15090" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        ...gidRules("1337"),
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
      mangle: [
        "-N MESH_DIVERT",
        "-N MESH_TPROXY",
        "-N MESH_INBOUND",
        "-A MESH_DIVERT -j MARK --set-mark 1337",
        "-A MESH_DIVERT -j ACCEPT",
        "-A MESH_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY --tproxy-mark 1337/0xffffffff --on-port 15006",
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 15090 -j RETURN",
        "-A MESH_INBOUND -p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j MESH_DIVERT",
        "-A MESH_INBOUND -p tcp -j MESH_TPROXY",
        "-A PREROUTING -p tcp -m mark --mark 1337 -j CONNMARK --save-mark",
        "-A OUTPUT -p tcp -o lo -m mark --mark 1337 -j RETURN",
        "-A OUTPUT ! -d 127.0.0.1/32 -p tcp -o lo -m owner --uid-owner 1337 -j MARK --set-mark 1338",
        "-A OUTPUT ! -d 127.0.0.1/32 -p tcp -o lo -m owner --gid-owner 1337 -j MARK --set-mark 1338",
        "-A OUTPUT -p tcp -m connmark --mark 1337 -j CONNMARK --restore-mark",
        "-I MESH_INBOUND 1 -p tcp -m mark --mark 1337 -j RETURN",
        "-I MESH_INBOUND 2 -p tcp -s 127.0.0.6/32 -i lo -j RETURN",
        "-I MESH_INBOUND 3 -p tcp -i lo -m mark ! --mark 1338 -j RETURN",
      ],
    },
  },
  {
    name: "TPROXY with an inbound port list and its own mark",
    config: {
      proxyUid: "1337",
      inboundInterceptionMode: "TPROXY",
      inboundPortsInclude: "8080",
      inboundTproxyMark: "777",
    },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
      mangle: [
        "-N MESH_DIVERT",
        "-N MESH_TPROXY",
        "-N MESH_INBOUND",
        "-A MESH_DIVERT -j MARK --set-mark 777",
        "-A MESH_DIVERT -j ACCEPT",
        "-A MESH_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY --tproxy-mark 777/0xffffffff --on-port 15006",
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 8080 -m conntrack --ctstate RELATED,ESTABLISHED -j MESH_DIVERT",
        "-A MESH_INBOUND -p tcp --dport 8080 -j MESH_TPROXY",
        "-A PREROUTING -p tcp -m mark --mark 777 -j CONNMARK --save-mark",
        "-A OUTPUT -p tcp -o lo -m mark --mark 777 -j RETURN",
        "-A OUTPUT ! -d 127.0.0.1/32 -p tcp -o lo -m owner --uid-owner 1337 -j MARK --set-mark 1338",
        "-A OUTPUT -p tcp -m connmark --mark 777 -j CONNMARK --restore-mark",
        "-I MESH_INBOUND 1 -p tcp -m mark --mark 777 -j RETURN",
        "-I MESH_INBOUND 2 -p tcp -s 127.0.0.6/32 -i lo -j RETURN",
        "-I MESH_INBOUND 3 -p tcp -i lo -m mark ! --mark 1338 -j RETURN",
      ],
    },
  },
  {
    name: "IPv6 pod: both families, CIDRs sorted into their family",
    config: {
      proxyUid: "1337",
      enableIpv6: true,
      inboundPortsInclude: "*",
      outboundIpRangesInclude: "*",
      outboundIpRangesExclude: "10.0.0.0/8,fd00::/8",
    },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp -j MESH_IN_REDIRECT",
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -d 10.0.0.0/8 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
    },
    v6: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp -j MESH_IN_REDIRECT",
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s ::6/128 -j RETURN",
        ...uidRules("1337", "::1/128"),
        "-A MESH_OUTPUT -d ::1/128 -j RETURN",
        "-A MESH_OUTPUT -d fd00::/8 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "dual stack TPROXY: the passthrough source is ::6 in IPv6",
    config: { proxyUid: "1337", enableIpv6: true, inboundInterceptionMode: "TPROXY", inboundPortsInclude: "*" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
      mangle: [
        "-N MESH_DIVERT",
        "-N MESH_TPROXY",
        "-N MESH_INBOUND",
        "-A MESH_DIVERT -j MARK --set-mark 1337",
        "-A MESH_DIVERT -j ACCEPT",
        "-A MESH_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY --tproxy-mark 1337/0xffffffff --on-port 15006",
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j MESH_DIVERT",
        "-A MESH_INBOUND -p tcp -j MESH_TPROXY",
        "-A PREROUTING -p tcp -m mark --mark 1337 -j CONNMARK --save-mark",
        "-A OUTPUT -p tcp -o lo -m mark --mark 1337 -j RETURN",
        "-A OUTPUT ! -d 127.0.0.1/32 -p tcp -o lo -m owner --uid-owner 1337 -j MARK --set-mark 1338",
        "-A OUTPUT -p tcp -m connmark --mark 1337 -j CONNMARK --restore-mark",
        "-I MESH_INBOUND 1 -p tcp -m mark --mark 1337 -j RETURN",
        "-I MESH_INBOUND 2 -p tcp -s 127.0.0.6/32 -i lo -j RETURN",
        "-I MESH_INBOUND 3 -p tcp -i lo -m mark ! --mark 1338 -j RETURN",
      ],
    },
    v6: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s ::6/128 -j RETURN",
        ...uidRules("1337", "::1/128"),
        "-A MESH_OUTPUT -d ::1/128 -j RETURN",
      ],
      mangle: [
        "-N MESH_DIVERT",
        "-N MESH_TPROXY",
        "-N MESH_INBOUND",
        "-A MESH_DIVERT -j MARK --set-mark 1337",
        "-A MESH_DIVERT -j ACCEPT",
        "-A MESH_TPROXY ! -d ::1/128 -p tcp -j TPROXY --tproxy-mark 1337/0xffffffff --on-port 15006",
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j MESH_DIVERT",
        "-A MESH_INBOUND -p tcp -j MESH_TPROXY",
        "-A PREROUTING -p tcp -m mark --mark 1337 -j CONNMARK --save-mark",
        "-A OUTPUT -p tcp -o lo -m mark --mark 1337 -j RETURN",
        "-A OUTPUT ! -d ::1/128 -p tcp -o lo -m owner --uid-owner 1337 -j MARK --set-mark 1338",
        "-A OUTPUT -p tcp -m connmark --mark 1337 -j CONNMARK --restore-mark",
        "-I MESH_INBOUND 1 -p tcp -m mark --mark 1337 -j RETURN",
        "-I MESH_INBOUND 2 -p tcp -s ::6/128 -i lo -j RETURN",
        "-I MESH_INBOUND 3 -p tcp -i lo -m mark ! --mark 1338 -j RETURN",
      ],
    },
  },
  {
    name: "DNS capture with resolv.conf servers of both families",
    config: {
      ...SIDECAR,
      enableIpv6: true,
      redirectDns: true,
      dnsServersV4: ["10.96.0.10"],
      dnsServersV6: ["fd00::10"],
      outboundIpRangesInclude: "*",
    },
    v4: {
      nat: [
        ...NAT_CHAINS,
        "-N MESH_OUTPUT_DNS",
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRulesDns("1337"),
        ...gidRulesDns("1337"),
        "-A MESH_OUTPUT -j MESH_OUTPUT_DNS",
        "-A MESH_OUTPUT_DNS -p tcp --dport 53 -d 10.96.0.10/32 -j REDIRECT --to-ports 15053",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -d 10.96.0.10/32 -j REDIRECT --to-ports 15053",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
      raw: [
        "-N MESH_OUTPUT_DNS",
        "-N MESH_INBOUND",
        "-A OUTPUT -j MESH_OUTPUT_DNS",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -m owner --uid-owner 1337 -j CT --zone 1",
        "-A MESH_OUTPUT_DNS -p udp --sport 15053 -m owner --uid-owner 1337 -j CT --zone 2",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -m owner --gid-owner 1337 -j CT --zone 1",
        "-A MESH_OUTPUT_DNS -p udp --sport 15053 -m owner --gid-owner 1337 -j CT --zone 2",
        "-A PREROUTING -j MESH_INBOUND",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -d 10.96.0.10/32 -j CT --zone 2",
        "-A MESH_INBOUND -p udp --sport 53 -s 10.96.0.10/32 -j CT --zone 1",
      ],
    },
    v6: {
      nat: [
        ...NAT_CHAINS,
        "-N MESH_OUTPUT_DNS",
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s ::6/128 -j RETURN",
        ...uidRulesDns("1337", "::1/128"),
        ...gidRulesDns("1337", "::1/128"),
        "-A MESH_OUTPUT -j MESH_OUTPUT_DNS",
        "-A MESH_OUTPUT_DNS -p tcp --dport 53 -d fd00::10/128 -j REDIRECT --to-ports 15053",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -d fd00::10/128 -j REDIRECT --to-ports 15053",
        "-A MESH_OUTPUT -d ::1/128 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
      raw: [
        "-N MESH_OUTPUT_DNS",
        "-N MESH_INBOUND",
        "-A OUTPUT -j MESH_OUTPUT_DNS",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -m owner --uid-owner 1337 -j CT --zone 1",
        "-A MESH_OUTPUT_DNS -p udp --sport 15053 -m owner --uid-owner 1337 -j CT --zone 2",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -m owner --gid-owner 1337 -j CT --zone 1",
        "-A MESH_OUTPUT_DNS -p udp --sport 15053 -m owner --gid-owner 1337 -j CT --zone 2",
        "-A PREROUTING -j MESH_INBOUND",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -d fd00::10/128 -j CT --zone 2",
        "-A MESH_INBOUND -p udp --sport 53 -s fd00::10/128 -j CT --zone 1",
      ],
    },
  },
  {
    name: "DNS capture of all port-53 traffic (no servers needed)",
    config: { proxyUid: "1337", redirectDns: true, captureAllDns: true },
    v4: {
      nat: [
        ...NAT_CHAINS,
        "-N MESH_OUTPUT_DNS",
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRulesDns("1337"),
        "-A MESH_OUTPUT -j MESH_OUTPUT_DNS",
        "-A MESH_OUTPUT_DNS -p tcp --dport 53 -j REDIRECT --to-ports 15053",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -j REDIRECT --to-ports 15053",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
      raw: [
        "-N MESH_OUTPUT_DNS",
        "-N MESH_INBOUND",
        "-A OUTPUT -j MESH_OUTPUT_DNS",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -m owner --uid-owner 1337 -j CT --zone 1",
        "-A MESH_OUTPUT_DNS -p udp --sport 15053 -m owner --uid-owner 1337 -j CT --zone 2",
        "-A PREROUTING -j MESH_INBOUND",
        "-A MESH_OUTPUT_DNS -p udp --dport 53 -j CT --zone 2",
        "-A MESH_INBOUND -p udp --sport 53 -j CT --zone 1",
      ],
    },
  },
  {
    name: "DNS capture without servers and without capture-all is turned off",
    config: { proxyUid: "1337", redirectDns: true },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
    },
    warnings: ["DNS capture is on, but all DNS is not captured and no DNS servers are known: DNS capture disabled"],
  },
  {
    name: "owner groups: only the listed groups are captured (one combined rule)",
    config: { proxyUid: "1337", ownerGroupsInclude: "java,202", outboundIpRangesInclude: "*" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        "-A MESH_OUTPUT -m owner ! --gid-owner java -m owner ! --gid-owner 202 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "owner groups: all but the excluded groups are captured",
    config: {
      proxyUid: "1337",
      ownerGroupsInclude: "*",
      ownerGroupsExclude: "python,303",
      outboundIpRangesInclude: "*",
    },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337"),
        "-A MESH_OUTPUT -m owner --gid-owner python -j RETURN",
        "-A MESH_OUTPUT -m owner --gid-owner 303 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "excluded interfaces in REDIRECT mode (nat only)",
    config: { excludeInterfaces: "eth1,eth2", outboundIpRangesInclude: "*" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        "-A PREROUTING -i eth1 -j RETURN",
        "-A OUTPUT -o eth1 -j RETURN",
        "-A PREROUTING -i eth2 -j RETURN",
        "-A OUTPUT -o eth2 -j RETURN",
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "excluded interfaces in TPROXY mode also skip mangle",
    config: { excludeInterfaces: "eth1", inboundInterceptionMode: "TPROXY" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        "-A PREROUTING -i eth1 -j RETURN",
        "-A OUTPUT -o eth1 -j RETURN",
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
      mangle: [
        "-N MESH_INBOUND",
        "-A PREROUTING -i eth1 -j RETURN",
        "-A OUTPUT -o eth1 -j RETURN",
        "-A PREROUTING -p tcp -m mark --mark 1337 -j CONNMARK --save-mark",
        "-A OUTPUT -p tcp -o lo -m mark --mark 1337 -j RETURN",
        "-A OUTPUT -p tcp -m connmark --mark 1337 -j CONNMARK --restore-mark",
        "-I MESH_INBOUND 1 -p tcp -m mark --mark 1337 -j RETURN",
        "-I MESH_INBOUND 2 -p tcp -s 127.0.0.6/32 -i lo -j RETURN",
        "-I MESH_INBOUND 3 -p tcp -i lo -m mark ! --mark 1338 -j RETURN",
      ],
    },
  },
  {
    name: "orchestrator virtual interfaces with a CIDR list: their traffic is captured as outbound",
    config: { rerouteVirtualInterfaces: "veth0,veth1", outboundIpRangesInclude: "10.0.0.0/8" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        "-I PREROUTING 1 -i veth0 -j RETURN",
        "-I PREROUTING 1 -i veth1 -j RETURN",
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-I PREROUTING 1 -i veth0 -d 10.0.0.0/8 -j MESH_REDIRECT",
        "-I PREROUTING 1 -i veth1 -d 10.0.0.0/8 -j MESH_REDIRECT",
        "-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "orchestrator virtual interfaces with all CIDRs",
    config: { rerouteVirtualInterfaces: "veth0", outboundIpRangesInclude: "*" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        "-I PREROUTING 1 -i veth0 -j RETURN",
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -j MESH_REDIRECT",
        "-I PREROUTING 1 -i veth0 -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "loopback explicitly captured: application loopback traffic is not returned",
    config: { proxyUid: "1337", outboundIpRangesInclude: "127.0.0.1/32,10.0.0.0/8" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --uid-owner 1337 -j MESH_IN_REDIRECT",
        "-A MESH_OUTPUT -m owner --uid-owner 1337 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j MESH_REDIRECT",
        "-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT",
      ],
    },
  },
  {
    name: "a wider IPv4 loopback CIDR (MESH_OUTBOUND_IPV4_LOOPBACK_CIDR)",
    config: {
      proxyUid: "1337",
      hostIpv4LoopbackCidr: "127.0.0.0/8",
      inboundInterceptionMode: "TPROXY",
      inboundPortsInclude: "80",
    },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        ...uidRules("1337", "127.0.0.0/8"),
        "-A MESH_OUTPUT -d 127.0.0.0/8 -j RETURN",
      ],
      mangle: [
        "-N MESH_DIVERT",
        "-N MESH_TPROXY",
        "-N MESH_INBOUND",
        "-A MESH_DIVERT -j MARK --set-mark 1337",
        "-A MESH_DIVERT -j ACCEPT",
        "-A MESH_TPROXY ! -d 127.0.0.0/8 -p tcp -j TPROXY --tproxy-mark 1337/0xffffffff --on-port 15006",
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 80 -m conntrack --ctstate RELATED,ESTABLISHED -j MESH_DIVERT",
        "-A MESH_INBOUND -p tcp --dport 80 -j MESH_TPROXY",
        "-A PREROUTING -p tcp -m mark --mark 1337 -j CONNMARK --save-mark",
        "-A OUTPUT -p tcp -o lo -m mark --mark 1337 -j RETURN",
        "-A OUTPUT ! -d 127.0.0.0/8 -p tcp -o lo -m owner --uid-owner 1337 -j MARK --set-mark 1338",
        "-A OUTPUT -p tcp -m connmark --mark 1337 -j CONNMARK --restore-mark",
        "-I MESH_INBOUND 1 -p tcp -m mark --mark 1337 -j RETURN",
        "-I MESH_INBOUND 2 -p tcp -s 127.0.0.6/32 -i lo -j RETURN",
        "-I MESH_INBOUND 3 -p tcp -i lo -m mark ! --mark 1338 -j RETURN",
      ],
    },
  },
  {
    name: "--drop-invalid drops conntrack-invalid packets through MESH_DROP",
    config: { dropInvalid: true },
    v4: {
      nat: [
        ...NAT_CHAINS,
        ...NAT_BASE,
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
      mangle: ["-N MESH_DROP", "-A PREROUTING -m conntrack --ctstate INVALID -j MESH_DROP", "-A MESH_DROP -j DROP"],
    },
  },
  {
    name: "trace logging puts a LOG rule before each rule",
    config: { traceLogging: true, inboundPortsInclude: "8080", rerouteVirtualInterfaces: "veth0" },
    v4: {
      nat: [
        ...NAT_CHAINS,
        "-I PREROUTING 1 -i veth0 -j RETURN",
        "-I PREROUTING 1 -i veth0 -j LOG --log-prefix mesh:nat:PREROUTING:",
        "-A MESH_INBOUND -p tcp --dport 15008 -j LOG --log-prefix mesh:nat:MESH_INBOUND:",
        "-A MESH_INBOUND -p tcp --dport 15008 -j RETURN",
        "-A MESH_REDIRECT -p tcp -j LOG --log-prefix mesh:nat:MESH_REDIRECT:",
        "-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001",
        "-A MESH_IN_REDIRECT -p tcp -j LOG --log-prefix mesh:nat:MESH_IN_REDIRECT:",
        "-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006",
        "-A PREROUTING -p tcp -j LOG --log-prefix mesh:nat:PREROUTING:",
        "-A PREROUTING -p tcp -j MESH_INBOUND",
        "-A MESH_INBOUND -p tcp --dport 8080 -j LOG --log-prefix mesh:nat:MESH_INBOUND:",
        "-A MESH_INBOUND -p tcp --dport 8080 -j MESH_IN_REDIRECT",
        "-A OUTPUT -j LOG --log-prefix mesh:nat:OUTPUT:",
        "-A OUTPUT -j MESH_OUTPUT",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j LOG --log-prefix mesh:nat:MESH_OUTPUT:",
        "-A MESH_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j LOG --log-prefix mesh:nat:MESH_OUTPUT:",
        "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN",
      ],
    },
  },
]

describe("buildRules", () => {
  for (const row of rows) {
    it(row.name, () => {
      const ruleSet = buildRules({ ...defaultIptablesConfig, ...row.config })
      expect(renderRestore(ruleSet.v4)).toBe(restore(row.v4))
      expect(ruleSet.ipv6).toBe(row.v6 !== undefined)
      expect(renderRestore(ruleSet.v6)).toBe(row.v6 === undefined ? "" : restore(row.v6))
      expect(ruleSet.warnings).toEqual(row.warnings ?? [])
    })
  }

  it("ignores entries of a CIDR list that are not CIDRs, with a warning", () => {
    const ruleSet = buildRules({ ...defaultIptablesConfig, outboundIpRangesInclude: "10.0.0.0/8,bogus,10.1.2.3" })
    expect(ruleSet.warnings).toEqual(['ignoring "bogus": not a CIDR', 'ignoring "10.1.2.3": not a CIDR'])
    expect(renderRestore(ruleSet.v4)).toContain("-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT\nCOMMIT")
  })
})

describe("finalState", () => {
  it("applies inserts at their positions", () => {
    const ruleSet = buildRules({
      ...defaultIptablesConfig,
      inboundInterceptionMode: "TPROXY",
      inboundPortsInclude: "*",
    })
    expect(finalState(ruleSet.v4).get("mangle")?.get("MESH_INBOUND")).toEqual([
      "-p tcp -m mark --mark 1337 -j RETURN",
      "-p tcp -s 127.0.0.6/32 -i lo -j RETURN",
      "-p tcp -i lo -m mark ! --mark 1338 -j RETURN",
      "-p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j MESH_DIVERT",
      "-p tcp -j MESH_TPROXY",
    ])
  })
})

describe("tproxyRouteCommands", () => {
  it("routes marked packets to loopback per family, only in TPROXY mode with inbound capture", () => {
    const tproxy = { ...defaultIptablesConfig, inboundInterceptionMode: "TPROXY" as const, inboundPortsInclude: "*" }
    expect(tproxyRouteCommands(tproxy, "add")).toEqual([
      ["-f", "inet", "rule", "add", "fwmark", "1337", "lookup", "133"],
      ["-f", "inet", "route", "add", "local", "default", "dev", "lo", "table", "133"],
    ])
    expect(tproxyRouteCommands({ ...tproxy, enableIpv6: true }, "del")).toEqual([
      ["-f", "inet", "rule", "del", "fwmark", "1337", "lookup", "133"],
      ["-f", "inet", "route", "flush", "table", "133"],
      ["-f", "inet6", "rule", "del", "fwmark", "1337", "lookup", "133"],
      ["-f", "inet6", "route", "flush", "table", "133"],
    ])
    expect(tproxyRouteCommands({ ...tproxy, inboundPortsInclude: "" }, "add")).toEqual([])
    expect(tproxyRouteCommands({ ...tproxy, inboundInterceptionMode: "REDIRECT" }, "add")).toEqual([])
  })
})
