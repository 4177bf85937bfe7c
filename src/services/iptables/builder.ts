/**
 * The sidecar's traffic-capture rule set, built from an IptablesConfig in the reference mesh's
 * order (chains MESH_INBOUND, MESH_REDIRECT, MESH_IN_REDIRECT, MESH_OUTPUT, MESH_OUTPUT_DNS,
 * MESH_DIVERT, MESH_TPROXY and MESH_DROP in the nat, mangle and raw tables), one rule list per
 * address family, and its rendering as `iptables-restore` input. Pure: no process runs here.
 */
import {
  DNS_CAPTURE_PORT,
  INBOUND_PASSTHROUGH_V4,
  INBOUND_PASSTHROUGH_V6,
  type IptablesConfig,
  type NetworkRange,
  OUTBOUND_MARK,
  parseInterceptFilter,
  separateV4V6,
  splitList,
} from "./config.js"

export type Table = "nat" | "mangle" | "raw" | "filter"

/** Order of the tables in the restore input. */
export const TABLES: ReadonlyArray<Table> = ["nat", "mangle", "raw"]

export const Chains = {
  inbound: "MESH_INBOUND",
  redirect: "MESH_REDIRECT",
  inRedirect: "MESH_IN_REDIRECT",
  output: "MESH_OUTPUT",
  outputDns: "MESH_OUTPUT_DNS",
  divert: "MESH_DIVERT",
  tproxy: "MESH_TPROXY",
  drop: "MESH_DROP",
} as const

/** Every chain the mesh creates starts with this; nothing else does. */
export const MESH_CHAIN_PREFIX = "MESH_"

export const BUILTIN_CHAINS: ReadonlySet<string> = new Set(["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"])

export const isMeshChain = (chain: string): boolean => chain.startsWith(MESH_CHAIN_PREFIX)

export interface Rule {
  readonly table: Table
  readonly chain: string
  /** Matches and target, as given to iptables after the chain. */
  readonly params: ReadonlyArray<string>
  /** Set for `-I chain position`; otherwise the rule is appended. */
  readonly position?: number
}

export interface RuleSet {
  readonly v4: ReadonlyArray<Rule>
  readonly v6: ReadonlyArray<Rule>
  /** Whether the IPv6 rules are applied at all. */
  readonly ipv6: boolean
  /** Whether DNS capture ended up on (it needs servers unless all DNS is captured). */
  readonly dnsCapture: boolean
  /** Things the reference tolerates but reports (ignored CIDRs, DNS capture without servers). */
  readonly warnings: ReadonlyArray<string>
}

const targetOf = (params: ReadonlyArray<string>): string | undefined => {
  const index = params.indexOf("-j")
  return index === -1 ? undefined : params[index + 1]
}

