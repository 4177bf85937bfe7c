/**
 * `meshctl proxy-config` against a running proxy (loaded only without `--file`). The reference
 * port-forwards to the pod through the orchestrator API; the fake API server of the tests has no
 * port-forward, so this reaches the proxy admin port (`--proxy-admin-port`) at the pod's IP
 * (`status.podIP` from the orchestrator) directly — which works wherever pod IPs are routable
 * from here (inside the cluster network, or a flat test network). Pods are named
 * `[pod/]<name>[.<namespace>]`; the namespace defaults to `-n`, else `default`.
 */
import { Data, Duration, Effect } from "effect"
import type { OrchPod } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"
import { parseConfigDump } from "../../../services/proxy-config/dump.js"
import { rootCaOf } from "../../../services/proxy-config/secrets.js"
import type { GlobalOptions } from "../global-options.js"
import { orchestratorClient } from "../orchestrator-access.js"
import type { Flags } from "./proxy-config-options.js"

export class ProxyUnreachable extends Data.TaggedError("ProxyUnreachable")<{ readonly message: string }> {}

const fail = (message: string) => new ProxyUnreachable({ message })

export interface PodRef {
  readonly name: string
  readonly namespace: string
}

const POD_TYPES = new Set(["pod", "pods", "po"])

/** `[<type>/]<name>[.<namespace>]`: the namespace after the last dot, else `-n`, else `default`. */
export const parsePodRef = (text: string, defaultNamespace: string): PodRef | string => {
  const slash = text.indexOf("/")
  const type = slash < 0 ? "pod" : text.slice(0, slash).toLowerCase()
  if (!POD_TYPES.has(type)) return `unsupported resource type "${type}": name a pod ([pod/]<name>[.<namespace>])`
  const rest = slash < 0 ? text : text.slice(slash + 1)
  const dot = rest.lastIndexOf(".")
  const namespace = dot > 0 ? rest.slice(dot + 1) : defaultNamespace || "default"
  const name = dot > 0 ? rest.slice(0, dot) : rest
  return name === "" ? `invalid pod reference "${text}"` : { name, namespace }
}

const podIp = (pod: OrchPod): string | undefined => pod.status?.podIP ?? pod.status?.podIPs?.[0]?.ip

const hostOf = (ip: string) => (ip.includes(":") ? `[${ip}]` : ip)

