/**
 * What `meshctl bug-report` does once its flags are read (loaded lazily). Orchestrator objects
 * come through the orchestrator client, pod logs as text (orchestrator-text.ts); sidecars are
 * asked at their pod IP on the proxy admin port and control planes on their monitoring port, as
 * proxy-config and proxy-status do (see proxy-config-live.ts, control-plane-access.ts for why).
 * `MESHCTL_PROXY_ADMIN_PORT` overrides the admin port (15000) for setups where the proxies are
 * published elsewhere (and for tests). A failed item does not fail the report: it is listed in
 * errors.txt and printed. On `--timeout` the artifacts captured so far are archived.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Console, Data, Duration, Effect, Option } from "effect"
import { dump, load } from "js-yaml"
import { containerSelected, deploymentOf, podSelected } from "../../../services/bug-report/filter.js"
import {
  importantLogsSummary,
  logImportance,
  type RankedLog,
  rankLogs,
} from "../../../services/bug-report/importance.js"
import { ARCHIVE_NAME, Paths } from "../../../services/bug-report/layout.js"
import { redactSecret } from "../../../services/bug-report/redact.js"
import {
  type BugReportFlags,
  type BugReportSettings,
  overlayConfigFile,
  resolveSettings,
  trimAfter,
} from "../../../services/bug-report/settings.js"
import { buildInfo } from "../../../services/build-info.js"
import { MeshctlEnv } from "../../../services/config/meshctl-env.js"
import { allKinds, isMeshKind } from "../../../services/config-model/kinds.js"
import { PROXY_CONTAINER_NAMES } from "../../../services/injection/names.js"
import type { OrchestratorClientShape } from "../../../services/orchestrator/client.js"
import type { OrchObject, OrchPod } from "../../../services/orchestrator/objects.js"
import { type ResourceRef, Resources } from "../../../services/orchestrator/resources.js"
import { controlPlaneFetch, httpBase, MONITORING_PORT, MONITORING_PORT_NAME } from "../control-plane-access.js"
import { DEFAULT_CONTROL_PLANE_LABEL } from "../control-plane-options.js"
import { readInputFile } from "../input-files.js"
import { orchestratorClient } from "../orchestrator-access.js"
import { orchestratorTextClient, type TextGet } from "../orchestrator-text.js"
import { Artifacts } from "./bug-report-archive.js"
import type { BugReportArgs } from "./bug-report-options.js"

export class BugReportFailed extends Data.TaggedError("BugReportFailed")<{ readonly message: string }> {}

const fail = (message: string) => new BugReportFailed({ message })

const PROXY_ADMIN_PORT = 15000

/** The control-plane pods' label (`app=meshd`), as proxy-status finds them. */
const [CONTROL_PLANE_LABEL_KEY = "app", CONTROL_PLANE_LABEL_VALUE = "meshd"] = DEFAULT_CONTROL_PLANE_LABEL.split("=")

/** `MESHCTL_PROXY_ADMIN_PORT` when it is a port, else the proxies' default admin port. */
const proxyAdminPort = (fromEnv: number): number => (fromEnv > 0 && fromEnv < 65536 ? fromEnv : PROXY_ADMIN_PORT)

const toYaml = (value: unknown) => dump(value, { lineWidth: -1, noRefs: true })

const listAll = <T extends OrchObject>(client: OrchestratorClientShape, ref: ResourceRef, namespace?: string) =>
  Effect.gen(function* () {
    const items: Array<T> = []
    let next: string | undefined
    do {
      const page = yield* client.list<T>(ref, {
        ...(namespace !== undefined ? { namespace } : {}),
        limit: 500,
        ...(next !== undefined ? { continue: next } : {}),
      })
      // List items carry neither apiVersion nor kind; the archive's YAML should.
      for (const item of page.items)
        items.push({
          apiVersion: ref.group === "" ? ref.version : `${ref.group}/${ref.version}`,
          kind: ref.kind,
          ...item,
        })
      next = page.continue
    } while (next !== undefined && next !== "")
    return items
  })

const flagsOf = (args: BugReportArgs): BugReportFlags => ({
  meshNamespace: args.meshNamespace !== "" ? args.meshNamespace : args.global.meshNamespace,
  include: args.include,
  exclude: args.exclude,
  fullSecrets: args.fullSecrets,
  dryRun: args.dryRun,
  duration: args.duration,
  startTime: args.startTime,
  endTime: args.endTime,
  criticalErrs: args.criticalErrs,
  ignoreErrs: args.ignoreErrs,
  rqConcurrency: args.rqConcurrency,
  timeout: args.timeout,
  outputDir: args.outputDir,
  dir: args.dir,
})