/** Builds the rule set; `config` is assumed valid (see validateIptablesConfig). */
export const buildRules = (config: IptablesConfig): RuleSet => {
  const v4: Array<Rule> = []
  const v6: Array<Rule> = []
  const warnings: Array<string> = []
  const tproxy = config.inboundInterceptionMode === "TPROXY"

  const push = (into: Array<Rule>, table: Table, chain: string, params: ReadonlyArray<string>, position?: number) => {
    const rule: Rule = { table, chain, params, ...(position !== undefined ? { position } : {}) }
    const target = targetOf(params)
    if (!config.traceLogging || target === undefined || target === "LOG") {
      into.push(rule)
      return
    }
    // Trace logging: a LOG rule with the same matches right before the rule it traces.
    const log: Rule = {
      ...rule,
      params: [
        ...params.slice(0, params.indexOf("-j")),
        "-j",
        "LOG",
        "--log-prefix",
        `mesh:${table}:${chain}:`.slice(0, 29),
      ],
    }
    // An insert at the same position lands in front of the one inserted before it.
    if (position === undefined) into.push(log, rule)
    else into.push(rule, log)
  }
  const append4 = (table: Table, chain: string, ...params: Array<string>) => push(v4, table, chain, params)
  const append6 = (table: Table, chain: string, ...params: Array<string>) => {
    if (config.enableIpv6) push(v6, table, chain, params)
  }
  const append = (table: Table, chain: string, ...params: Array<string>) => {
    append4(table, chain, ...params)
    append6(table, chain, ...params)
  }
  /** A rule with one address that differs by family (`{}` marks where it goes). */
  const appendVersioned = (
    addressV4: string,
    addressV6: string,
    table: Table,
    chain: string,
    ...params: Array<string>
  ) => {
    append4(table, chain, ...params.map((param) => (param === "{}" ? addressV4 : param)))
    append6(table, chain, ...params.map((param) => (param === "{}" ? addressV6 : param)))
  }
  const insert4 = (table: Table, chain: string, position: number, ...params: Array<string>) =>
    push(v4, table, chain, params, position)
  const insert6 = (table: Table, chain: string, position: number, ...params: Array<string>) => {
    if (config.enableIpv6) push(v6, table, chain, params, position)
  }
  const insert = (table: Table, chain: string, position: number, ...params: Array<string>) => {
    insert4(table, chain, position, ...params)
    insert6(table, chain, position, ...params)
  }

  const excludeRanges = separateV4V6(config.outboundIpRangesExclude)
  const includeRanges = separateV4V6(config.outboundIpRangesInclude)
  for (const item of [...excludeRanges.ignored, ...includeRanges.ignored]) {
    warnings.push(`ignoring "${item}": not a CIDR`)
  }
  const loopbackIncluded = includeRanges.v4.hasLoopback || includeRanges.v6.hasLoopback
  const uids = splitList(config.proxyUid)
  const gids = splitList(config.proxyGid)
  const loopbackV4 = config.hostIpv4LoopbackCidr

  let redirectDns = config.redirectDns
  if (redirectDns && !config.captureAllDns && config.dnsServersV4.length === 0 && config.dnsServersV6.length === 0) {
    warnings.push("DNS capture is on, but all DNS is not captured and no DNS servers are known: DNS capture disabled")
    redirectDns = false
  }

  // Interfaces whose traffic is never captured.
  for (const nic of splitList(config.excludeInterfaces)) {
    append("nat", "PREROUTING", "-i", nic, "-j", "RETURN")
    append("nat", "OUTPUT", "-o", nic, "-j", "RETURN")
  }
  if (tproxy) {
    for (const nic of splitList(config.excludeInterfaces)) {
      append("mangle", "PREROUTING", "-i", nic, "-j", "RETURN")
      append("mangle", "OUTPUT", "-o", nic, "-j", "RETURN")
    }
  }
  // Virtual interfaces are not captured as inbound.
  for (const nic of splitList(config.rerouteVirtualInterfaces)) {
    insert("nat", "PREROUTING", 1, "-i", nic, "-j", "RETURN")
  }
  if (config.dropInvalid) {
    append("mangle", "PREROUTING", "-m", "conntrack", "--ctstate", "INVALID", "-j", Chains.drop)
    append("mangle", Chains.drop, "-j", "DROP")
  }

  // The tunnel port goes straight to the proxy; the two redirect chains.
  append("nat", Chains.inbound, "-p", "tcp", "--dport", config.inboundTunnelPort, "-j", "RETURN")
  append("nat", Chains.redirect, "-p", "tcp", "-j", "REDIRECT", "--to-ports", config.proxyPort)
  append("nat", Chains.inRedirect, "-p", "tcp", "-j", "REDIRECT", "--to-ports", config.inboundCapturePort)

  // Inbound capture.
  const inboundPorts = config.inboundPortsInclude.trim()
  if (inboundPorts !== "") {
    const table: Table = tproxy ? "mangle" : "nat"
    if (tproxy) {
      append("mangle", Chains.divert, "-j", "MARK", "--set-mark", config.inboundTproxyMark)
      append("mangle", Chains.divert, "-j", "ACCEPT")
      appendVersioned(
        loopbackV4,
        "::1/128",
        "mangle",
        Chains.tproxy,
        "!",
        "-d",
        "{}",
        "-p",
        "tcp",
        "-j",
        "TPROXY",
        "--tproxy-mark",
        `${config.inboundTproxyMark}/0xffffffff`,
        "--on-port",
        config.inboundCapturePort,
      )
    }
    append(table, "PREROUTING", "-p", "tcp", "-j", Chains.inbound)
    if (inboundPorts === "*") {
      for (const port of splitList(config.inboundPortsExclude)) {
        append(table, Chains.inbound, "-p", "tcp", "--dport", port, "-j", "RETURN")
      }
      if (tproxy) {
        append(
          "mangle",
          Chains.inbound,
          "-p",
          "tcp",
          "-m",
          "conntrack",
          "--ctstate",
          "RELATED,ESTABLISHED",
          "-j",
          Chains.divert,
        )
        append("mangle", Chains.inbound, "-p", "tcp", "-j", Chains.tproxy)
      } else {
        append("nat", Chains.inbound, "-p", "tcp", "-j", Chains.inRedirect)
      }
    } else {
      for (const port of splitList(inboundPorts)) {
        if (tproxy) {
          append(
            "mangle",
            Chains.inbound,
            "-p",
            "tcp",
            "--dport",
            port,
            "-m",
            "conntrack",
            "--ctstate",
            "RELATED,ESTABLISHED",
            "-j",
            Chains.divert,
          )
          append("mangle", Chains.inbound, "-p", "tcp", "--dport", port, "-j", Chains.tproxy)
        } else {
          append("nat", Chains.inbound, "-p", "tcp", "--dport", port, "-j", Chains.inRedirect)
        }
      }
    }
  }

  // Outbound: every locally generated packet goes through MESH_OUTPUT.
  append("nat", "OUTPUT", "-j", Chains.output)
  for (const port of splitList(config.outboundPortsExclude)) {
    append("nat", Chains.output, "-p", "tcp", "--dport", port, "-j", "RETURN")
    append("nat", Chains.output, "-p", "udp", "--dport", port, "-j", "RETURN")
  }
  // Inbound passthrough connections of the proxy (bound to 127.0.0.6 / ::6).
  appendVersioned(
    INBOUND_PASSTHROUGH_V4,
    INBOUND_PASSTHROUGH_V6,
    "nat",
    Chains.output,
    "-o",
    "lo",
    "-s",
    "{}",
    "-j",
    "RETURN",
  )

  const exemptOwner = (kind: "--uid-owner" | "--gid-owner", id: string) => {
    // The proxy calling the application back through a service address: inbound capture.
    if (redirectDns && kind === "--uid-owner") {
      appendVersioned(
        loopbackV4,
        "::1/128",
        "nat",
        Chains.output,
        "-o",
        "lo",
        "!",
        "-d",
        "{}",
        "-p",
        "tcp",
        "-m",
        "multiport",
        "!",
        "--dports",
        `53,${config.inboundTunnelPort}`,
        "-m",
        "owner",
        kind,
        id,
        "-j",
        Chains.inRedirect,
      )
    } else {
      appendVersioned(
        loopbackV4,
        "::1/128",
        "nat",
        Chains.output,
        "-o",
        "lo",
        "!",
        "-d",
        "{}",
        "-p",
        "tcp",
        "!",
        "--dport",
        config.inboundTunnelPort,
        "-m",
        "owner",
        kind,
        id,
        "-j",
        Chains.inRedirect,
      )
    }
    // The application calling itself over loopback is left alone, unless loopback is an
    // explicitly captured range; TCP DNS to a local server stays capturable.
    if (!loopbackIncluded) {
      if (redirectDns) {
        append(
          "nat",
          Chains.output,
          "-o",
          "lo",
          "-p",
          "tcp",
          "!",
          "--dport",
          "53",
          "-m",
          "owner",
          "!",
          kind,
          id,
          "-j",
          "RETURN",
        )
      } else {
        append("nat", Chains.output, "-o", "lo", "-m", "owner", "!", kind, id, "-j", "RETURN")
      }
    }
    // Everything else the proxy sends leaves uncaptured (no loops).
    append("nat", Chains.output, "-m", "owner", kind, id, "-j", "RETURN")
  }
  for (const uid of uids) exemptOwner("--uid-owner", uid)
  for (const gid of gids) exemptOwner("--gid-owner", gid)

  // Owner groups whose traffic is (not) captured.
  const groups = parseInterceptFilter(config.ownerGroupsInclude, config.ownerGroupsExclude)
  if (groups.except) {
    for (const group of groups.values) append("nat", Chains.output, "-m", "owner", "--gid-owner", group, "-j", "RETURN")
  } else {
    append(
      "nat",
      Chains.output,
      ...groups.values.flatMap((group) => ["-m", "owner", "!", "--gid-owner", group]),
      "-j",
      "RETURN",
    )
  }

  if (redirectDns) dnsRules(config, { append, append4, append6 }, uids, gids)

  // Loopback destinations (proxy-aware applications, container to container) are not captured.
  appendVersioned(loopbackV4, "::1/128", "nat", Chains.output, "-d", "{}", "-j", "RETURN")
  for (const cidr of excludeRanges.v4.cidrs) append4("nat", Chains.output, "-d", cidr, "-j", "RETURN")
  for (const cidr of excludeRanges.v6.cidrs) append6("nat", Chains.output, "-d", cidr, "-j", "RETURN")

  for (const port of splitList(config.outboundPortsInclude)) {
    append("nat", Chains.output, "-p", "tcp", "--dport", port, "-j", Chains.redirect)
  }

  const includeRules = (
    range: NetworkRange,
    appendFamily: (table: Table, chain: string, ...params: Array<string>) => void,
    insertFamily: (table: Table, chain: string, position: number, ...params: Array<string>) => void,
  ) => {
    if (range.wildcard) {
      appendFamily("nat", Chains.output, "-j", Chains.redirect)
      for (const nic of splitList(config.rerouteVirtualInterfaces)) {
        insertFamily("nat", "PREROUTING", 1, "-i", nic, "-j", Chains.redirect)
      }
      return
    }
    for (const cidr of range.cidrs) {
      for (const nic of splitList(config.rerouteVirtualInterfaces)) {
        insertFamily("nat", "PREROUTING", 1, "-i", nic, "-d", cidr, "-j", Chains.redirect)
      }
      appendFamily("nat", Chains.output, "-d", cidr, "-j", Chains.redirect)
    }
  }
  includeRules(includeRanges.v4, append4, insert4)
  includeRules(includeRanges.v6, append6, insert6)

  if (tproxy) {
    const mark = config.inboundTproxyMark
    // Keep the mark the proxy's original-source filter set as the connection's mark.
    append("mangle", "PREROUTING", "-p", "tcp", "-m", "mark", "--mark", mark, "-j", "CONNMARK", "--save-mark")
    append("mangle", "OUTPUT", "-p", "tcp", "-o", "lo", "-m", "mark", "--mark", mark, "-j", "RETURN")
    for (const [kind, ids] of [
      ["--uid-owner", uids],
      ["--gid-owner", gids],
    ] as const) {
      for (const id of ids) {
        appendVersioned(
          loopbackV4,
          "::1/128",
          "mangle",
          "OUTPUT",
          "!",
          "-d",
          "{}",
          "-p",
          "tcp",
          "-o",
          "lo",
          "-m",
          "owner",
          kind,
          id,
          "-j",
          "MARK",
          "--set-mark",
          OUTBOUND_MARK,
        )
      }
    }
    append("mangle", "OUTPUT", "-p", "tcp", "-m", "connmark", "--mark", mark, "-j", "CONNMARK", "--restore-mark")
    insert("mangle", Chains.inbound, 1, "-p", "tcp", "-m", "mark", "--mark", mark, "-j", "RETURN")
    insert4("mangle", Chains.inbound, 2, "-p", "tcp", "-s", INBOUND_PASSTHROUGH_V4, "-i", "lo", "-j", "RETURN")
    insert6("mangle", Chains.inbound, 2, "-p", "tcp", "-s", INBOUND_PASSTHROUGH_V6, "-i", "lo", "-j", "RETURN")
    insert(
      "mangle",
      Chains.inbound,
      3,
      "-p",
      "tcp",
      "-i",
      "lo",
      "-m",
      "mark",
      "!",
      "--mark",
      OUTBOUND_MARK,
      "-j",
      "RETURN",
    )
  }

  return { v4, v6, ipv6: config.enableIpv6, dnsCapture: redirectDns, warnings }
}

