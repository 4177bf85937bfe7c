/**
 * Debug requests on the ADS stream, as the reference's tool asks its control plane: a request
 * whose type URL is `mesh.io/debug/<path>` (or `istio.io/debug/<path>`, or the bare prefix with
 * the path as the first resource name) is answered once with the body the HTTP debug interface
 * gives for `/debug/<path>`, wrapped in one `google.protobuf.Any` of the request's type URL.
 *
 * One-shot: the answer has no version, its ACK is ignored, and the stream is not registered for
 * it (a stream that only asks debug pages is no proxy: not pushed to, not in syncz, not counted).
 * A refused caller, an unknown path or a failed page ends the stream with a gRPC status naming
 * why, as the reference ends a stream whose generator fails: DiscoveryResponse has no error field.
 *
 * Pure rules: which type URLs are debug requests, the page they ask for, who may ask, and how an
 * HTTP answer maps to a gRPC status. The stream loop (layers/xds/stream-loop.ts) applies them;
 * the pages come from the debug interface (layers/debug-server.ts).
 */
import { type Effect, Either } from "effect"
import { parseSpiffeId } from "../../ca/identity.js"
import { isLoopbackAddress } from "../../net/local-request.js"

/** The type-URL prefixes of debug requests (the reference's own is accepted too). */
export const DEBUG_TYPE_PREFIXES = ["mesh.io/debug", "istio.io/debug"] as const

/** The type URL meshctl asks with. */
export const debugTypeUrl = (path: string): string => `${DEBUG_TYPE_PREFIXES[0]}/${path.replace(/^\/+/, "")}`

/**
 * Longest debug type URL accepted (INVALID_ARGUMENT beyond it, as the request is read). A page
 * and its query are short: `config_dump?proxyID=<node id>`, the node id itself at most 1,024.
 */
export const MAX_DEBUG_TYPE_URL_LENGTH = 2048

/** Why a debug type URL is refused before anything is parsed; undefined when it is not. */
export const debugTypeProblem = (typeUrl: string): string | undefined =>
  typeUrl.length > MAX_DEBUG_TYPE_URL_LENGTH
    ? `debug type URL is ${typeUrl.length} characters long; at most ${MAX_DEBUG_TYPE_URL_LENGTH} are accepted`
    : undefined

/** Whether a request is a debug request: one prefix check, after the known types missed. */
export const isDebugType = (typeUrl: string | undefined): boolean =>
  typeUrl !== undefined && (typeUrl.startsWith(DEBUG_TYPE_PREFIXES[0]) || typeUrl.startsWith(DEBUG_TYPE_PREFIXES[1]))

/** The debug page a request asks for: `/debug/<path>` and its query. */
export interface DebugPageRequest {
  /** Without `/debug/`: `syncz`, `config_dump`. */
  readonly path: string
  readonly query: URLSearchParams
}

/**
 * The page of a debug request: the type URL's path (`mesh.io/debug/syncz`), or with the bare
 * prefix the first resource name (`syncz`, `config_dump?proxyID=x`). A resource name next to a
 * path in the type URL adds its query (`proxyID=x` or `?proxyID=x`).
 */