/** One admin request to the proxy at `ip`; non-2xx answers are errors carrying the body (node-proxy-config uses it too). */
export const adminRequest = (
  ip: string,
  port: number,
  method: "GET" | "POST",
  path: string,
  timeout: Duration.Duration,
) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`http://${hostOf(ip)}:${port}${path}`, {
        method,
        signal: AbortSignal.any([signal, AbortSignal.timeout(Duration.toMillis(timeout))]),
      })
      const body = await response.text()
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${body.trim()}`)
      return body
    },
    catch: (e) => fail(`proxy admin ${hostOf(ip)}:${port}${path}: ${(e as Error).message}`),
  })

const withClient = <A>(
  global: GlobalOptions,
  use: (client: Effect.Effect.Success<ReturnType<typeof orchestratorClient>>) => Effect.Effect<A, ProxyUnreachable>,
) => Effect.scoped(Effect.flatMap(orchestratorClient(global).pipe(Effect.mapError((e) => fail(e.message))), use))

type Client = Effect.Effect.Success<ReturnType<typeof orchestratorClient>>

const findPod = (client: Client, ref: PodRef) =>
  client.get<OrchPod>(Resources.pods, ref.namespace, ref.name).pipe(
    Effect.mapError((e) =>
      fail(
        e.notFound
          ? `pod ${ref.name}.${ref.namespace} not found`
          : `cannot get pod ${ref.name}.${ref.namespace}: ${e.message}`,
      ),
    ),
    Effect.flatMap((pod) => {
      const ip = podIp(pod)
      return ip === undefined ? Effect.fail(fail(`pod ${ref.name}.${ref.namespace} has no IP yet`)) : Effect.succeed(ip)
    }),
  )

const resolve = (global: GlobalOptions, text: string) => {
  const ref = parsePodRef(text, global.namespace)
  return typeof ref === "string" ? Effect.fail(fail(ref)) : Effect.succeed(ref)
}

/** The body of an admin request to the proxy of one pod. */
export const fetchFromProxy = (
  global: GlobalOptions,
  podText: string,
  port: number,
  method: "GET" | "POST",
  path: string,
) =>
  Effect.flatMap(resolve(global, podText), (ref) =>
    withClient(global, (client) =>
      Effect.flatMap(findPod(client, ref), (ip) => adminRequest(ip, port, method, path, global.orchclientTimeout)),
    ),
  )

const LEVELS = new Set(["trace", "debug", "info", "warning", "warn", "error", "critical", "off"])

/** `--level`: one level for every logger, or `logger:level` pairs; the admin queries to send. */
export const logLevelQueries = (level: string): ReadonlyArray<string> | string => {
  const queries: Array<string> = []
  for (const item of level
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")) {
    const colon = item.lastIndexOf(":")
    const [logger, value] = colon < 0 ? ["", item] : [item.slice(0, colon), item.slice(colon + 1)]
    if (!LEVELS.has(value)) return `unrecognized logging level: ${value}`
    queries.push(logger === "" ? `level=${value}` : `${encodeURIComponent(logger)}=${value}`)
  }
  return queries
}

/** `proxy-config log`: reset and/or set levels, then show the proxy's loggers; per pod with `-l`. */
export const runLog = (flags: Flags<"log">, podText: string) =>
  Effect.gen(function* () {
    if ((podText === "") === (flags.selector === "")) {
      return yield* fail("log requires a pod or --selector/-l (one of them)")
    }
    const queries = logLevelQueries(flags.level)
    if (typeof queries === "string") return yield* fail(queries)
    const steps = [...(flags.reset ? ["level=warning"] : []), ...queries]
    return yield* withClient(flags.global, (client) =>
      Effect.gen(function* () {
        const targets: Array<{ readonly label: string; readonly ip: string }> = []
        if (podText !== "") {
          const ref = yield* resolve(flags.global, podText)
          targets.push({ label: `${ref.name}.${ref.namespace}`, ip: yield* findPod(client, ref) })
        } else {
          const namespace = flags.global.namespace || "default"
          const page = yield* client
            .list<OrchPod>(Resources.pods, { namespace, labelSelector: flags.selector })
            .pipe(Effect.mapError((e) => fail(`cannot list pods: ${e.message}`)))
          for (const pod of page.items) {
            const ip = podIp(pod)
            if (ip !== undefined) targets.push({ label: `${pod.metadata.name}.${namespace}`, ip })
          }
          if (targets.length === 0) return yield* fail(`no running pods match ${flags.selector} in ${namespace}`)
        }
        const out: Array<string> = []
        for (const target of targets) {
          let last = ""
          for (const step of steps.length === 0 ? [""] : steps) {
            last = yield* adminRequest(
              target.ip,
              flags.proxyAdminPort,
              "POST",
              step === "" ? "/logging" : `/logging?${step}`,
              flags.global.orchclientTimeout,
            )
          }
          out.push(targets.length > 1 ? `${target.label}:\n${last}` : last)
        }
        return out.join("")
      }),
    )
  })

/** `proxy-config rootca-compare`: whether two pods' proxies trust the same root certificate. */
export const compareRootCAs = (flags: Flags<"rootcaCompare">, pods: readonly [string, string]) =>
  Effect.gen(function* () {
    const roots: Array<string> = []
    const labels: Array<string> = []
    for (const podText of pods) {
      const ref = yield* resolve(flags.global, podText)
      labels.push(`${ref.name}.${ref.namespace}:${flags.proxyAdminPort}`)
      const text = yield* fetchFromProxy(flags.global, podText, flags.proxyAdminPort, "GET", "/config_dump")
      const dump = parseConfigDump(text)
      if (dump._tag === "Left") return yield* fail(`config dump of ${podText}: ${dump.left}`)
      const root = rootCaOf(dump.right)
      if (root === undefined) return yield* fail(`the proxy of ${podText} has no ROOTCA secret`)
      roots.push(root)
    }
    const same = roots[0] === roots[1]
    const both = `Both [${labels[0]}] and [${labels[1]}]`
    return same
      ? { same, message: `${both} have the identical ROOTCA, theoretically the connectivity between them is available` }
      : {
          same,
          message: `${both} have the non identical ROOTCA, theoretically the connectivity between them is unavailable`,
        }
  })