type Appender = (table: Table, chain: string, ...params: Array<string>) => void

/** DNS capture: port 53 to the agent's 15053, and conntrack zones in `raw` for UDP DNS. */
const dnsRules = (
  config: IptablesConfig,
  { append, append4, append6 }: { append: Appender; append4: Appender; append6: Appender },
  uids: ReadonlyArray<string>,
  gids: ReadonlyArray<string>,
) => {
  const all = config.captureAllDns
  const serversV4 = config.dnsServersV4
  const serversV6 = config.dnsServersV6
  append("raw", "OUTPUT", "-j", Chains.outputDns)
  if (all || serversV4.length > 0) append4("nat", Chains.output, "-j", Chains.outputDns)
  if (all || serversV6.length > 0) append6("nat", Chains.output, "-j", Chains.outputDns)
  for (const protocol of ["tcp", "udp"]) {
    if (all) {
      append("nat", Chains.outputDns, "-p", protocol, "--dport", "53", "-j", "REDIRECT", "--to-ports", DNS_CAPTURE_PORT)
      continue
    }
    for (const server of serversV4) {
      append4(
        "nat",
        Chains.outputDns,
        "-p",
        protocol,
        "--dport",
        "53",
        "-d",
        `${server}/32`,
        "-j",
        "REDIRECT",
        "--to-ports",
        DNS_CAPTURE_PORT,
      )
    }
    for (const server of serversV6) {
      append6(
        "nat",
        Chains.outputDns,
        "-p",
        protocol,
        "--dport",
        "53",
        "-d",
        `${server}/128`,
        "-j",
        "REDIRECT",
        "--to-ports",
        DNS_CAPTURE_PORT,
      )
    }
  }
  // Zone 1: the agent and the upstream resolvers; zone 2: applications and the agent.
  for (const [kind, ids] of [
    ["--uid-owner", uids],
    ["--gid-owner", gids],
  ] as const) {
    for (const id of ids) {
      append("raw", Chains.outputDns, "-p", "udp", "--dport", "53", "-m", "owner", kind, id, "-j", "CT", "--zone", "1")
      append(
        "raw",
        Chains.outputDns,
        "-p",
        "udp",
        "--sport",
        DNS_CAPTURE_PORT,
        "-m",
        "owner",
        kind,
        id,
        "-j",
        "CT",
        "--zone",
        "2",
      )
    }
  }
  if (all) {
    append("raw", "PREROUTING", "-j", Chains.inbound)
    append("raw", Chains.outputDns, "-p", "udp", "--dport", "53", "-j", "CT", "--zone", "2")
    append("raw", Chains.inbound, "-p", "udp", "--sport", "53", "-j", "CT", "--zone", "1")
    return
  }
  for (const [servers, appendFamily, bits] of [
    [serversV4, append4, "32"],
    [serversV6, append6, "128"],
  ] as const) {
    if (servers.length > 0) appendFamily("raw", "PREROUTING", "-j", Chains.inbound)
    for (const server of servers) {
      appendFamily(
        "raw",
        Chains.outputDns,
        "-p",
        "udp",
        "--dport",
        "53",
        "-d",
        `${server}/${bits}`,
        "-j",
        "CT",
        "--zone",
        "2",
      )
      appendFamily(
        "raw",
        Chains.inbound,
        "-p",
        "udp",
        "--sport",
        "53",
        "-s",
        `${server}/${bits}`,
        "-j",
        "CT",
        "--zone",
        "1",
      )
    }
  }
}

