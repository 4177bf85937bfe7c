/**
 * The Multus networks annotation (`k8s.v1.cni.cncf.io/networks`) with a network added once, as
 * the reference's `appendMultusNetwork`: spliced into a JSON list as an object (with its
 * namespace when `network` is `<namespace>/<name>`), the rest of the text kept as written;
 * appended to a comma-separated list as written. A bracketed value that is not a JSON list of
 * networks is left alone (Multus would refuse the addition too). Used by the capture template
 * under CNI and by the ConfigMap templates' function of that name.
 */
import { isObject } from "../orchestrator/json.js"

export const appendMultusNetwork = (existing: string, network: string): string => {
  if (existing.trim() === "") return network
  const slash = network.indexOf("/")
  const [namespace, name] = slash < 0 ? ["", network] : [network.slice(0, slash), network.slice(slash + 1)]
  const close = existing.lastIndexOf("]")
  if (close >= 0) {
    let networks: unknown
    try {
      networks = JSON.parse(existing)
    } catch {
      return existing
    }
    if (!Array.isArray(networks)) return existing
    const present = networks.some(
      (n) => isObject(n) && n.name === name && (typeof n.namespace === "string" ? n.namespace : "") === namespace,
    )
    if (present) return existing
    const entry = `{"name": "${name}"${namespace === "" ? "" : `, "namespace": "${namespace}"`}}`
    // Unlike the reference, an empty list gets no leading comma (`[, {...}]` is not JSON).
    return `${existing.slice(0, close)}${networks.length > 0 ? ", " : ""}${entry}${existing.slice(close)}`
  }
  return existing.split(",").some((n) => n.trim() === network) ? existing : `${existing}, ${network}`
}
