/**
 * Where each artifact sits in the bug-report archive. Everything is under `bug-report/`:
 *
 *   bug-report/cluster/{version.json,nodes.yaml,namespaces.yaml}    orchestrator information
 *   bug-report/versions.json                                          `meshctl version` information
 *   bug-report/mesh/{resources.yaml,configmaps.yaml,secrets.yaml}     the mesh namespace's config
 *   bug-report/meshd/<ns>/<pod>/{syncz.json,configz.json,config_dump/<proxy>.json}
 *   bug-report/pods/<ns>/<pod>/pod.yaml                               every selected pod
 *   bug-report/pods/<ns>/<pod>/<container>.log                        its selected containers' logs
 *   bug-report/pods/<ns>/<pod>/proxy/{config_dump.json,stats}         sidecar admin output
 *   bug-report/important-logs.txt                                     the importance summary
 *   bug-report/errors.txt                                             what could not be collected
 */

export const ROOT = "bug-report"
export const ARCHIVE_NAME = "bug-report.tar.gz"

/** Path segments are names of orchestrator objects; anything else is made safe. */
const safe = (segment: string): string => {
  const cleaned = segment.replace(/[^A-Za-z0-9._-]/g, "_")
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "_" : cleaned
}

export const Paths = {
  clusterVersion: `${ROOT}/cluster/version.json`,
  nodes: `${ROOT}/cluster/nodes.yaml`,
  namespaces: `${ROOT}/cluster/namespaces.yaml`,
  versions: `${ROOT}/versions.json`,
  meshResources: `${ROOT}/mesh/resources.yaml`,
  meshConfigMaps: `${ROOT}/mesh/configmaps.yaml`,
  meshSecrets: `${ROOT}/mesh/secrets.yaml`,
  importantLogs: `${ROOT}/important-logs.txt`,
  errors: `${ROOT}/errors.txt`,
  pod: (namespace: string, pod: string) => `${ROOT}/pods/${safe(namespace)}/${safe(pod)}/pod.yaml`,
  containerLog: (namespace: string, pod: string, container: string) =>
    `${ROOT}/pods/${safe(namespace)}/${safe(pod)}/${safe(container)}.log`,
  proxyConfigDump: (namespace: string, pod: string) =>
    `${ROOT}/pods/${safe(namespace)}/${safe(pod)}/proxy/config_dump.json`,
  proxyStats: (namespace: string, pod: string) => `${ROOT}/pods/${safe(namespace)}/${safe(pod)}/proxy/stats`,
  controlPlane: (namespace: string, pod: string, what: "syncz" | "configz") =>
    `${ROOT}/meshd/${safe(namespace)}/${safe(pod)}/${what}.json`,
  controlPlaneConfigDump: (namespace: string, pod: string, proxy: string) =>
    `${ROOT}/meshd/${safe(namespace)}/${safe(pod)}/config_dump/${safe(proxy)}.json`,
} as const
