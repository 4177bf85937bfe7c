/**
 * Host lookups that honour exportTo (issue 35 group 3). A ServiceEntry's hosts are visible where
 * its `exportTo` sends them (all namespaces when empty or with `*`, `.` for its own namespace);
 * a Service where its `networking.mesh.io/exportTo` annotation sends it (all when absent). A
 * resource in namespace N that names a host finds: what is exported to all namespaces; else
 * what is exported to N when the resource has no exportTo of its own, or to one of the
 * namespaces its own exportTo names; else a visible wildcard host covering it. These are the
 * reference's rules for destination lookups.
 */
import { MESH_DOMAIN } from "../constants.js"
import { arr, fqdn, num, rec, type Snapshot, stringMap, strs } from "./snapshot.js"

export const ALL_NAMESPACES = "*"
export const LOCAL_NAMESPACE = "."

/** What a host resolves to: the ports it serves, and a ServiceEntry's workload selector labels. */
export interface HostTarget {
  readonly ports: ReadonlyArray<number>
  readonly workloadLabels: Readonly<Record<string, string>>
}

export type HostLookup = (
  sourceNamespace: string,
  exportTo: ReadonlyArray<string>,
  host: string,
) => HostTarget | undefined

/** The namespaces an `exportTo` list reaches: `*` alone when it reaches all of them. */
export const exportScopes = (exportTo: ReadonlyArray<string>, namespace: string): ReadonlyArray<string> => {
  if (exportTo.length === 0 || exportTo.includes(ALL_NAMESPACES)) return [ALL_NAMESPACES]
  return [...new Set(exportTo.map((e) => (e === LOCAL_NAMESPACE ? namespace : e)))]
}

export const EXPORT_TO_ANNOTATION = `networking.${MESH_DOMAIN}/exportTo`

/** A Service's annotation as an exportTo list (comma-separated, trimmed). */
export const serviceExportTo = (annotations: Readonly<Record<string, string>>): ReadonlyArray<string> => {
  const value = annotations[EXPORT_TO_ANNOTATION]
  if (value === undefined || value === "") return []
  return value.split(",").map((s) => s.trim())
}

export const hostLookup = (snapshot: Snapshot): HostLookup => {
  const exact = new Map<string, HostTarget>()
  const wildcards: Array<{ readonly scope: string; readonly suffix: string; readonly target: HostTarget }> = []
  const add = (scope: string, host: string, target: HostTarget) => {
    if (host.startsWith("*")) wildcards.push({ scope, suffix: host.slice(1), target })
    exact.set(`${scope}/${host}`, target)
  }
  for (const se of snapshot.ofKind("ServiceEntry")) {
    const target = {
      ports: arr(se.body.ports).flatMap((p) => num(rec(p).number) ?? []),
      workloadLabels: stringMap(rec(se.body.workloadSelector).labels),
    }
    const scopes = exportScopes(strs(se.body.exportTo), se.namespace)
    for (const h of strs(se.body.hosts))
      for (const scope of scopes) add(scope, fqdn(h, se.namespace, snapshot.domainSuffix), target)
  }
  // Services come after ServiceEntries: a Service of the same host is what is found.
  for (const service of snapshot.ofKind("Service", "")) {
    const target = {
      ports: arr(rec(service.body.spec).ports).flatMap((p) => num(rec(p).port) ?? []),
      workloadLabels: {},
    }
    const host = `${service.name}.${service.namespace}.svc.${snapshot.domainSuffix}`
    for (const scope of exportScopes(serviceExportTo(service.annotations), service.namespace)) add(scope, host, target)
  }
  return (sourceNamespace, exportTo, host) => {
    const name = fqdn(host, sourceNamespace, snapshot.domainSuffix)
    const global = exact.get(`${ALL_NAMESPACES}/${name}`)
    if (global !== undefined) return global
    const scopes =
      exportTo.length === 0 ? [sourceNamespace] : exportTo.map((e) => (e === LOCAL_NAMESPACE ? sourceNamespace : e))
    for (const scope of scopes) {
      const found = exact.get(`${scope}/${name}`)
      if (found !== undefined) return found
    }
    const bare = name.startsWith("*") ? name.slice(1) : name
    for (const w of wildcards)
      if ((w.scope === ALL_NAMESPACES || w.scope === sourceNamespace) && bare.endsWith(w.suffix)) return w.target
    return undefined
  }
}
