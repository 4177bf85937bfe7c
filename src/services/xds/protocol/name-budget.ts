/**
 * Bounds on the resource names ADS callers make the server hold. A name a stream subscribes to
 * is kept for as long as the stream watches it (its state, what the responder derives from it,
 * the hosts a push looks up for it), and a plaintext caller is unauthenticated: without bounds
 * a few streams sending distinct names grow the server without limit.
 *
 * - Each request: every name at most `MAX_RESOURCE_NAME_LENGTH` characters (INVALID_ARGUMENT),
 *   and no more names than a whole stream may hold (RESOURCE_EXHAUSTED); the whole request is
 *   already bounded by the gRPC receive limit (MESH_GPRC_MAXRECVMSGSIZE, 4 MiB as the
 *   reference's ISTIO_GPRC_MAXRECVMSGSIZE), which grpc-js enforces with RESOURCE_EXHAUSTED.
 * - Each stream: the names it watches, all types together, in count and in characters.
 * - The server: the names of all its streams together. A stream ends and its names are
 *   released (`release`), so the budget is what live streams hold.
 *
 * The reference bounds only the message size; these limits are ours (docs/architecture.md,
 * "What callers may send"). The state is one budget per server (`makeNameBudget`).
 */
import type { DeltaDiscoveryRequest, DiscoveryRequest } from "./messages.js"

/**
 * Longest resource name accepted. Real names are a host and a port, or a cluster name
 * (`outbound|port|subset|host`) of a few hundred characters at most; a debug query naming a
 * proxy (`proxyID=<node id>`, itself at most 1,024) fits too.
 */
export const MAX_RESOURCE_NAME_LENGTH = 2048

/** The settings, by what they bound (0 = no limit). */
export interface NameLimits {
  /** MESH_XDS_MAX_STREAM_NAMES: names one stream watches, all types together. */
  readonly streamNames: number
  /** MESH_XDS_MAX_STREAM_NAME_BYTES: the characters of those names. */
  readonly streamBytes: number
  /** MESH_XDS_MAX_NAMES: names all streams of the server watch together. */
  readonly totalNames: number
  /** MESH_XDS_MAX_NAME_BYTES: the characters of those names. */
  readonly totalBytes: number
}

/**
 * A sidecar that sees every service of a large mesh watches its endpoint clusters (tens of
 * thousands of names of about 60 characters, a few MB). The totals must not refuse a real mesh:
 * 5,000 proxies each watching 2,000 clusters (no Sidecar scoping) hold 10 million names of about
 * 600 MB, which the server holds anyway as their subscriptions; past that, streams are refused
 * rather than the server growing without end. A smaller mesh may lower them to bound what
 * many unauthenticated streams can make it hold.
 */
export const defaultNameLimits: NameLimits = {
  streamNames: 100_000,
  streamBytes: 8 * 1024 * 1024,
  totalNames: 10_000_000,
  totalBytes: 768 * 1024 * 1024,
}

export interface NameRefusal {
  readonly code: "INVALID_ARGUMENT" | "RESOURCE_EXHAUSTED"
  readonly message: string
}

const SETTINGS = {
  streamNames: "MESH_XDS_MAX_STREAM_NAMES",
  streamBytes: "MESH_XDS_MAX_STREAM_NAME_BYTES",
  totalNames: "MESH_XDS_MAX_NAMES",
  totalBytes: "MESH_XDS_MAX_NAME_BYTES",
} as const

const over = (value: number, limit: number): boolean => limit > 0 && value > limit

