/**
 * The inputs of the traffic-capture rule builder (spec part 2 §4.2 `mesh-iptables` flags and the
 * §4.4 variables), their defaults and their validation. Everything here is pure: the values that
 * come from the machine (DNS servers of resolv.conf, the pod address) arrive already resolved.
 */
import { Data, Either } from "effect"

export type InterceptionMode = "REDIRECT" | "TPROXY"

export interface IptablesConfig {
  /** `--envoy-port`: where redirected outbound TCP lands. */
  readonly proxyPort: string
  /** `--inbound-capture-port`. */
  readonly inboundCapturePort: string
  /** `--inbound-tunnel-port`: never redirected inbound. */
  readonly inboundTunnelPort: string
  /** `--proxy-uid`, comma-separated. */
  readonly proxyUid: string
  /** `--proxy-gid`, comma-separated. */
  readonly proxyGid: string
  readonly inboundInterceptionMode: InterceptionMode
  readonly inboundTproxyMark: string
  readonly inboundTproxyRouteTable: string
  /** `--mesh-inbound-ports`: `*`, a list, or empty (no inbound capture). */
  readonly inboundPortsInclude: string
  /** `--mesh-local-exclude-ports`: only with `*` inbound. */
  readonly inboundPortsExclude: string
  /** `MESH_OUTBOUND_OWNER_GROUPS`: `*` or the groups whose traffic is captured. */
  readonly ownerGroupsInclude: string
  /** `MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE`: only with `*` groups. */
  readonly ownerGroupsExclude: string
  readonly outboundPortsInclude: string
  readonly outboundPortsExclude: string
  /** `--mesh-service-cidr`: `*`, a CIDR list, or empty (no outbound capture). */
  readonly outboundIpRangesInclude: string
  readonly outboundIpRangesExclude: string
  /** `--orch-virt-interfaces`. */
  readonly rerouteVirtualInterfaces: string
  /** `--mesh-exclude-interfaces`. */
  readonly excludeInterfaces: string
  readonly redirectDns: boolean
  readonly captureAllDns: boolean
  readonly dropInvalid: boolean
  /** Name servers of resolv.conf, split by family. */
  readonly dnsServersV4: ReadonlyArray<string>
  readonly dnsServersV6: ReadonlyArray<string>
  /** Also build IPv6 rules (pod address is IPv6, or dual stack). */
  readonly enableIpv6: boolean
  readonly traceLogging: boolean
  /** `MESH_OUTBOUND_IPV4_LOOPBACK_CIDR`. */
  readonly hostIpv4LoopbackCidr: string
}

export const DEFAULT_PROXY_UID = "1337"
/** The agent's DNS listener (spec part 2 rule 4). */
export const DNS_CAPTURE_PORT = "15053"
/** Mark the proxy's own loopback connections carry in TPROXY mode. */
export const OUTBOUND_MARK = "1338"
/** Source address the proxy binds for inbound passthrough. */
export const INBOUND_PASSTHROUGH_V4 = "127.0.0.6/32"
export const INBOUND_PASSTHROUGH_V6 = "::6/128"
/** The reference caps included owner groups: they all go into one rule. */
export const MAX_OWNER_GROUPS_INCLUDE = 64

export const defaultIptablesConfig: IptablesConfig = {
  proxyPort: "15001",
  inboundCapturePort: "15006",
  inboundTunnelPort: "15008",
  proxyUid: "",
  proxyGid: "",
  inboundInterceptionMode: "REDIRECT",
  inboundTproxyMark: "1337",
  inboundTproxyRouteTable: "133",
  inboundPortsInclude: "",
  inboundPortsExclude: "",
  ownerGroupsInclude: "*",
  ownerGroupsExclude: "",
  outboundPortsInclude: "",
  outboundPortsExclude: "",
  outboundIpRangesInclude: "",
  outboundIpRangesExclude: "",
  rerouteVirtualInterfaces: "",
  excludeInterfaces: "",
  redirectDns: false,
  captureAllDns: false,
  dropInvalid: false,
  dnsServersV4: [],
  dnsServersV6: [],
  enableIpv6: false,
  traceLogging: false,
  hostIpv4LoopbackCidr: "127.0.0.1/32",
}

