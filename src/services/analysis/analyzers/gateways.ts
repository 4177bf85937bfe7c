/**
 * Gateway analyzers, with the reference's rules: the selector finds gateway pods and the
 * Services in front of them serve every server port (MSH0101, MSH0162); two gateways on the
 * same workloads and port do not claim the same host (MSH0145); a certificate is not shared by
 * gateways on overlapping workloads (MSH0138).
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  groupBy,
  type Message,
  message,
  num,
  podsByNamespace,
  rec,
  type Snapshot,
  selects,
  str,
  stringMap,
  strs,
} from "../snapshot.js"
import { selectorString as selectorText } from "./workload-selectors.js"

const meshGateways = (snapshot: Snapshot) => snapshot.ofKind("Gateway", "networking.mesh.io")

/** Pods a gateway selects: all namespaces (the reference's default), labels matched per pod. */
const gatewayPods = (snapshot: Snapshot) => {
  const all = [...podsByNamespace(snapshot).values()].flat()
  const cache = new Map<string, ReadonlyArray<Entry>>()
  return (selector: Readonly<Record<string, string>>): ReadonlyArray<Entry> => {
    const key = selectorText(selector)
    let pods = cache.get(key)
    if (pods === undefined) {
      pods = all.filter((p) => selects(selector, p.labels))
      cache.set(key, pods)
    }
    return pods
  }
}

/**
 * A Gateway's selector must match a pod; each server port must be served by the Services
 * selecting those pods (in the pod's namespace): a TCP port matches by its target port (its
 * port when the target is unset or named) or by its own port number (MSH0162).
 */
const selectorsAndPorts = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const podsFor = gatewayPods(snapshot)
  const servicesByNamespace = groupBy(snapshot.ofKind("Service", ""), (s) => s.namespace)
  const out: Array<Message> = []
  for (const gateway of meshGateways(snapshot)) {
    const labels = stringMap(gateway.body.selector)
    const pods = podsFor(labels)
    if (pods.length === 0) {
      out.push(
        message(
          MessageTypes.ReferencedResourceNotFound,
          gateway,
          `Referenced selector not found: "${selectorText(labels)}"`,
          ["spec", "selector"],
        ),
      )
      continue
    }
    const served = new Set<number>()
    for (const pod of pods)
      for (const service of servicesByNamespace.get(pod.namespace) ?? []) {
        if (!selects(stringMap(rec(service.body.spec).selector), pod.labels)) continue
        for (const p of arr(rec(service.body.spec).ports).map(rec)) {
          if (str(p.protocol) !== "TCP") continue
          const port = num(p.port)
          const target = num(p.targetPort) ?? 0
          if (target !== 0) served.add(target)
          if (port !== undefined) served.add(port)
        }
      }
    arr(gateway.body.servers).forEach((server, i) => {
      const port = num(rec(rec(server).port).number)
      if (port === undefined || served.has(port)) return
      out.push(
        message(
          MessageTypes.GatewayPortNotDefinedOnService,
          gateway,
          `The gateway is listening on a target port (port ${port}) that is not defined in the Service associated with its workload instances (Pod selector ${selectorText(labels)}). If you need to access the gateway port through the gateway Service, it will not be available.`,
          ["spec", "servers", i, "port"],
        ),
      )
    })
  }
  return out
}

/** `k=v,...` as a label set (the reference compares selectors through their text). */
const parseSelectorText = (text: string): Readonly<Record<string, string>> =>
  Object.fromEntries(
    text
      .split(",")
      .map((pair) => pair.split("="))
      .filter((kv): kv is [string, string] => kv.length === 2),
  )

/**
 * Gateways on the same workloads and port must not claim the same host with the same bind
 * (MSH0145, per server). Workloads are the same when the selectors are equal, or one's text
 * contains the other's and some pod matches both. Hosts compare as written.
 */
