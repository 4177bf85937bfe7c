/**
 * Where the DNS proxy listens, from `DNS_PROXY_ADDR` (`host:port`, `[v6]:port`, `:port`):
 * `localhost` means the IPv4 loopback and, where the host has it, the IPv6 one (as the reference
 * listens on both); an empty host means every IPv4 interface.
 */
import { isIP } from "node:net"
import { Either } from "effect"
import { parseListenAddress as parseHostPort } from "../../net/address.js"

export interface ListenAddresses {
  /** Addresses that must bind. */
  readonly required: ReadonlyArray<string>
  /** Addresses bound when the host supports them (IPv6 loopback). */
  readonly optional: ReadonlyArray<string>
  /** 0 picks a free port (the same one for every address and both transports). */
  readonly port: number
}

/** The addresses of `address` (read as every listen flag is), or why it is not one. */
export const parseListenAddress = (address: string): ListenAddresses | string => {
  if (!address.includes(":")) return `DNS_PROXY_ADDR "${address}": missing port`
  return Either.match(parseHostPort(address), {
    onLeft: () => `DNS_PROXY_ADDR "${address}": bad port`,
    onRight: ({ host, port }): ListenAddresses | string => {
      if (host === "localhost") return { required: ["127.0.0.1"], optional: ["::1"], port }
      if (host === undefined) return { required: ["0.0.0.0"], optional: [], port }
      if (isIP(host) === 0) return `DNS_PROXY_ADDR "${address}": host must be an IP address or localhost`
      return { required: [host], optional: [], port }
    },
  })
}
