/**
 * A listener that cannot bind stops start-up with one line naming what configured it (a flag
 * or an environment variable), the address and the cause: `--grpcAddr 0.0.0.0:15010: address
 * already in use`. Node and grpc-js report bind failures in different wrappings; this keeps
 * only the system error.
 */
import { Data } from "effect"
import type { ListenAddress } from "./address.js"

export class ListenError extends Data.TaggedError("ListenError")<{
  /** What configured the address: `--grpcAddr`, `STATUS_PORT`, ... */
  readonly source: string
  readonly address: string
  readonly reason: string
}> {
  override get message() {
    return `${this.source} ${this.address}: ${this.reason}`
  }
}

const REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: "address already in use",
  EACCES: "permission denied (ports below 1024 need privileges)",
  EADDRNOTAVAIL: "address not available on this machine",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name lookup failed",
}

/** The cause of a bind failure in words, from a Node error or a grpc-js bind error's text. */
export const bindReason = (error: unknown): string => {
  const code =
    typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
      ? error.code
      : undefined
  const text = error instanceof Error ? error.message : String(error)
  // grpc-js: "No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 0.0.0.0:15010]"
  const found = code ?? /\b(E[A-Z_]{3,})\b/.exec(text)?.[1]
  if (found !== undefined && REASONS[found] !== undefined) return REASONS[found]
  return text || code || "unknown error"
}

/** The address as the message shows it: every interface is written 0.0.0.0. */
export const describeAddress = (address: ListenAddress): string => {
  const host = address.host ?? "0.0.0.0"
  return `${host.includes(":") ? `[${host}]` : host}:${address.port}`
}

export const listenError = (source: string, address: ListenAddress, error: unknown): ListenError =>
  new ListenError({ source, address: describeAddress(address), reason: bindReason(error) })
