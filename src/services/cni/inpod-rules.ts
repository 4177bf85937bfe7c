/**
 * The in-pod traffic redirection of ambient mode, as the reference's node agent plans it: inside
 * the pod's own network namespace, jumps from the built-in chains into two mesh chains
 * (MESH_PRERT, MESH_OUTPUT in mangle, nat and, with DNS capture, raw) that send the pod's TCP to
 * the node proxy's in-pod listeners (outbound 15001, inbound plaintext 15006; 15008 HBONE goes
 * straight through), UDP and TCP DNS to 15053, and leave alone what the node proxy itself sends
 * (packet mark 0x539/0xfff, carried as connection mark 0x111/0xfff) and host probes (from the
 * probe SNAT address). A policy rule and a local route make packets carrying the connection mark
 * deliverable locally. Pure: the layer (src/layers/cni/inpod-apply.ts) runs the commands.
 */
import { Ports } from "../constants.js"
import type { Rule, Table } from "../iptables/builder.js"

export const InpodChains = {
  prerouting: "MESH_PRERT",
  output: "MESH_OUTPUT",
} as const

/** The marks and routing the node proxy agrees on (its in-pod mark must be 1337 = 0x539). */
export const InpodMarks = {
  mark: 0x539,
  mask: 0xfff,
  tproxyMark: 0x111,
  tproxyMask: 0xfff,
  restoreMask: 0xffffffff,
  routeTable: 100,
  rulePriority: 32764,
} as const

const hex = (n: number) => `0x${n.toString(16)}`
const MARK = `${hex(InpodMarks.mark)}/${hex(InpodMarks.mask)}`
const TPROXY_MARK = `${hex(InpodMarks.tproxyMark)}/${hex(InpodMarks.tproxyMask)}`
/** Packets the node proxy sent (it marks its sockets), and all others. */
const marked = ["-m", "mark", "--mark", MARK]
const unmarked = ["-m", "mark", "!", "--mark", MARK]
/** The reference writes `--to-port` for UDP DNS and `--to-ports` elsewhere (the same option). */
const redirectTo = (port: number, option = "--to-ports") => ["-j", "REDIRECT", option, String(port)]

export interface InpodSettings {
  /** Node-wide DNS capture (AMBIENT_DNS_CAPTURE); a pod's annotation overrides it. */
  readonly dnsCapture: boolean
  /** IPv6 rules too (AMBIENT_IPV6). */
  readonly ipv6: boolean
  /** Source addresses host probes are SNAT-ed to (HOST_PROBE_SNAT_IP, HOST_PROBE_SNAT_IPV6). */
  readonly hostProbeSnatV4: string
  readonly hostProbeSnatV6: string
}

/** What a pod's annotations change (the reference's pod-level overrides). */
export interface PodOverrides {
  /** `ambient.mesh.io/bypass-inbound-capture=true`: no inbound redirection, no probe exemption. */
  readonly ingressMode: boolean
  /** `ambient.mesh.io/dns-capture`: undefined = the node's setting. */
  readonly dnsCapture: boolean | undefined
  /** `mesh.io/reroute-virtual-interfaces`: their inbound TCP is treated as outbound. */
  readonly virtualInterfaces: ReadonlyArray<string>
}

export const InpodAnnotations = {
  bypassInboundCapture: "ambient.mesh.io/bypass-inbound-capture",
  dnsCapture: "ambient.mesh.io/dns-capture",
  rerouteVirtualInterfaces: "mesh.io/reroute-virtual-interfaces",
} as const

/** Go's strconv.ParseBool, as the reference reads these annotations; undefined when unparsable. */
const goBool = (text: string | undefined): boolean | undefined => {
  if (text === undefined) return undefined
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false
  return undefined
}

export const podOverridesOf = (annotations: Readonly<Record<string, string>>): PodOverrides => ({
  ingressMode: goBool(annotations[InpodAnnotations.bypassInboundCapture]) ?? false,
  dnsCapture: goBool(annotations[InpodAnnotations.dnsCapture]),
  virtualInterfaces: (annotations[InpodAnnotations.rerouteVirtualInterfaces] ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== ""),
})

export const NO_OVERRIDES: PodOverrides = { ingressMode: false, dnsCapture: undefined, virtualInterfaces: [] }

export interface InpodRuleSet {
  readonly v4: ReadonlyArray<Rule>
  /** Empty unless IPv6 is on. */
  readonly v6: ReadonlyArray<Rule>
  readonly dnsCapture: boolean
}