const readSettings = (args: BugReportArgs) =>
  Effect.gen(function* () {
    let flags = flagsOf(args)
    if (args.filename !== "") {
      const text = yield* readInputFile(args.filename).pipe(Effect.mapError((e) => fail(`--filename ${e.message}`)))
      const document = yield* Effect.try({
        try: () => load(text),
        catch: (e) => fail(`--filename ${args.filename}: ${(e as Error).message}`),
      })
      const merged = overlayConfigFile(flags, document)
      if (typeof merged === "string") return yield* fail(merged)
      flags = merged
    }
    const settings = resolveSettings(flags, new Date())
    return typeof settings === "string" ? yield* fail(settings) : settings
  })

interface PodPlan {
  readonly pod: OrchPod & { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } }
  readonly namespace: string
  readonly name: string
  readonly containers: ReadonlyArray<string>
  readonly sidecar: boolean
  readonly ip: string | undefined
}

const planPods = (pods: ReadonlyArray<OrchPod>, settings: BugReportSettings): ReadonlyArray<PodPlan> =>
  pods.flatMap((pod) => {
    const meta = pod.metadata as OrchPod["metadata"] & {
      labels?: Record<string, string>
      annotations?: Record<string, string>
      ownerReferences?: ReadonlyArray<{ kind?: string; name?: string }>
    }
    const ref = {
      namespace: meta.namespace ?? "",
      deployment: deploymentOf({ metadata: meta }),
      pod: meta.name ?? "",
      labels: meta.labels ?? {},
      annotations: meta.annotations ?? {},
    }
    if (!podSelected(settings.selection, ref)) return []
    const names = (pod.spec?.containers ?? []).map((c) => c.name)
    const containers = names.filter((container) => containerSelected(settings.selection, { ...ref, container }))
    return [
      {
        pod: pod as PodPlan["pod"],
        namespace: ref.namespace,
        name: ref.pod,
        containers,
        sidecar: names.some((n) => PROXY_CONTAINER_NAMES.includes(n)),
        ip: pod.status?.podIP ?? pod.status?.podIPs?.[0]?.ip,
      },
    ]
  })

/** The node ids in a control plane's syncz whose pod is selected (sidecar ids: `sidecar~<ip>~<pod>.<ns>~<domain>`). */
const connectedProxies = (syncz: string, selectedPods: ReadonlySet<string>): ReadonlyArray<string> => {
  let rows: unknown
  try {
    rows = JSON.parse(syncz)
  } catch {
    return []
  }
  if (!Array.isArray(rows)) return []
  const ids = new Set(rows.map((r) => String((r as { proxy?: unknown }).proxy ?? "")))
  return [...ids].filter((id) => selectedPods.has(id.split("~")[2] ?? id))
}

const fetchText = (url: string) => controlPlaneFetch(url, Duration.seconds(30))

const monitoringPortOf = (pod: OrchPod): number =>
  pod.spec?.containers?.flatMap((c) => c.ports ?? []).find((p) => p.name === MONITORING_PORT_NAME)?.containerPort ??
  MONITORING_PORT