/** Why a request's names cannot be taken, checked as it is read; undefined when they can. */
export const requestNamesProblem = (
  request: DiscoveryRequest | DeltaDiscoveryRequest,
  limits: NameLimits,
): NameRefusal | undefined => {
  let count = 0
  let chars = 0
  // Names the stream would hold (unsubscribed ones are only checked for their length).
  const lists: Array<[string, ReadonlyArray<string> | undefined | null, boolean]> = [
    ["resource_names", (request as DiscoveryRequest).resource_names, true],
    ["resource_names_subscribe", (request as DeltaDiscoveryRequest).resource_names_subscribe, true],
    ["resource_names_unsubscribe", (request as DeltaDiscoveryRequest).resource_names_unsubscribe, false],
  ]
  const versions = (request as DeltaDiscoveryRequest).initial_resource_versions
  if (versions !== undefined && versions !== null)
    lists.push(["initial_resource_versions", Object.keys(versions), true])
  for (const [field, names, held] of lists) {
    if (names === undefined || names === null) continue
    for (const name of names) {
      if (name.length > MAX_RESOURCE_NAME_LENGTH)
        return {
          code: "INVALID_ARGUMENT",
          message: `a name in ${field} is ${name.length} characters long; at most ${MAX_RESOURCE_NAME_LENGTH} are accepted`,
        }
      if (!held) continue
      count++
      chars += name.length
    }
  }
  if (over(count, limits.streamNames))
    return {
      code: "RESOURCE_EXHAUSTED",
      message: `the request names ${count} resources; a stream may watch at most ${limits.streamNames} (${SETTINGS.streamNames})`,
    }
  if (over(chars, limits.streamBytes))
    return {
      code: "RESOURCE_EXHAUSTED",
      message: `the request's resource names are ${chars} characters long; a stream's names may be at most ${limits.streamBytes} (${SETTINGS.streamBytes})`,
    }
  return undefined
}

/** What a stream holds: its names and their characters. */
interface Held {
  readonly names: number
  readonly bytes: number
}

/** One stream's share of the budget. */
export interface StreamNames {
  /**
   * Takes the names the stream would watch after a request (one collection per watched type):
   * undefined when they are within the bounds (and now counted), else why not (nothing changed:
   * the stream keeps what it had, and is to be ended).
   */
  readonly update: (watched: Iterable<Iterable<string>>) => NameRefusal | undefined
  /** The stream ended: its names leave the server's total. Idempotent. */
  readonly release: () => void
}

export interface NameBudget {
  /** A new stream's share, holding nothing yet. */
  readonly open: () => StreamNames
  /** What all streams hold now. */
  readonly held: () => Held
}

export const makeNameBudget = (limits: NameLimits): NameBudget => {
  let names = 0
  let bytes = 0
  /**
   * The size of each names collection, per collection object: a watch keeps the same array or
   * set while its names do not change, so an ACK costs a lookup, not a walk over its names.
   */
  const sizes = new WeakMap<object, Held>()
  const measure = (collection: Iterable<string>): Held => {
    const known = sizes.get(collection)
    if (known !== undefined) return known
    let count = 0
    let chars = 0
    for (const name of collection) {
      count++
      chars += name.length
    }
    const held = { names: count, bytes: chars }
    sizes.set(collection, held)
    return held
  }
  return {
    held: () => ({ names, bytes }),
    open: () => {
      let mine: Held = { names: 0, bytes: 0 }
      let released = false
      return {
        update: (watched) => {
          let count = 0
          let chars = 0
          for (const collection of watched) {
            const held = measure(collection)
            count += held.names
            chars += held.bytes
          }
          // Fewer names than before is never refused.
          const grows = count > mine.names || chars > mine.bytes
          if (grows && !released) {
            if (over(count, limits.streamNames))
              return {
                code: "RESOURCE_EXHAUSTED",
                message: `the stream would watch ${count} resource names; at most ${limits.streamNames} per stream (${SETTINGS.streamNames})`,
              }
            if (over(chars, limits.streamBytes))
              return {
                code: "RESOURCE_EXHAUSTED",
                message: `the stream's resource names would be ${chars} characters long; at most ${limits.streamBytes} per stream (${SETTINGS.streamBytes})`,
              }
            if (count > mine.names && over(names - mine.names + count, limits.totalNames))
              return {
                code: "RESOURCE_EXHAUSTED",
                message: `the server's streams watch ${names} resource names; at most ${limits.totalNames} in all (${SETTINGS.totalNames})`,
              }
            if (chars > mine.bytes && over(bytes - mine.bytes + chars, limits.totalBytes))
              return {
                code: "RESOURCE_EXHAUSTED",
                message: `the server's streams watch resource names of ${bytes} characters; at most ${limits.totalBytes} in all (${SETTINGS.totalBytes})`,
              }
          }
          if (!released) {
            names += count - mine.names
            bytes += chars - mine.bytes
          }
          mine = { names: count, bytes: chars }
          return undefined
        },
        release: () => {
          if (released) return
          released = true
          names -= mine.names
          bytes -= mine.bytes
          mine = { names: 0, bytes: 0 }
        },
      }
    },
  }
}
