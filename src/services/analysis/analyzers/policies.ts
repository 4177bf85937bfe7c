/**
 * ServiceEntry addresses (MSH0134) and policies that cannot take effect: workload selectors
 * that pick gateway-API gateway pods (MSH0166), port-level mTLS on ports the selected pods do not
 * expose (MSH0167).
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  type Message,
  matchLabels,
  message,
  num,
  podsByNamespace,
  rec,
  type Snapshot,
  selects,
  str,
  strs,
} from "../snapshot.js"

/**
 * Whether the mesh config has proxies capture DNS and auto-allocate addresses
 * (`MESH_META_DNS_CAPTURE` with `MESH_META_DNS_AUTO_ALLOCATE` or `PILOT_ENABLE_IP_AUTOALLOCATE`
 * in `defaultConfig.proxyMetadata`): then a ServiceEntry needs no addresses of its own.
 */
const addressesAutoAllocated = (snapshot: Snapshot): boolean => {
  const metadata = snapshot.meshConfig.defaultConfig.proxyMetadata
  return (
    metadata.MESH_META_DNS_CAPTURE === "true" &&
    (metadata.MESH_META_DNS_AUTO_ALLOCATE === "true" || metadata.PILOT_ENABLE_IP_AUTOALLOCATE === "true")
  )
}

/**
 * A ServiceEntry without addresses (its own, or allocated ones in its status) needs one for
 * each port serving TCP (or no protocol): one message per such port, as the reference reports
 * them.
 */
const addressesRequired = (snapshot: Snapshot): ReadonlyArray<Message> => {
  if (addressesAutoAllocated(snapshot)) return []
  const out: Array<Message> = []
  for (const se of snapshot.ofKind("ServiceEntry")) {
    // Addresses the control plane allocated (written to the status) count as the entry's own.
    if (strs(se.body.addresses).length > 0 || arr(se.status?.addresses).length > 0) continue
    arr(se.body.ports).forEach((p, i) => {
      const protocol = str(rec(p).protocol).toUpperCase()
      if (protocol === "" || protocol === "TCP")
        out.push(
          message(
            MessageTypes.ServiceEntryAddressesRequired,
            se,
            "ServiceEntry addresses are required for this protocol.",
            ["spec", "ports", i],
          ),
        )
    })
  }
  return out
}

/** The label the gateway-API deployment controller puts on the pods it runs. */
const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
const TARGETABLE = ["AuthorizationPolicy", "RequestAuthentication", "Telemetry", "WasmPlugin"]

/**
 * The pods a policy's selector may pick: those of its namespace, or of every namespace for a
 * policy in the mesh config's root namespace (such a policy applies mesh-wide).
 */
const candidatePods = (snapshot: Snapshot) => {
  const pods = podsByNamespace(snapshot)
  const root = snapshot.meshConfig.rootNamespace
  const all = [...pods.values()].flat()
  return (policy: Entry): ReadonlyArray<Entry> => (policy.namespace === root ? all : (pods.get(policy.namespace) ?? []))
}

const ineffectiveSelectors = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const podsOf = candidatePods(snapshot)
  const out: Array<Message> = []
  for (const kind of TARGETABLE)
    for (const policy of snapshot.ofKind(kind)) {
      const selector = matchLabels(policy.body.selector)
      if (selector === undefined || Object.keys(selector).length === 0) continue
      const gatewayPod = podsOf(policy).find(
        (p) => p.labels[GATEWAY_NAME_LABEL] !== undefined && selects(selector, p.labels),
      )
      if (gatewayPod === undefined) continue
      out.push(
        message(
          MessageTypes.IneffectiveSelector,
          policy,
          `Ineffective selector on Kubernetes Gateway ${gatewayPod.labels[GATEWAY_NAME_LABEL]}. Use the TargetRef field instead.`,
          ["spec", "selector"],
        ),
      )
    }
  return out
}

/** The container ports of a pod. */
const containerPorts = (pod: Entry): ReadonlySet<string> =>
  new Set(
    arr(rec(pod.body.spec).containers).flatMap((c) => arr(rec(c).ports).map((p) => String(num(rec(p).containerPort)))),
  )

/**
 * PeerAuthentication port-level settings name workload (container) ports: a port none of the
 * selected pods exposes has no effect (checked only when the selector matches pods of the files).
 */
const ineffectivePolicies = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const pods = podsByNamespace(snapshot)
  const out: Array<Message> = []
  for (const pa of snapshot.ofKind("PeerAuthentication")) {
    const selector = matchLabels(pa.body.selector)
    const ports = Object.keys(rec(pa.body.portLevelMtls))
    if (selector === undefined || ports.length === 0) continue
    const selected = (pods.get(pa.namespace) ?? []).filter((p) => selects(selector, p.labels))
    if (selected.length === 0) continue
    const exposed = new Set(selected.flatMap((p) => [...containerPorts(p)]))
    for (const port of ports.filter((p) => !exposed.has(p)))
      out.push(
        message(
          MessageTypes.IneffectivePolicy,
          pa,
          `The policy has no impact: port ${port} of portLevelMtls is not a port of the selected workloads.`,
          ["spec", "portLevelMtls", port],
        ),
      )
  }
  return out
}

export const policyAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "serviceentry.Analyzer",
    description: "Checks ServiceEntries of address-dependent protocols have addresses",
    types: [MessageTypes.ServiceEntryAddressesRequired],
    run: addressesRequired,
  },
  {
    name: "k8sgateway.SelectorAnalyzer",
    description: "Checks policies do not select gateway-API gateway pods by label",
    types: [MessageTypes.IneffectiveSelector],
    run: ineffectiveSelectors,
  },
  {
    name: "peerauthentication.IneffectivePolicyAnalyzer",
    description:
      "Checks PeerAuthentication port-level settings can apply (this mesh only: not run unless named with --analyzer)",
    types: [MessageTypes.IneffectivePolicy],
    run: ineffectivePolicies,
  },
]