/** The rule as an iptables argument line after the table: `-A CHAIN ...` or `-I CHAIN n ...`. */
export const ruleLine = (rule: Rule): string =>
  (rule.position === undefined
    ? ["-A", rule.chain, ...rule.params]
    : ["-I", rule.chain, String(rule.position), ...rule.params]
  ).join(" ")

/** Mesh chains each table needs, in order of first use (rules' chains, then jump targets). */
export const chainsByTable = (rules: ReadonlyArray<Rule>): ReadonlyMap<Table, ReadonlyArray<string>> => {
  const result = new Map<Table, Array<string>>()
  const add = (table: Table, chain: string) => {
    if (BUILTIN_CHAINS.has(chain) || !isMeshChain(chain)) return
    const chains = result.get(table) ?? []
    if (!chains.includes(chain)) chains.push(chain)
    result.set(table, chains)
  }
  for (const rule of rules) add(rule.table, rule.chain)
  for (const rule of rules) {
    const target = targetOf(rule.params)
    if (target !== undefined) add(rule.table, target)
  }
  return result
}

export interface RestoreOptions {
  /** Lines placed first in a table's section (deletions, flushes) before chain creations. */
  readonly prelude?: ReadonlyMap<Table, ReadonlyArray<string>>
  /** Chains that already exist (so no `-N` line). */
  readonly existingChains?: ReadonlyMap<Table, ReadonlySet<string>>
}

