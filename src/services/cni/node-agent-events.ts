/**
 * What the CNI plugin tells install-cni's node agent about an ambient pod, over the agent's
 * Unix socket (`<cni-agent-run-dir>/pluginevent.sock`, HTTP as in the reference: POST /cmdadd,
 * and POST /cmddel, which the reference does not have because its agent follows pod deletions
 * through an informer). The plugin has just read the pod from the API server, so the event
 * carries the pod's uid, service account and the annotations that change its redirection; the
 * agent trusts it (only root reaches the socket's directory on the node). Bodies are bounded
 * and every field is checked before it is used.
 */
import { Either, ParseResult, Schema } from "effect"
import { InpodAnnotations } from "./inpod-rules.js"

export const PLUGIN_EVENT_SOCKET = "pluginevent.sock"
export const AddEventPath = "/cmdadd"
export const DelEventPath = "/cmddel"
/** A larger body is refused (413) unread. */
export const MAX_EVENT_BYTES = 64 * 1024
/** The plugin waits at most this long for the agent (the reference's client timeout). */
export const EVENT_TIMEOUT_MILLIS = 5000

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(253))
const Text = Schema.String.pipe(Schema.maxLength(1024))

export const AddEvent = Schema.Struct({
  /** The sandbox's network namespace path (CNI_NETNS). */
  netns: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)),
  containerId: Name,
  podName: Name,
  podNamespace: Name,
  podUid: Name,
  serviceAccount: Schema.String.pipe(Schema.maxLength(253)),
  /** The pod's addresses from the previous plugin's result. */
  ips: Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(16)),
  /** Only the annotations in InpodAnnotations are sent. */
  annotations: Schema.Record({ key: Text, value: Text }),
})
export type AddEvent = typeof AddEvent.Type

export const DelEvent = Schema.Struct({
  containerId: Name,
  podName: Schema.String.pipe(Schema.maxLength(253)),
  podNamespace: Schema.String.pipe(Schema.maxLength(253)),
})
export type DelEvent = typeof DelEvent.Type

/** The annotations the agent reads, picked from the pod's. */
export const redirectionAnnotations = (
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> => {
  const picked: Record<string, string> = {}
  for (const key of Object.values(InpodAnnotations)) {
    const value = annotations?.[key]
    if (value !== undefined) picked[key] = value.slice(0, 1024)
  }
  return picked
}

const decodeWith =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (text: string): Either.Either<A, string> => {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      return Either.left(`not JSON: ${(error as Error).message}`)
    }
    return Either.mapLeft(Schema.decodeUnknownEither(schema)(parsed), (error) =>
      ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 1024),
    )
  }

export const decodeAddEvent = decodeWith(AddEvent)
export const decodeDelEvent = decodeWith(DelEvent)
