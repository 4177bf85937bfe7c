/**
 * Which `node` an ADS stream's first request must carry, as the reference checks it before it
 * serves anything: a node with a non-empty id of the form `type~ip~id~domain`, whose type is a
 * proxy type and whose ip is an IP address (unless the INSTANCE_IPS metadata lists the
 * addresses). A stream whose first request fails is refused with INVALID_ARGUMENT.
 */
import { isIP } from "node:net"
import type { Node } from "./messages.js"
import { quoted } from "./request-limits.js"

/** The reference's application node types. */
export const NODE_TYPES: ReadonlyArray<string> = ["sidecar", "router", "waypoint", "ztunnel"]

/**
 * Longest node id served. The reference has no such limit, but a real id (a pod name, a
 * namespace and a DNS domain) is a few hundred characters at most, and the id is logged, shown
 * in `/debug/syncz` and part of it becomes a metric label.
 */
export const MAX_NODE_ID_LENGTH = 1024

/** Why the node of a stream's first request cannot be served; undefined when it can. */
export const nodeProblem = (node: Node | null | undefined, metadata: Readonly<Record<string, unknown>>) => {
  const id = node?.id ?? ""
  if (node === undefined || node === null || id === "") return "missing node information"
  if (id.length > MAX_NODE_ID_LENGTH)
    return `node id is ${id.length} characters long; at most ${MAX_NODE_ID_LENGTH} are accepted`
  const parts = id.split("~")
  if (parts.length !== 4) return `missing parts in the service node ${quoted(id)}: expected type~ip~id~domain`
  const [type, ip] = parts as [string, string, string, string]
  if (!NODE_TYPES.includes(type))
    return `invalid node type (valid types: ${NODE_TYPES.join(", ")}) in the service node ${quoted(id)}`
  const instanceIps = typeof metadata.INSTANCE_IPS === "string" ? metadata.INSTANCE_IPS : ""
  if (instanceIps === "" && isIP(ip) === 0) return `invalid IP address ${quoted(ip)} in the service node ${quoted(id)}`
  return undefined
}

/** The `id` part of a valid node id (`pod.namespace`), as the reference names a proxy in metrics. */
export const nodeName = (id: string): string => id.split("~")[2] ?? id
