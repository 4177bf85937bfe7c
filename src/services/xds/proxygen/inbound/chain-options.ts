/**
 * The filter chains one inbound port (or the passthrough) gets, by the port's protocol class and
 * the PeerAuthentication mode in force there — the reference mesh's rules, so that a connection
 * the reference refuses is refused at the same place (chain selection, TLS handshake or HTTP
 * codec) and shows in the same metrics and access logs:
 *
 * - STRICT: every chain terminates the mesh's mTLS with no ALPN condition beyond telling an auto
 *   port's HTTP from its TCP; TLS that is not the mesh's fails the handshake, plaintext finds
 *   no chain.
 * - PERMISSIVE: mesh ALPN → mTLS; plaintext → the plaintext chains; other TLS → passed through
 *   as TCP (auto and TCP ports; a port declared HTTP has nothing for it).
 * - DISABLE: only plaintext chains. With no chain asking for TLS, the TLS inspector is off for the
 *   port (listener.ts), so TLS arrives as raw bytes: a TCP chain passes it through, an HTTP chain
 *   fails it in the codec.
 */
import { MTLS_ALPN_ANY, MTLS_ALPN_HTTP, MTLS_ALPN_TCP, plaintextAlpnHttp } from "./tls.js"

export type Mode = "STRICT" | "PERMISSIVE" | "DISABLE"
export type ProtocolClass = "http" | "tcp" | "auto"

export interface ChainOption {
  /** What the chain ends in: the HTTP connection manager or the TCP proxy. */
  readonly protocol: "http" | "tcp"
  readonly transport: "tls" | "raw_buffer"
  readonly alpn?: ReadonlyArray<string>
  /** The chain terminates the mesh's mTLS. */
  readonly mtls: boolean
}

const http = (transport: ChainOption["transport"], mtls: boolean, alpn?: ReadonlyArray<string>): ChainOption => ({
  protocol: "http",
  transport,
  mtls,
  ...(alpn !== undefined ? { alpn } : {}),
})
const tcp = (transport: ChainOption["transport"], mtls: boolean, alpn?: ReadonlyArray<string>): ChainOption => ({
  protocol: "tcp",
  transport,
  mtls,
  ...(alpn !== undefined ? { alpn } : {}),
})

/** The chains of a port, in order. `http10`: `PILOT_HTTP10`, auto ports sniff HTTP/1.0 as HTTP. */
export const chainOptions = (klass: ProtocolClass, mode: Mode, http10: boolean): ReadonlyArray<ChainOption> => {
  const sniffedHttp = plaintextAlpnHttp(http10)
  switch (klass) {
    case "http":
      if (mode === "STRICT") return [http("tls", true)]
      if (mode === "PERMISSIVE") return [http("tls", true, MTLS_ALPN_ANY), http("raw_buffer", false)]
      return [http("raw_buffer", false)]
    case "tcp":
      if (mode === "STRICT") return [tcp("tls", true)]
      if (mode === "PERMISSIVE") return [tcp("tls", true, MTLS_ALPN_ANY), tcp("tls", false), tcp("raw_buffer", false)]
      return [tcp("raw_buffer", false)]
    case "auto":
      if (mode === "STRICT") return [http("tls", true, MTLS_ALPN_HTTP), tcp("tls", true)]
      if (mode === "PERMISSIVE")
        return [
          http("tls", true, MTLS_ALPN_HTTP),
          http("raw_buffer", false, sniffedHttp),
          tcp("tls", true, MTLS_ALPN_TCP),
          tcp("raw_buffer", false),
          tcp("tls", false),
        ]
      return [http("raw_buffer", false, sniffedHttp), tcp("raw_buffer", false)]
  }
}
