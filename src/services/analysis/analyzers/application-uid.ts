/**
 * Application containers must not run as UID 1337, the proxy's (MSH0144): the capture rules
 * exempt that user, so its traffic would bypass the proxy. Checked on Pods and Deployment pod
 * templates, at pod level and per container (the proxy and operator containers excepted); the
 * mesh's own control-plane objects (labelled `mesh`, or `release: mesh`) are skipped. One
 * message per offending setting, as the reference reports them.
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, num, rec, type Snapshot, str } from "../snapshot.js"
import { PROXY_CONTAINERS } from "./injection.js"

export const PROXY_UID = 1337
const EXEMPT_CONTAINERS = new Set([...PROXY_CONTAINERS, "mesh-operator", "istio-operator"])
const CONTROL_PLANE_LABEL = "mesh"

/** Whether an object belongs to the mesh's installation (the reference's control-plane test). */
export const isControlPlane = (entry: Entry): boolean =>
  entry.labels[CONTROL_PLANE_LABEL] !== undefined || entry.labels.release === CONTROL_PLANE_LABEL

const runsAsProxy = (securityContext: unknown): boolean => num(rec(securityContext).runAsUser) === PROXY_UID

const offences = (podSpec: Readonly<Record<string, unknown>>): number =>
  (runsAsProxy(podSpec.securityContext) ? 1 : 0) +
  arr(podSpec.containers)
    .map(rec)
    .filter((c) => !EXEMPT_CONTAINERS.has(str(c.name)) && runsAsProxy(c.securityContext)).length

const applicationUid = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  const check = (entry: Entry, podSpec: Readonly<Record<string, unknown>>) => {
    if (isControlPlane(entry)) return
    for (let i = offences(podSpec); i > 0; i--)
      out.push(
        message(MessageTypes.InvalidApplicationUID, entry, "User ID (UID) 1337 is reserved for the sidecar proxy."),
      )
  }
  for (const pod of snapshot.ofKind("Pod", "")) check(pod, rec(pod.body.spec))
  for (const d of snapshot.ofKind("Deployment", "apps")) check(d, rec(rec(rec(d.body.spec).template).spec))
  return out
}

export const applicationUidAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "applicationUID.Analyzer",
    description: "Checks invalid application UID",
    types: [MessageTypes.InvalidApplicationUID],
    run: applicationUid,
  },
]