export const runBugReport = (args: BugReportArgs) =>
  Effect.gen(function* () {
    const settings = yield* readSettings(args)
    const client = yield* orchestratorClient(args.global).pipe(Effect.mapError((e) => fail(e.message)))
    const getText = yield* orchestratorTextClient(args.global).pipe(Effect.mapError((e) => fail(e.message)))
    const progress = (line: string) => Console.error(line)
    const errors: Array<string> = []
    const recordError = (what: string) => (e: { readonly message: string }) =>
      Effect.sync(() => errors.push(`${what}: ${e.message}`))

    const serverVersion = yield* client
      .request<Record<string, unknown>>({ method: "GET", path: "/version" })
      .pipe(Effect.mapError((e) => fail(`cannot reach the orchestrator at ${client.server}: ${e.message}`)))
    yield* progress(`Target cluster: ${client.server} (version ${String(serverVersion.gitVersion ?? "unknown")})`)

    const allPods = yield* listAll<OrchPod>(client, Resources.pods).pipe(
      Effect.mapError((e) => fail(`cannot list pods: ${e.message}`)),
    )
    const plans = planPods(allPods, settings)
    const controlPlanes = allPods.filter(
      (p) =>
        p.metadata.namespace === settings.meshNamespace &&
        (p.metadata as { labels?: Record<string, string> }).labels?.[CONTROL_PLANE_LABEL_KEY] ===
          CONTROL_PLANE_LABEL_VALUE &&
        (p.status?.podIP ?? "") !== "",
    )

    if (settings.dryRun) {
      const lines = [
        "Dry run: nothing is fetched or written. Would collect:",
        "  cluster version, nodes and namespaces; meshctl version",
        `  mesh resources, ConfigMaps and Secrets (${settings.fullSecrets ? "with" : "without"} contents) of ${settings.meshNamespace}`,
        ...controlPlanes.map(
          (p) => `  control plane ${p.metadata.namespace}/${p.metadata.name}: syncz, configz, config dumps`,
        ),
        ...plans.flatMap((p) => [
          `  pod ${p.namespace}/${p.name}: YAML${p.sidecar ? ", proxy config dump and stats" : ""}`,
          ...p.containers.map((c) => `    logs of container ${c}`),
        ]),
      ]
      yield* Console.log(lines.join("\n"))
      return
    }

    const tempDir = settings.dir !== "" ? settings.dir : mkdtempSync(join(tmpdir(), "bug-report-"))
    const artifacts = new Artifacts(tempDir)
    const ranked: Array<RankedLog> = []
    const port = proxyAdminPort((yield* MeshctlEnv).MESHCTL_PROXY_ADMIN_PORT)
    const concurrency = { concurrency: settings.concurrency }

    const collect = Effect.gen(function* () {
      yield* progress("Fetching cluster information")
      artifacts.add(Paths.clusterVersion, `${JSON.stringify(serverVersion, null, 2)}\n`)
      yield* Effect.forEach(
        [
          [Paths.nodes, Resources.nodes],
          [Paths.namespaces, Resources.namespaces],
        ] as const,
        ([path, ref]) =>
          listAll(client, ref).pipe(
            Effect.map((items) => artifacts.add(path, toYaml(items))),
            Effect.catchAll(recordError(`list ${ref.kind}`)),
          ),
        concurrency,
      )

      yield* progress(`Fetching mesh configuration of ${settings.meshNamespace}`)
      const meshRefs = allKinds()
        .filter((k) => isMeshKind(k) && k.namespaced)
        .map((k) => ({ group: k.group, version: k.version, plural: k.plural, kind: k.kind, namespaced: true }))
      const resources = yield* Effect.forEach(
        meshRefs,
        (ref) =>
          listAll(client, ref, settings.meshNamespace).pipe(
            // A kind whose CRD is not installed has nothing to collect.
            Effect.catchAll((e) =>
              e.status === 404
                ? Effect.succeed([])
                : Effect.as(recordError(`list ${ref.kind}`)(e), [] as Array<OrchObject>),
            ),
          ),
        concurrency,
      )
      artifacts.add(Paths.meshResources, toYaml(resources.flat()))
      yield* listAll(client, Resources.configMaps, settings.meshNamespace).pipe(
        Effect.map((items) => artifacts.add(Paths.meshConfigMaps, toYaml(items))),
        Effect.catchAll(recordError("list ConfigMap")),
      )
      yield* listAll(client, Resources.secrets, settings.meshNamespace).pipe(
        Effect.map((items) =>
          artifacts.add(Paths.meshSecrets, toYaml(items.map((s) => redactSecret(s, settings.fullSecrets)))),
        ),
        Effect.catchAll(recordError("list Secret")),
      )

      const controlPlaneVersions = yield* Effect.forEach(
        controlPlanes,
        (p) =>
          fetchText(`${httpBase(p.status?.podIP ?? "", monitoringPortOf(p))}/version`).pipe(
            Effect.map((text) => ({ name: p.metadata.name, info: JSON.parse(text) as unknown })),
            Effect.catchAll((e) => Effect.as(recordError(`version of ${p.metadata.name}`)(e), undefined)),
          ),
        concurrency,
      )
      artifacts.add(
        Paths.versions,
        `${JSON.stringify({ client: buildInfo, controlPlanes: controlPlaneVersions.filter((v) => v !== undefined) }, null, 2)}\n`,
      )

      yield* progress(`Fetching control plane debug information from ${controlPlanes.length} instance(s)`)
      const selectedPods = new Set(plans.map((p) => `${p.name}.${p.namespace}`))
      yield* Effect.forEach(
        controlPlanes,
        (p) =>
          Effect.gen(function* () {
            const base = httpBase(p.status?.podIP ?? "", monitoringPortOf(p))
            const ns = p.metadata.namespace ?? ""
            const name = p.metadata.name ?? ""
            const syncz = yield* fetchText(`${base}/debug/syncz`).pipe(
              Effect.tap((text) => Effect.sync(() => artifacts.add(Paths.controlPlane(ns, name, "syncz"), text))),
              Effect.catchAll((e) => Effect.as(recordError(`syncz of ${name}`)(e), "[]")),
            )
            yield* fetchText(`${base}/debug/configz`).pipe(
              Effect.map((text) => artifacts.add(Paths.controlPlane(ns, name, "configz"), text)),
              Effect.catchAll(recordError(`configz of ${name}`)),
            )
            const proxies = connectedProxies(syncz, selectedPods)
            yield* Effect.forEach(
              proxies,
              (proxy) =>
                fetchText(`${base}/debug/config_dump?proxyID=${encodeURIComponent(proxy)}`).pipe(
                  Effect.map((text) => artifacts.add(Paths.controlPlaneConfigDump(ns, name, proxy), text)),
                  Effect.catchAll(recordError(`config_dump of ${proxy} from ${name}`)),
                ),
              concurrency,
            )
          }),
        concurrency,
      )

      const logCount = plans.reduce((n, p) => n + p.containers.length, 0)
      yield* progress(`Fetching ${plans.length} pod(s), ${logCount} container log(s)`)
      yield* Effect.forEach(
        plans,
        (plan) =>
          Effect.gen(function* () {
            artifacts.add(Paths.pod(plan.namespace, plan.name), toYaml({ apiVersion: "v1", kind: "Pod", ...plan.pod }))
            yield* Effect.forEach(
              plan.containers,
              (container) => fetchLog(getText, plan, container, settings, artifacts, ranked, recordError),
              concurrency,
            )
            if (plan.sidecar && plan.ip !== undefined) {
              const base = httpBase(plan.ip, port)
              yield* fetchText(`${base}/config_dump?include_eds`).pipe(
                Effect.map((text) => artifacts.add(Paths.proxyConfigDump(plan.namespace, plan.name), text)),
                Effect.catchAll(recordError(`proxy config dump of ${plan.namespace}/${plan.name}`)),
              )
              yield* fetchText(`${base}/stats`).pipe(
                Effect.map((text) => artifacts.add(Paths.proxyStats(plan.namespace, plan.name), text)),
                Effect.catchAll(recordError(`proxy stats of ${plan.namespace}/${plan.name}`)),
              )
            }
          }),
        concurrency,
      )
    })

    const finished = yield* Effect.timeout(collect, settings.timeout).pipe(Effect.option)
    if (Option.isNone(finished))
      yield* progress(
        `Timeout of ${Duration.format(settings.timeout)} reached: archiving the ${artifacts.size} artifact(s) captured so far`,
      )

    const summary = importantLogsSummary(rankLogs(ranked))
    artifacts.add(Paths.importantLogs, `${summary}\n`)
    if (errors.length > 0) {
      artifacts.add(Paths.errors, `${errors.join("\n")}\n`)
      for (const line of errors) yield* Console.error(`Warning: ${line}`)
    }
    const outputDir = resolve(settings.outputDir === "" ? "." : settings.outputDir)
    const archive = join(outputDir, ARCHIVE_NAME)
    yield* progress(`Creating an archive at ${archive}`)
    yield* Effect.tryPromise({
      try: () => artifacts.writeArchive(archive),
      catch: (e) => fail(`cannot write ${archive}: ${(e as Error).message}`),
    })
    if (settings.dir === "") rmSync(tempDir, { recursive: true, force: true })
    yield* Console.log(summary)
    yield* Console.log(`Wrote ${artifacts.size} artifact(s) to ${archive}`)
  }).pipe(Effect.scoped)

const fetchLog = (
  getText: TextGet,
  plan: PodPlan,
  container: string,
  settings: BugReportSettings,
  artifacts: Artifacts,
  ranked: Array<RankedLog>,
  recordError: (what: string) => (e: { readonly message: string }) => Effect.Effect<void>,
) =>
  getText(`/api/v1/namespaces/${encodeURIComponent(plan.namespace)}/pods/${encodeURIComponent(plan.name)}/log`, {
    container,
    ...(settings.since !== undefined ? { sinceTime: settings.since.toISOString().replace(/\.\d{3}Z$/, "Z") } : {}),
  }).pipe(
    Effect.flatMap((text) =>
      Effect.sync(() => {
        const log = trimAfter(text, settings.until)
        const path = Paths.containerLog(plan.namespace, plan.name, container)
        artifacts.add(path, log)
        ranked.push({ path, importance: logImportance(log, settings) })
      }),
    ),
    Effect.catchAll(recordError(`logs of ${plan.namespace}/${plan.name}/${container}`)),
  )
