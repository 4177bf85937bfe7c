/**
 * Listen addresses in the Go form the flags use: `:15010` (all interfaces), `localhost:9876`,
 * `127.0.0.1:8080`, `[::1]:15012`.
 */
import { Either } from "effect"

export interface ListenAddress {
  /** Host to bind; undefined binds every interface. */
  readonly host: string | undefined
  readonly port: number
}

export const parsePort = (text: string): Either.Either<number, string> => {
  if (!/^\d+$/.test(text)) return Either.left(`invalid port "${text}"`)
  const port = Number(text)
  return port <= 65535 ? Either.right(port) : Either.left(`port ${port} is out of range 0-65535`)
}

export const parseListenAddress = (text: string): Either.Either<ListenAddress, string> => {
  const value = text.trim()
  const colon = value.lastIndexOf(":")
  if (colon === -1) return Either.left(`invalid address "${text}": expected host:port or :port`)
  let host = value.slice(0, colon)
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1)
  return Either.map(parsePort(value.slice(colon + 1)), (port) => ({
    host: host === "" || host === "*" ? undefined : host,
    port,
  }))
}

export const formatListenAddress = (address: ListenAddress): string =>
  `${address.host === undefined ? "" : address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`
