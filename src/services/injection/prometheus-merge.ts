/**
 * Metrics merging (mesh config `enablePrometheusMerge`, default on): the pod's
 * `prometheus.io/{scrape,port,path}` annotations are pointed at the agent's merged
 * `/stats/prometheus` on its status port, and the application's own scrape configuration moves
 * into `MESH_PROMETHEUS_ANNOTATIONS` (read by services/agent/status/metrics-merge.ts). Not done
 * when the pod says `prometheus.io/scrape: "false"`, opts out with `prometheus.mesh.io/merge-metrics:
 * "false"`, or already points at the status port (re-injection, or the user's own choice).
 *
 * As Prometheus itself, the reference reads each annotation under every spelling that sanitises
 * to the same label name (`prometheus.io/port`, `prometheus.io.port`, `prometheus-io/port`), and
 * all of them are replaced. `prometheus.mesh.io/scrape-targets` (`port:path,...`) lists several
 * application endpoints: the first becomes the port and path older agents scrape. A target or
 * port that is not a port, is the agent's own, or is one the data plane owns refuses the pod.
 */
import { Either } from "effect"
import { MESH_DOMAIN } from "../constants.js"
import { isObject, type Obj } from "../orchestrator/json.js"
import { boolean } from "./annotation-values.js"
import { OrchestratorNames, UPSTREAM_DOMAIN } from "./names.js"

export interface MetricsMerge {
  /** Every spelling of the prometheus annotations the pod had, removed before `annotations` are set. */
  readonly removed: ReadonlyArray<string>
  readonly annotations: Readonly<Record<string, string>>
  /** MESH_PROMETHEUS_ANNOTATIONS, when the application had a scrape configuration to keep. */
  readonly envValue: string | undefined
  readonly warnings: ReadonlyArray<string>
}

/** Prometheus' label-name sanitising: anything but [a-zA-Z0-9_] becomes `_`. */
const sanitize = (key: string): string => key.replace(/[^a-zA-Z0-9_]/g, "_")

const SCRAPE = sanitize(OrchestratorNames.prometheusScrape)
const PORT = sanitize(OrchestratorNames.prometheusPort)
const PATH = sanitize(OrchestratorNames.prometheusPath)
const TARGETS = [
  sanitize(`prometheus.${MESH_DOMAIN}/scrape-targets`),
  sanitize(`prometheus.${UPSTREAM_DOMAIN}/scrape-targets`),
]
const CLEARED = new Set([SCRAPE, PORT, PATH, ...TARGETS])

/** Ports the data plane owns: scraping them would read the proxy or agent, not the application. */
const RESERVED_PORTS: Readonly<Record<string, string>> = {
  "15000": "proxy admin",
  "15001": "outbound traffic capture",
  "15004": "discovery debug",
  "15006": "inbound traffic capture",
  "15008": "HBONE tunnel",
  "15020": "agent status / merged Prometheus",
  "15021": "proxy health",
  "15053": "DNS proxy",
  "15090": "proxy Prometheus, already merged",
}

interface ScrapeTarget {
  readonly port: string
  readonly path: string
}

/** `port:path,...`, blanks trimmed, path `/metrics` when absent; Left for an entry without a port. */
export const parseScrapeTargets = (text: string): Either.Either<ReadonlyArray<ScrapeTarget>, string> => {
  const targets: Array<ScrapeTarget> = []
  for (const raw of text.split(",")) {
    const entry = raw.trim()
    if (entry === "") continue
    const at = entry.indexOf(":")
    const port = (at < 0 ? entry : entry.slice(0, at)).trim()
    if (port === "") return Either.left(`empty port in scrape target "${entry}"`)
    const path = at < 0 ? "" : entry.slice(at + 1).trim()
    targets.push({ port, path: path === "" ? "/metrics" : path })
  }
  return Either.right(targets)
}

/** Each sanitised name's first value (annotation order), for the names metrics merging reads. */
const prometheusValues = (annotations: Readonly<Record<string, string>>): ReadonlyMap<string, string> => {
  const values = new Map<string, string>()
  for (const [key, value] of Object.entries(annotations)) {
    // Only keys that can sanitise to a prometheus name are worth the regular expression.
    if (!key.startsWith("prometheus")) continue
    const name = sanitize(key)
    if (CLEARED.has(name) && !values.has(name)) values.set(name, value)
  }
  return values
}

const checkPort = (port: string, statusPort: number, what: string): string | undefined => {
  const number = /^\d+$/.test(port) ? Number(port) : Number.NaN
  if (!Number.isInteger(number) || number < 1 || number > 65535) return `${what}: invalid port "${port}"`
  const canonical = String(number)
  if (canonical === String(statusPort)) return `${what}: port ${port} conflicts with agent port`
  const reserved = RESERVED_PORTS[canonical]
  return reserved === undefined
    ? undefined
    : `${what}: port ${port} is reserved for the mesh (${reserved}) and cannot be scraped`
}

export const metricsMerge = (
  annotations: Readonly<Record<string, string>>,
  meshConfig: Obj,
  mergeRequested: boolean,
  statusPort: number,
): Either.Either<MetricsMerge | undefined, string> => {
  const enabled = isObject(meshConfig) && meshConfig.enablePrometheusMerge !== false
  const values = prometheusValues(annotations)
  const scrape = values.get(SCRAPE)
  // An unparsable value counts as "scrape", as in the reference.
  const scrapeOff = scrape !== undefined && Either.getOrElse(boolean(scrape), () => true) === false
  if (!enabled || !mergeRequested || statusPort === 0 || scrapeOff) return Either.right(undefined)
  const port = values.get(PORT)
  if (port === String(statusPort)) return Either.right(undefined)
  const warnings: Array<string> = []
  const targetsText = TARGETS.map((name) => values.get(name)).find((v) => v !== undefined)
  let targets: ReadonlyArray<ScrapeTarget> = []
  if (targetsText !== undefined) {
    const parsed = parseScrapeTargets(targetsText)
    if (Either.isLeft(parsed)) warnings.push(`scrape-targets annotation ignored: ${parsed.left}`)
    else targets = parsed.right
  }
  const config = { scrape: scrape ?? "", path: values.get(PATH) ?? "", port: port ?? "" }
  if (targets.length > 0) {
    for (const target of targets) {
      const problem = checkPort(target.port, statusPort, "invalid prometheus scrape targets")
      if (problem !== undefined) return Either.left(problem)
    }
    // Older agents read only port and path: they scrape the first target.
    config.port = targets[0]?.port ?? ""
    config.path = targets[0]?.path ?? ""
  } else if (config.port !== "") {
    const problem = checkPort(config.port, statusPort, "invalid prometheus scrape configuration")
    if (problem !== undefined) return Either.left(problem)
  }
  const empty = config.scrape === "" && config.path === "" && config.port === "" && targets.length === 0
  return Either.right({
    removed: Object.keys(annotations).filter((key) => key.startsWith("prometheus") && CLEARED.has(sanitize(key))),
    annotations: {
      [OrchestratorNames.prometheusScrape]: "true",
      [OrchestratorNames.prometheusPort]: String(statusPort),
      [OrchestratorNames.prometheusPath]: "/stats/prometheus",
    },
    envValue: empty ? undefined : JSON.stringify(targets.length > 0 ? { ...config, targets } : config),
    warnings,
  })
}