/** The rules of one pod, in the reference's order (rules in custom chains keep their order per chain). */
export const inpodRules = (settings: InpodSettings, pod: PodOverrides = NO_OVERRIDES): InpodRuleSet => {
  const dns = pod.dnsCapture ?? settings.dnsCapture
  const build = (family: 4 | 6): ReadonlyArray<Rule> => {
    const rules: Array<Rule> = []
    const add = (table: Table, chain: string, ...params: Array<string>) => rules.push({ table, chain, params })
    const notTo = ["!", "-d", family === 4 ? "127.0.0.1/32" : "::1/128"]
    const probeSource = family === 4 ? settings.hostProbeSnatV4 : settings.hostProbeSnatV6
    const { prerouting, output } = InpodChains

    // Jumps from the built-in chains (the only rules outside the mesh chains).
    add("mangle", "PREROUTING", "-j", prerouting)
    add("mangle", "OUTPUT", "-j", output)
    add("nat", "OUTPUT", "-j", output)
    if (dns) {
      add("raw", "PREROUTING", "-j", prerouting)
      add("raw", "OUTPUT", "-j", output)
    }
    add("nat", "PREROUTING", "-j", prerouting)

    // Virtual interfaces first: their inbound TCP goes to the outbound listener.
    for (const nic of pod.virtualInterfaces) {
      add("nat", prerouting, "-i", nic, "-p", "tcp", ...redirectTo(Ports.outboundCapture))
      add("nat", prerouting, "-i", nic, "-p", "tcp", "-j", "RETURN")
    }
    // Packets the node proxy marked: remember it on the connection.
    add("mangle", prerouting, ...marked, "-j", "CONNMARK", "--set-xmark", TPROXY_MARK)
    // Host probes (SNAT-ed on the node to the probe address) reach the application directly.
    if (!pod.ingressMode) add("nat", prerouting, "-s", probeSource, "-p", "tcp", "-m", "tcp", "-j", "ACCEPT")
    add("nat", output, "-d", probeSource, "-p", "tcp", "-m", "tcp", "-j", "ACCEPT")
    // Inbound TCP (not to loopback, not HBONE, not from the node proxy) to the plaintext listener.
    const inbound = [...notTo, "-p", "tcp", "!", "--dport", String(Ports.inboundTunnel), ...unmarked]
    if (!pod.ingressMode) add("nat", prerouting, ...inbound, ...redirectTo(Ports.inboundCapture))
    const restoreMask = hex(InpodMarks.restoreMask)
    const restore = ["-j", "CONNMARK", "--restore-mark", "--nfmask", restoreMask, "--ctmask", restoreMask]
    add("mangle", output, "-m", "connmark", "--mark", TPROXY_MARK, ...restore)
    if (dns) {
      const udpDns = ["!", "-o", "lo", "-p", "udp", ...unmarked, "-m", "udp", "--dport", "53"]
      add("nat", output, ...udpDns, ...redirectTo(Ports.dnsProxy, "--to-port"))
      add("nat", output, ...notTo, "-p", "tcp", "--dport", "53", ...unmarked, ...redirectTo(Ports.dnsProxy))
      // The node proxy's queries upstream and their answers get their own conntrack zone, so they
      // cannot collide with the application's queries on the same ports.
      add("raw", output, "-p", "udp", ...marked, "-m", "udp", "--dport", "53", "-j", "CT", "--zone", "1")
      add("raw", prerouting, "-p", "udp", ...unmarked, "-m", "udp", "--sport", "53", "-j", "CT", "--zone", "1")
    }
    // Connections the node proxy owns leave as they are; so does the application calling itself
    // on its own address over loopback.
    add("nat", output, "-p", "tcp", "-m", "mark", "--mark", TPROXY_MARK, "-j", "ACCEPT")
    add("nat", output, ...notTo, "-o", "lo", "-j", "ACCEPT")
    // Everything else outbound (TCP, not loopback, not the node proxy's) to the outbound listener.
    add("nat", output, ...notTo, "-p", "tcp", ...unmarked, ...redirectTo(Ports.outboundCapture))
    return rules
  }
  return { v4: build(4), v6: settings.ipv6 ? build(6) : [], dnsCapture: dns }
}

/**
 * `ip` argument lists for the policy routing in the pod: packets with the connection mark are
 * looked up in table 100, whose one route delivers everything locally (to the node proxy's
 * sockets in the pod's namespace). "add" uses `replace` for the route, so it can run again.
 */
export const inpodRouteCommands = (
  settings: Pick<InpodSettings, "ipv6">,
  action: "add" | "del",
): ReadonlyArray<ReadonlyArray<string>> => {
  const families: ReadonlyArray<readonly ["inet" | "inet6", string]> = settings.ipv6
    ? [
        ["inet", "0.0.0.0/0"],
        ["inet6", "::/0"],
      ]
    : [["inet", "0.0.0.0/0"]]
  const table = String(InpodMarks.routeTable)
  return families.flatMap(([family, everything]) => [
    [
      "-f",
      family,
      "rule",
      action,
      "fwmark",
      `${hex(InpodMarks.tproxyMark)}/${hex(InpodMarks.tproxyMask)}`,
      "pref",
      String(InpodMarks.rulePriority),
      "lookup",
      table,
    ],
    action === "add"
      ? ["-f", family, "route", "replace", "local", everything, "dev", "lo", "table", table]
      : ["-f", family, "route", "del", "local", everything, "dev", "lo", "table", table],
  ])
}
