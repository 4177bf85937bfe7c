/**
 * Gateway analyzers: the selector finds gateway pods and the Services in front of them expose
 * every server port (MSH0101, MSH0162); two gateways on the same workloads and port do not claim
 * the same hosts (MSH0145); a certificate is not shared by servers of different gateways (MSH0138).
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  groupBy,
  hostCovers,
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

const meshGateways = (snapshot: Snapshot) => snapshot.ofKind("Gateway", "networking.mesh.io")

const selectorText = (selector: Readonly<Record<string, string>>): string =>
  Object.entries(selector)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(",")

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

const selectorsAndPorts = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const podsFor = gatewayPods(snapshot)
  const servicesByNamespace = groupBy(snapshot.ofKind("Service", ""), (s) => s.namespace)
  const out: Array<Message> = []
  for (const gateway of meshGateways(snapshot)) {
    const selector = rec(gateway.body.selector)
    const labels = Object.fromEntries(Object.entries(selector).filter(([, v]) => typeof v === "string")) as Record<
      string,
      string
    >
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
    const servicePorts = new Set<number>()
    for (const pod of pods)
      for (const service of servicesByNamespace.get(pod.namespace) ?? []) {
        const svcSelector = matchLabels({ matchLabels: rec(service.body.spec).selector })
        if (svcSelector === undefined || Object.keys(svcSelector).length === 0 || !selects(svcSelector, pod.labels))
          continue
        for (const p of arr(rec(service.body.spec).ports)) {
          const port = num(rec(p).port)
          if (port !== undefined) servicePorts.add(port)
        }
      }
    arr(gateway.body.servers).forEach((server, i) => {
      const port = num(rec(rec(server).port).number)
      if (port === undefined || servicePorts.has(port)) return
      out.push(
        message(
          MessageTypes.GatewayPortNotDefinedOnService,
          gateway,
          `Port ${port} defined in the gateway is not defined on the Service selecting the gateway workload (selector ${selectorText(labels)}).`,
          ["spec", "servers", i, "port"],
        ),
      )
    })
  }
  return out
}

const conflictingGateways = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const claims = groupBy(
    meshGateways(snapshot).flatMap((g) =>
      arr(g.body.servers).flatMap((server) => {
        const port = num(rec(rec(server).port).number)
        return port === undefined
          ? []
          : strs(rec(server).hosts).map((host) => ({
              gateway: g,
              port,
              host: host.includes("/") ? host.slice(host.indexOf("/") + 1) : host,
              selector: selectorText(rec(g.body.selector) as Record<string, string>),
            }))
      }),
    ),
    (c) => `${c.selector}|${c.port}`,
  )
  const out: Array<Message> = []
  const reported = new Set<Entry>()
  for (const list of claims.values()) {
    if (new Set(list.map((c) => c.gateway)).size < 2) continue
    for (const claim of list) {
      if (reported.has(claim.gateway)) continue
      const others = list.filter(
        (o) => o.gateway !== claim.gateway && (hostCovers(o.host, claim.host) || hostCovers(claim.host, o.host)),
      )
      if (others.length === 0) continue
      reported.add(claim.gateway)
      const names = [...new Set(others.map((o) => `${o.gateway.namespace}/${o.gateway.name}`))].join(",")
      out.push(
        message(
          MessageTypes.ConflictingGateways,
          claim.gateway,
          `Conflict with gateways ${names} (workload selector ${claim.selector}, port ${claim.port}, hosts ${claim.host}).`,
        ),
      )
    }
  }
  return out
}

const duplicateCertificates = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const byCert = groupBy(
    meshGateways(snapshot).flatMap((g) =>
      arr(g.body.servers).flatMap((server) => {
        const tls = rec(rec(server).tls)
        const cert =
          str(tls.credentialName) !== "" ? `${g.namespace}/${str(tls.credentialName)}` : str(tls.serverCertificate)
        return cert === "" ? [] : [{ gateway: g, cert }]
      }),
    ),
    (c) => c.cert,
  )
  const out: Array<Message> = []
  for (const list of byCert.values()) {
    const gateways = [...new Set(list.map((c) => c.gateway))]
    if (gateways.length < 2) continue
    const names = gateways.map((g) => `${g.namespace}/${g.name}`).join(", ")
    for (const g of gateways)
      out.push(
        message(
          MessageTypes.GatewayDuplicateCertificate,
          g,
          `Duplicate certificate in multiple gateways ${names} may cause 404s if HTTP/2 is enabled.`,
        ),
      )
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
    types: [MessageTypes.ConflictingGateways],
    run: conflictingGateways,
  },
  {
    name: "gateway.CertificateAnalyzer",
    description: "Checks a certificate is not used by several gateways",
    types: [MessageTypes.GatewayDuplicateCertificate],
    run: duplicateCertificates,
  },
]