const conflictingGateways = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const gateways = meshGateways(snapshot)
  const pods = snapshot.ofKind("Pod", "")
  // selector → port → gateway → host → bind
  const claims = new Map<string, Map<string, Map<Entry, Map<string, string>>>>()
  for (const g of gateways) {
    const selector = selectorText(stringMap(g.body.selector))
    const byPort = claims.get(selector) ?? new Map<string, Map<Entry, Map<string, string>>>()
    claims.set(selector, byPort)
    for (const server of arr(g.body.servers).map(rec)) {
      const port = String(num(rec(server.port).number) ?? 0)
      const byGateway = byPort.get(port) ?? new Map<Entry, Map<string, string>>()
      byPort.set(port, byGateway)
      byGateway.set(g, new Map(strs(server.hosts).map((h) => [h, str(server.bind)])))
    }
  }
  const out: Array<Message> = []
  for (const g of gateways) {
    const labels = stringMap(g.body.selector)
    const own = selectorText(labels)
    const same = [...claims.keys()].filter(
      (other) =>
        other === own ||
        ((other.includes(own) || own.includes(other)) &&
          pods.some((p) => selects(labels, p.labels) && selects(parseSelectorText(other), p.labels))),
    )
    if (own !== "" && same.length === 0) {
      out.push(
        message(MessageTypes.ReferencedResourceNotFound, g, `Referenced selector not found: "${own}"`, [
          "spec",
          "selector",
        ]),
      )
      continue
    }
    for (const server of arr(g.body.servers).map(rec)) {
      const port = String(num(rec(server.port).number) ?? 0)
      const hosts = strs(server.hosts)
      const bind = str(server.bind)
      const others = new Set<string>()
      for (const selector of same)
        for (const [other, known] of claims.get(selector)?.get(port) ?? [])
          if (other !== g && hosts.some((h) => known.get(h) === bind)) others.add(`${other.namespace}/${other.name}`)
      if (others.size === 0) continue
      out.push(
        message(
          MessageTypes.ConflictingGateways,
          g,
          `Conflict with gateways ${[...others].sort().join(",")} (workload selector ${own}, port ${port}, hosts ${hosts.join(",")}).`,
        ),
      )
    }
  }
  return out
}

/** Whether two servers' TLS settings name the same certificate (a credential, or the same file pair). */
const sameCertificate = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean => {
  const [ca, cb] = [str(a.credentialName), str(b.credentialName)]
  if (ca !== "" || cb !== "") return ca !== "" && ca === cb
  const [sa, sb] = [str(a.serverCertificate), str(b.serverCertificate)]
  const [ka, kb] = [str(a.privateKey), str(b.privateKey)]
  return sa !== "" && sa === sb && ka !== "" && ka === kb
}

/**
 * A certificate shared by servers of Gateways on overlapping workloads (the other Gateway's
 * selector includes every label of this one's; an empty selector includes all): MSH0138 on this
 * Gateway, naming both.
 */
const duplicateCertificates = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const gateways = meshGateways(snapshot)
  const out: Array<Message> = []
  for (const g of gateways) {
    const selector = stringMap(g.body.selector)
    const tls = arr(g.body.servers).flatMap((s) => (rec(s).tls === undefined ? [] : [rec(rec(s).tls)]))
    if (tls.length === 0) continue
    for (const other of gateways) {
      if (other === g || !selects(selector, stringMap(other.body.selector))) continue
      const otherTls = arr(other.body.servers).flatMap((s) => (rec(s).tls === undefined ? [] : [rec(rec(s).tls)]))
      if (!tls.some((a) => otherTls.some((b) => sameCertificate(a, b)))) continue
      out.push(
        message(
          MessageTypes.GatewayDuplicateCertificate,
          g,
          `Duplicate certificate in multiple gateways [${g.namespace}/${g.name} ${other.namespace}/${other.name}] may cause 404s if clients re-use HTTP2 connections.`,
          ["metadata", "name"],
        ),
      )
    }
  }
  return out
}

export const gatewayAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "gateway.IngressGatewayPortAnalyzer",
    description: "Checks a gateway's selector matches workloads and its ports are exposed by their Services",
    types: [MessageTypes.ReferencedResourceNotFound, MessageTypes.GatewayPortNotDefinedOnService],
    run: selectorsAndPorts,
  },
  {
    name: "gateway.ConflictingGatewayAnalyzer",
    description: "Checks gateways on the same workloads and port do not claim the same hosts",
    types: [MessageTypes.ConflictingGateways, MessageTypes.ReferencedResourceNotFound],
    run: conflictingGateways,
  },
  {
    name: "gateway.CertificateAnalyzer",
    description: "Checks a certificate is not used by several gateways",
    types: [MessageTypes.GatewayDuplicateCertificate],
    run: duplicateCertificates,
  },
]
