/**
 * What the DNS proxy takes from the pod's resolv.conf: the nameservers it forwards unknown names
 * to (port 53, as the reference appends) and the search domains, whose first entry the lookup
 * table uses to answer the names a stub resolver expands before it tries the bare name.
 */
import { isIP } from "node:net"

export interface Upstream {
  readonly host: string
  readonly port: number
}

export interface ResolvConf {
  readonly nameservers: ReadonlyArray<Upstream>
  readonly search: ReadonlyArray<string>
}

export const DNS_PORT = 53

/** Parses resolv.conf text: `nameserver` lines (plain IPs only) and the last `search`/`domain` line. */
export const parseResolvConf = (text: string): ResolvConf => {
  const nameservers: Array<Upstream> = []
  let search: ReadonlyArray<string> = []
  for (const raw of text.split("\n")) {
    const line = raw.replace(/[#;].*$/, "").trim()
    const [keyword, ...values] = line.split(/\s+/)
    if (keyword === "nameserver" && values[0] !== undefined) {
      // a scoped IPv6 address (fe80::1%eth0) is kept whole: the socket API accepts it
      const host = values[0]
      if (isIP(host.split("%")[0]!) !== 0) nameservers.push({ host, port: DNS_PORT })
    } else if ((keyword === "search" || keyword === "domain") && values.length > 0) {
      // as in glibc: the last search or domain line wins
      search = values.map(trimDot).filter((d) => d !== "")
    }
  }
  return { nameservers, search }
}

const trimDot = (name: string): string => (name.endsWith(".") ? name.slice(0, -1) : name)

/** `host:port`, `[v6]:port` or a bare IP (port 53) as an upstream. */
export const parseUpstream = (address: string): Upstream | undefined => {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(address)
  if (bracketed) return upstream(bracketed[1]!, bracketed[2])
  if (isIP(address) !== 0) return { host: address, port: DNS_PORT }
  const colon = address.lastIndexOf(":")
  if (colon < 0) return undefined
  return upstream(address.slice(0, colon), address.slice(colon + 1))
}

const upstream = (host: string, port: string | undefined): Upstream | undefined => {
  const n = port === undefined ? DNS_PORT : Number(port)
  if (!Number.isInteger(n) || n <= 0 || n > 65535 || isIP(host) === 0) return undefined
  return { host, port: n }
}