export class IptablesConfigError extends Data.TaggedError("IptablesConfigError")<{ readonly message: string }> {}

/** A comma-separated list without empty items (items are trimmed). */
export const splitList = (text: string): ReadonlyArray<string> =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

export const parseIpv4 = (text: string): ReadonlyArray<number> | undefined => {
  const match = IPV4.exec(text)
  if (match === null) return undefined
  const octets = match.slice(1).map(Number)
  return octets.every((octet) => octet <= 255) ? octets : undefined
}

/** Expands an IPv6 address to its 8 groups; undefined when it is not one. */
export const parseIpv6 = (text: string): ReadonlyArray<number> | undefined => {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return undefined
  let address = text
  const lastColon = text.lastIndexOf(":")
  const tail = text.slice(lastColon + 1)
  if (tail.includes(".")) {
    // An embedded IPv4 tail (`::ffff:10.0.0.1`) is two groups.
    const v4 = parseIpv4(tail)
    if (v4 === undefined) return undefined
    const hex = (high: number, low: number) => ((high << 8) | low).toString(16)
    address = `${text.slice(0, lastColon + 1)}${hex(v4[0]!, v4[1]!)}:${hex(v4[2]!, v4[3]!)}`
  }
  const parseGroups = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const groups = part.split(":")
    if (groups.some((group) => !/^[0-9a-fA-F]{1,4}$/.test(group))) return undefined
    return groups.map((group) => Number.parseInt(group, 16))
  }
  const halves = address.split("::")
  if (halves.length > 2) return undefined
  const left = parseGroups(halves[0]!)
  const right = halves.length === 2 ? parseGroups(halves[1]!) : []
  if (left === undefined || right === undefined) return undefined
  const known = left.length + right.length
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined
  return [...left, ...Array.from({ length: 8 - known }, () => 0), ...right]
}

export type IpFamily = 4 | 6

export const ipFamilyOf = (address: string): IpFamily | undefined =>
  parseIpv4(address) !== undefined ? 4 : parseIpv6(address) !== undefined ? 6 : undefined

export interface Cidr {
  readonly text: string
  readonly family: IpFamily
  readonly loopback: boolean
}

export const parseCidr = (text: string): Cidr | undefined => {
  const slash = text.indexOf("/")
  if (slash === -1) return undefined
  const address = text.slice(0, slash)
  const bits = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(bits)) return undefined
  const v4 = parseIpv4(address)
  if (v4 !== undefined) {
    return Number(bits) <= 32 ? { text, family: 4, loopback: v4[0] === 127 } : undefined
  }
  const v6 = parseIpv6(address)
  if (v6 === undefined || Number(bits) > 128) return undefined
  return { text, family: 6, loopback: v6.slice(0, 7).every((group) => group === 0) && v6[7] === 1 }
}

/** A CIDR list split by family; `*` is the wildcard of both. */
export interface NetworkRange {
  readonly wildcard: boolean
  readonly cidrs: ReadonlyArray<string>
  readonly hasLoopback: boolean
}

export interface SplitRanges {
  readonly v4: NetworkRange
  readonly v6: NetworkRange
  /** Entries that are not CIDRs; the reference skips them with a warning. */
  readonly ignored: ReadonlyArray<string>
}

export const separateV4V6 = (list: string): SplitRanges => {
  if (list.trim() === "*") {
    const all: NetworkRange = { wildcard: true, cidrs: [], hasLoopback: false }
    return { v4: all, v6: all, ignored: [] }
  }
  const v4: Array<string> = []
  const v6: Array<string> = []
  const ignored: Array<string> = []
  let v4Loopback = false
  let v6Loopback = false
  for (const item of splitList(list)) {
    const cidr = parseCidr(item)
    if (cidr === undefined) ignored.push(item)
    else if (cidr.family === 4) {
      v4.push(cidr.text)
      v4Loopback ||= cidr.loopback
    } else {
      v6.push(cidr.text)
      v6Loopback ||= cidr.loopback
    }
  }
  return {
    v4: { wildcard: false, cidrs: v4, hasLoopback: v4Loopback },
    v6: { wildcard: false, cidrs: v6, hasLoopback: v6Loopback },
    ignored,
  }
}