export const parseDebugRequest = (
  typeUrl: string,
  resourceNames: ReadonlyArray<string>,
): Either.Either<DebugPageRequest, string> => {
  const prefix = DEBUG_TYPE_PREFIXES.find((p) => typeUrl === p || typeUrl.startsWith(`${p}/`))
  if (prefix === undefined) return Either.left(`${typeUrl} is not a debug type`)
  const inType = typeUrl.slice(prefix.length).replace(/^\/+/, "")
  const first = resourceNames.find((n) => n !== "") ?? ""
  const whole = inType !== "" ? inType : first.replace(/^\/+/, "").replace(/^debug\//, "")
  const mark = whole.indexOf("?")
  const path = (mark === -1 ? whole : whole.slice(0, mark)).replace(/\/+$/, "")
  if (path === "")
    return Either.left(`no debug path: ask ${prefix}/<path> (e.g. ${prefix}/syncz) or name the path as the resource`)
  if (
    !/^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/.test(path) ||
    path.split("/").some((segment) => segment === "." || segment === "..")
  )
    return Either.left(`invalid debug path ${path}`)
  const query = new URLSearchParams(mark === -1 ? "" : whole.slice(mark + 1))
  // With the path in the type URL, a resource name carries the query.
  if (inType !== "" && first !== "")
    for (const [key, value] of new URLSearchParams(first.replace(/^\?/, ""))) query.append(key, value)
  return Either.right({ path, query })
}

/**
 * Who asks: the identities its stream was authenticated with, whether it came over TLS, and
 * whether from this host.
 */
export interface DebugCaller {
  readonly identities: ReadonlyArray<string>
  /** False on a plaintext connection (the `--grpcAddr` listener, 15010). */
  readonly secure: boolean
  /** The peer is a loopback address (127.0.0.0/8, ::1). */
  readonly loopback: boolean
}

/**
 * Whether a grpc-js peer (`call.getPeer()`: `host:port`, the host an IPv4 or IPv6 address
 * without brackets, `[host]:port` from other sources) is a loopback address.
 */
export const isLoopbackPeer = (peer: string): boolean => {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(peer)
  return isLoopbackAddress(bracketed !== null ? bracketed[1] : peer.replace(/:\d+$/, ""))
}

/** The setting that opens debug requests on the plaintext port to other hosts. */
export const PLAINTEXT_DEBUG_SETTING = "MESH_XDS_PLAINTEXT_DEBUG_REMOTE"

/** The gRPC statuses a debug request can end its stream with. */
export type DebugStatusCode =
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED"
  | "NOT_FOUND"
  | "INVALID_ARGUMENT"
  | "INTERNAL"
  | "UNAVAILABLE"

export interface DebugRefusal {
  readonly code: "UNAUTHENTICATED" | "PERMISSION_DENIED"
  readonly message: string
}

/**
 * Whether `caller` may read debug pages. Over TLS (15012) the caller must be authenticated (a
 * verified client certificate or a token) with an identity of the system namespace, as the
 * reference requires. The plaintext listener (15010) has no transport identity: its debug
 * requests are answered to loopback callers (meshctl `--plaintext` on the control plane's
 * host, a port-forward), to others only with `plaintextRemote` (MESH_XDS_PLAINTEXT_DEBUG_REMOTE):
 * config dumps and every proxy's state are not for whoever reaches the port. When the plaintext
 * listener does authenticate (`XDS_AUTH_PLAINTEXT`) the namespace rule applies as well.
 */
export const debugAccess = (
  caller: DebugCaller,
  systemNamespace: string,
  plaintextRemote = false,
): Either.Either<void, DebugRefusal> => {
  if (caller.identities.length === 0) {
    if (caller.secure)
      return Either.left({
        code: "UNAUTHENTICATED",
        message: "debug requests need an authenticated caller: present a client certificate of the mesh CA or a token",
      })
    if (caller.loopback || plaintextRemote) return Either.void
    return Either.left({
      code: "PERMISSION_DENIED",
      message: `debug requests on the plaintext xDS port are answered to loopback callers only: ask on this host, or on the TLS port with a client certificate or token of namespace ${systemNamespace} (${PLAINTEXT_DEBUG_SETTING}=true answers every caller)`,
    })
  }
  const namespaces: Array<string> = []
  for (const identity of caller.identities) {
    const id = parseSpiffeId(identity)
    if (Either.isRight(id) && id.right.namespace === systemNamespace) return Either.void
    namespaces.push(Either.isRight(id) ? `${identity} (namespace ${id.right.namespace})` : identity)
  }
  return Either.left({
    code: "PERMISSION_DENIED",
    message: `debug information is only given to identities of namespace ${systemNamespace}; the caller is ${namespaces.join(", ")}`,
  })
}

/** One page as the HTTP debug interface answers it. */
export interface DebugPage {
  readonly status: number
  /** The response body (JSON for every page that answers 200). */
  readonly body: string
}

/** The gRPC status name a non-2xx page ends the stream with. */
export const pageStatusCode = (status: number): DebugStatusCode =>
  status === 404
    ? "NOT_FOUND"
    : status === 403
      ? "PERMISSION_DENIED"
      : status >= 400 && status < 500
        ? "INVALID_ARGUMENT"
        : "INTERNAL"

/**
 * The debug interface as the ADS server reads it: the page of a request, undefined for a path
 * it does not serve.
 */
export type DebugPages = (request: DebugPageRequest) => Effect.Effect<DebugPage | undefined>

/** What the ADS server answers debug requests with, once the debug interface is up. */
export interface DebugService {
  readonly pages: DebugPages
  /** Whose identities may read them over TLS (`--namespace`, `mesh-system` by default). */
  readonly systemNamespace: string
}
