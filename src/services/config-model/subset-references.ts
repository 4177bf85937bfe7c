/**
 * A cross-resource check, as the reference's analyzer makes it ("referenced host+subset in
 * destinationrule not found"): every VirtualService destination that names a subset needs a
 * DestinationRule for that host, visible from the VirtualService's namespace, that defines the
 * subset. Each resource validates on its own, so nothing else catches a typo'd or forgotten
 * subset — and a proxyless client then fails every request routed to it (its cluster does not
 * exist), which for a weighted split is a share of all traffic.
 *
 * These are warnings, not errors: the config is served as it is (the DestinationRule may come
 * later). `meshctl validate` prints them apart from errors and exits 0; the discovery server
 * logs them (scope `analysis`) and shows them at `/debug/config_warnings`.
 */
import type { ConfigResource, ValidationIssue } from "./resource.js"
import type { Destination, VirtualServiceSpec } from "./schemas/virtual-service.js"
import { isKind } from "./specs.js"

/** A short host is relative to the resource's namespace, as the reference resolves it. */
const fqdn = (host: string, namespace: string, domainSuffix: string): string =>
  host.includes(".") || host.includes("*") ? host : `${host}.${namespace}.svc.${domainSuffix}`

/** Whether a DestinationRule host (exact, `*.suffix` or `*`) covers a destination host. */
const hostCovers = (ruleHost: string, host: string): boolean =>
  ruleHost === host || ruleHost === "*" || (ruleHost.startsWith("*.") && host.endsWith(ruleHost.slice(1)))

/** Whether a resource with this `exportTo` in `owner` is visible from `namespace`. */
const visibleFrom = (exportTo: ReadonlyArray<string>, owner: string, namespace: string): boolean =>
  exportTo.length === 0 || exportTo.some((e) => e === "*" || e === namespace || (e === "." && owner === namespace))

interface RuleSubsets {
  readonly host: string
  readonly namespace: string
  readonly exportTo: ReadonlyArray<string>
  readonly subsets: ReadonlySet<string>
}

/** Where destinations sit in a VirtualService spec, as field paths. */
const destinations = (
  spec: VirtualServiceSpec,
): ReadonlyArray<{ readonly path: string; readonly destination: Destination }> => {
  const out: Array<{ path: string; destination: Destination }> = []
  const routes = (
    section: "http" | "tcp" | "tls",
    i: number,
    route: ReadonlyArray<{ readonly destination: Destination }> | undefined,
  ): void => {
    route?.forEach(({ destination }, j) => {
      out.push({ path: `spec.${section}[${i}].route[${j}].destination`, destination })
    })
  }
  spec.http?.forEach((http, i) => {
    routes("http", i, http.route)
    if (http.mirror !== undefined) out.push({ path: `spec.http[${i}].mirror`, destination: http.mirror })
    http.mirrors?.forEach(({ destination }, j) => {
      out.push({ path: `spec.http[${i}].mirrors[${j}].destination`, destination })
    })
  })
  spec.tcp?.forEach((tcp, i) => {
    routes("tcp", i, tcp.route)
  })
  spec.tls?.forEach((tls, i) => {
    routes("tls", i, tls.route)
  })
  return out
}

/**
 * The route destinations of `resources`' VirtualServices whose subset no DestinationRule in
 * `resources` defines, one warning each (with file and document when the resource has them).
 */
export const undefinedSubsetWarnings = (
  resources: ReadonlyArray<ConfigResource>,
  domainSuffix = "cluster.local",
): ReadonlyArray<ValidationIssue> => {
  // By exact host, and the wildcard ones apart: a large mesh checks each destination cheaply.
  const exact = new Map<string, Array<RuleSubsets>>()
  const wildcards: Array<RuleSubsets> = []
  for (const r of resources) {
    if (!isKind(r, "DestinationRule") || r.spec.host === "") continue
    const rule: RuleSubsets = {
      host: fqdn(r.spec.host, r.meta.namespace, domainSuffix),
      namespace: r.meta.namespace,
      exportTo: r.spec.exportTo ?? [],
      subsets: new Set((r.spec.subsets ?? []).map((s) => s.name)),
    }
    if (rule.host.includes("*")) wildcards.push(rule)
    else exact.set(rule.host, [...(exact.get(rule.host) ?? []), rule])
  }
  const warnings: Array<ValidationIssue> = []
  for (const r of resources) {
    if (!isKind(r, "VirtualService")) continue
    for (const { path, destination } of destinations(r.spec)) {
      const subset = destination.subset
      if (subset === undefined || subset === "") continue
      const target = fqdn(destination.host, r.meta.namespace, domainSuffix)
      const covering = [
        ...(exact.get(target) ?? []),
        ...wildcards.filter((rule) => hostCovers(rule.host, target)),
      ].filter((rule) => visibleFrom(rule.exportTo, rule.namespace, r.meta.namespace))
      if (covering.some((rule) => rule.subsets.has(subset))) continue
      const defined = [...new Set(covering.flatMap((rule) => [...rule.subsets]))].sort()
      warnings.push({
        file: r.source?.file ?? "",
        documentIndex: r.source?.documentIndex ?? 0,
        kind: r.kind,
        namespace: r.meta.namespace,
        name: r.meta.name,
        path: `${path}.subset`,
        message:
          covering.length === 0
            ? `referenced host+subset not found: no DestinationRule for host ${target} defines subset "${subset}" (requests routed there fail)`
            : `referenced host+subset not found: the DestinationRules for host ${target} define no subset "${subset}" (subsets: ${defined.length === 0 ? "none" : defined.join(", ")}; requests routed there fail)`,
      })
    }
  }
  return warnings
}

/** A warning as one line: `<file> document <n>` only when the resource came from a file. */
export const formatWarning = (issue: ValidationIssue): string => {
  const where = issue.file === "" ? "" : `${issue.file} document ${issue.documentIndex} `
  const what = `${issue.kind ?? ""} ${issue.namespace ?? ""}/${issue.name ?? ""}`.trim()
  return `${where}${what}: field ${issue.path}: ${issue.message}`
}