/** Which owner groups have their outbound traffic captured. */
export interface InterceptFilter {
  readonly values: ReadonlyArray<string>
  /** true: capture every group except `values`; false: capture only `values`. */
  readonly except: boolean
}

export const parseInterceptFilter = (include: string, exclude: string): InterceptFilter =>
  include.trim() === "*" ? { values: splitList(exclude), except: true } : { values: splitList(include), except: false }

const isPort = (text: string) => /^\d{1,5}$/.test(text) && Number(text) >= 0 && Number(text) <= 65535

/** Checks what the rules would otherwise carry silently into iptables. */
export const validateIptablesConfig = (config: IptablesConfig): Either.Either<IptablesConfig, IptablesConfigError> => {
  const problems: Array<string> = []
  const singlePort = (flag: string, value: string) => {
    if (!isPort(value)) problems.push(`${flag}: "${value}" is not a port`)
  }
  singlePort("--envoy-port", config.proxyPort)
  singlePort("--inbound-capture-port", config.inboundCapturePort)
  singlePort("--inbound-tunnel-port", config.inboundTunnelPort)
  const portList = (flag: string, value: string, wildcard: boolean) => {
    if (wildcard && value.trim() === "*") return
    for (const port of splitList(value)) if (!isPort(port)) problems.push(`${flag}: "${port}" is not a port`)
  }
  portList("--mesh-inbound-ports", config.inboundPortsInclude, true)
  portList("--mesh-local-exclude-ports", config.inboundPortsExclude, false)
  portList("--mesh-outbound-ports", config.outboundPortsInclude, false)
  portList("--mesh-local-outbound-ports-exclude", config.outboundPortsExclude, false)
  for (const [flag, value] of [
    ["--proxy-uid", config.proxyUid],
    ["--proxy-gid", config.proxyGid],
  ] as const) {
    for (const id of splitList(value)) if (!/^\d+$/.test(id)) problems.push(`${flag}: "${id}" is not a numeric id`)
  }
  if (!/^\d+$/.test(config.inboundTproxyMark)) {
    problems.push(`--mesh-inbound-tproxy-mark: "${config.inboundTproxyMark}" is not a number`)
  }
  if (!/^\d+$/.test(config.inboundTproxyRouteTable)) {
    problems.push(`--mesh-inbound-tproxy-route-table: "${config.inboundTproxyRouteTable}" is not a number`)
  }
  if (config.outboundIpRangesExclude.trim() === "*") {
    problems.push(`--mesh-service-exclude-cidr: "*" is not allowed (exclude specific CIDRs)`)
  }
  const filter = parseInterceptFilter(config.ownerGroupsInclude, config.ownerGroupsExclude)
  if (!filter.except && filter.values.length > MAX_OWNER_GROUPS_INCLUDE) {
    problems.push(
      `MESH_OUTBOUND_OWNER_GROUPS: at most ${MAX_OWNER_GROUPS_INCLUDE} owner groups can be captured, got ${filter.values.length}`,
    )
  }
  const loopback = parseCidr(config.hostIpv4LoopbackCidr)
  const loopbackBits = Number(config.hostIpv4LoopbackCidr.split("/")[1])
  if (loopback === undefined || loopback.family !== 4 || !loopback.loopback || loopbackBits < 8) {
    problems.push(
      `MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: "${config.hostIpv4LoopbackCidr}" must be a CIDR inside 127.0.0.0/8 with a prefix length of 8 to 32`,
    )
  }
  return problems.length === 0
    ? Either.right(config)
    : Either.left(new IptablesConfigError({ message: `invalid mesh-iptables configuration: ${problems.join("; ")}` }))
}

/** Name servers of a resolv.conf text, split by family (zone suffixes dropped). */
export const parseResolvConf = (
  text: string,
): { readonly v4: ReadonlyArray<string>; readonly v6: ReadonlyArray<string> } => {
  const v4: Array<string> = []
  const v6: Array<string> = []
  for (const raw of text.split("\n")) {
    const line = raw.replace(/[#;].*$/, "").trim()
    const [keyword, value] = line.split(/\s+/)
    if (keyword !== "nameserver" || value === undefined) continue
    const address = value.split("%")[0]!
    const family = ipFamilyOf(address)
    if (family === 4) v4.push(address)
    else if (family === 6) v6.push(address)
  }
  return { v4, v6 }
}