/**
 * `iptables-restore --noflush` input: per table `* table`, chain creations, rules in order,
 * `COMMIT`. Tables without lines are left out.
 */
export const renderRestore = (rules: ReadonlyArray<Rule>, options: RestoreOptions = {}): string => {
  const chains = chainsByTable(rules)
  const tables: Array<Table> = [...TABLES]
  for (const table of options.prelude?.keys() ?? []) if (!tables.includes(table)) tables.push(table)
  let out = ""
  for (const table of tables) {
    const lines: Array<string> = [...(options.prelude?.get(table) ?? [])]
    const existing = options.existingChains?.get(table)
    for (const chain of chains.get(table) ?? []) if (existing?.has(chain) !== true) lines.push(`-N ${chain}`)
    for (const rule of rules) if (rule.table === table) lines.push(ruleLine(rule))
    if (lines.length === 0) continue
    out += `* ${table}\n${lines.join("\n")}\nCOMMIT\n`
  }
  return out
}

/** The final content of each chain once the rules are applied in order: table → chain → params lines. */
export const finalState = (
  rules: ReadonlyArray<Rule>,
): ReadonlyMap<Table, ReadonlyMap<string, ReadonlyArray<string>>> => {
  const state = new Map<Table, Map<string, Array<string>>>()
  for (const [table, chains] of chainsByTable(rules)) {
    const map = new Map<string, Array<string>>()
    for (const chain of chains) map.set(chain, [])
    state.set(table, map)
  }
  for (const rule of rules) {
    const tableState = state.get(rule.table) ?? new Map<string, Array<string>>()
    state.set(rule.table, tableState)
    const chain = tableState.get(rule.chain) ?? []
    tableState.set(rule.chain, chain)
    const line = rule.params.join(" ")
    if (rule.position === undefined) chain.push(line)
    else chain.splice(Math.max(0, Math.min(rule.position - 1, chain.length)), 0, line)
  }
  return state
}

/** `ip` argument lists for TPROXY's policy routing: marked packets are delivered locally. */
export const tproxyRouteCommands = (
  config: IptablesConfig,
  action: "add" | "del",
): ReadonlyArray<ReadonlyArray<string>> => {
  if (config.inboundInterceptionMode !== "TPROXY" || config.inboundPortsInclude.trim() === "") return []
  const families = config.enableIpv6 ? ["inet", "inet6"] : ["inet"]
  const table = config.inboundTproxyRouteTable
  return families.flatMap((family) =>
    action === "add"
      ? [
          ["-f", family, "rule", "add", "fwmark", config.inboundTproxyMark, "lookup", table],
          ["-f", family, "route", "add", "local", "default", "dev", "lo", "table", table],
        ]
      : [
          ["-f", family, "rule", "del", "fwmark", config.inboundTproxyMark, "lookup", table],
          ["-f", family, "route", "flush", "table", table],
        ],
  )
}
