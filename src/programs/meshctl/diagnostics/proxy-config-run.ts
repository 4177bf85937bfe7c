/**
 * The work of `meshctl proxy-config`: read the dump (a `--file`, or the pod's proxy admin port
 * through proxy-config-live.ts, loaded only then), pick and filter what the subcommand shows,
 * and print the reference's short table or the selected JSON/YAML.
 */
import type { FileSystem } from "@effect/platform"
import { Console, Data, Effect, Either } from "effect"
import { stringify } from "yaml"
import type { MeshctlEnv } from "../../../services/config/meshctl-env.js"
import { bootstrapSummary } from "../../../services/proxy-config/bootstrap.js"
import { clusterTable, filteredClusters } from "../../../services/proxy-config/clusters.js"
import {
  asObject,
  bootstrapOf,
  type ConfigDump,
  clustersOf,
  type Json,
  listenersOf,
  parseConfigDump,
  routeConfigsOf,
  SECTION,
  section,
} from "../../../services/proxy-config/dump.js"
import {
  type EndpointRow,
  endpointsOfClusterStatuses,
  endpointsOfConfigDump,
  endpointTable,
  filteredEndpoints,
} from "../../../services/proxy-config/endpoints.js"
import { filteredListeners, listenerTable } from "../../../services/proxy-config/listeners.js"
import { filteredRoutes, routeTable } from "../../../services/proxy-config/routes.js"
import { secretsOf, secretTable } from "../../../services/proxy-config/secrets.js"
import type { GlobalOptions } from "../global-options.js"
import { MAX_CONFIG_DUMP_BYTES, readInputFile } from "../input-files.js"
import type { ProxyConfigRequest } from "./proxy-config-options.js"

/** The failure of `meshctl proxy-config`. */
export class ProxyConfigFailed extends Data.TaggedError("ProxyConfigFailed")<{ readonly message: string }> {}

const fail = (message: string) => new ProxyConfigFailed({ message })

type Output = "short" | "json" | "yaml"

/** JSON indented by four spaces as the reference prints, or YAML. */
const structured = (value: unknown, output: Exclude<Output, "short">): string =>
  output === "json" ? `${JSON.stringify(value, null, 4)}\n` : stringify(value)

const print = (text: string) => Effect.sync(() => process.stdout.write(text))

const live = () => Effect.promise(() => import("./proxy-config-live.js"))

interface Source {
  readonly file: string
  readonly pod: string
  readonly proxyAdminPort: number
  readonly global: GlobalOptions
}

const readFile = (file: string) =>
  readInputFile(file, MAX_CONFIG_DUMP_BYTES).pipe(Effect.mapError((e) => fail(`cannot read --file ${e.message}`)))

const parseDump = (text: string, from: string) =>
  Either.match(parseConfigDump(text), {
    onLeft: (reason) => Effect.fail(fail(`${from}: ${reason}`)),
    onRight: Effect.succeed,
  })

/** The dump from the file, else from the pod's proxy; a pod is needed without a file. */
const loadDump = (source: Source): Effect.Effect<ConfigDump, ProxyConfigFailed, FileSystem.FileSystem | MeshctlEnv> => {
  if (source.file !== "") return Effect.flatMap(readFile(source.file), (text) => parseDump(text, source.file))
  if (source.pod === "") return Effect.fail(fail("one pod is required (or --file with a config dump)"))
  return Effect.gen(function* () {
    const { fetchFromProxy } = yield* live()
    const text = yield* fetchFromProxy(source.global, source.pod, source.proxyAdminPort, "GET", "/config_dump").pipe(
      Effect.mapError((e) => fail(e.message)),
    )
    return yield* parseDump(text, `config dump of ${source.pod}`)
  })
}

/** Endpoints of a `/clusters?format=json` answer or of a config dump's EDS section. */
const loadEndpoints = (source: Source) =>
  Effect.gen(function* () {
    const text =
      source.file !== ""
        ? yield* readFile(source.file)
        : source.pod === ""
          ? yield* fail("one pod is required (or --file with a clusters or config dump JSON)")
          : yield* Effect.flatMap(live(), ({ fetchFromProxy }) =>
              fetchFromProxy(source.global, source.pod, source.proxyAdminPort, "GET", "/clusters?format=json").pipe(
                Effect.mapError((e) => fail(e.message)),
              ),
            )
    const from = source.file || `clusters of ${source.pod}`
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => fail(`${from}: not JSON: ${(e as Error).message}`),
    })
    const object = asObject(parsed)
    if (object !== undefined && Array.isArray(object.cluster_statuses)) {
      return { rows: endpointsOfClusterStatuses(object), raw: object as Json }
    }
    const dump = yield* parseDump(text, from)
    return { rows: endpointsOfConfigDump(dump), raw: dump.raw }
  })

const show = (output: Output, short: () => string, selected: () => unknown) =>
  print(output === "short" ? short() : structured(selected(), output))

export const runProxyConfig = (request: ProxyConfigRequest) =>
  Effect.gen(function* () {
    switch (request.kind) {
      case "cluster": {
        const f = request.flags
        const dump = yield* loadDump({ ...f, pod: request.pod })
        const filter = { fqdn: f.fqdn, port: f.port, subset: f.subset, direction: f.direction }
        return yield* show(
          f.output,
          () => clusterTable(clustersOf(dump), filter),
          () => filteredClusters(clustersOf(dump), filter),
        )
      }
      case "listener": {
        const f = request.flags
        const dump = yield* loadDump({ ...f, pod: request.pod })
        const filter = { address: f.address, port: f.port, type: f.type }
        return yield* show(
          f.output,
          () => listenerTable(listenersOf(dump), filter, f.verbose),
          () => filteredListeners(listenersOf(dump), filter),
        )
      }
      case "route": {
        const f = request.flags
        const dump = yield* loadDump({ ...f, pod: request.pod })
        return yield* show(
          f.output,
          () => routeTable(routeConfigsOf(dump), f.name, f.verbose),
          () => filteredRoutes(routeConfigsOf(dump), f.name),
        )
      }
      case "endpoint": {
        const f = request.flags
        const { rows } = yield* loadEndpoints({ ...f, pod: request.pod })
        const filter = { address: f.address, port: f.port, cluster: f.cluster, status: f.status }
        return yield* show(
          f.output,
          () => endpointTable(rows, filter),
          () => filteredEndpoints(rows, filter).map((r: EndpointRow) => ({ ...r })),
        )
      }
      case "secret": {
        const f = request.flags
        const dump = yield* loadDump({ ...f, pod: request.pod })
        return yield* show(
          f.output,
          () => secretTable(secretsOf(dump)),
          () => section(dump, SECTION.secrets) ?? {},
        )
      }
      case "bootstrap": {
        const f = request.flags
        const dump = yield* loadDump({ ...f, pod: request.pod })
        const bootstrap = bootstrapOf(dump)
        if (bootstrap === undefined) return yield* fail("the config dump has no bootstrap section")
        return yield* show(
          f.output,
          () => bootstrapSummary(bootstrap),
          () => section(dump, SECTION.bootstrap),
        )
      }
      case "all": {
        const f = request.flags
        const dump = yield* loadDump({ ...f, pod: request.pod })
        const tables = () =>
          [
            clusterTable(clustersOf(dump), { fqdn: f.fqdn, port: f.port, subset: f.subset, direction: f.direction }),
            listenerTable(listenersOf(dump), { address: f.address, port: f.port, type: f.type }, f.verbose),
            routeTable(routeConfigsOf(dump), f.name, f.verbose),
            secretTable(secretsOf(dump)),
          ].join("\n")
        return yield* show(f.output, tables, () => dump.raw)
      }
      case "log": {
        const { runLog } = yield* live()
        const text = yield* runLog(request.flags, request.pod).pipe(Effect.mapError((e) => fail(e.message)))
        return yield* print(text)
      }
      case "rootcaCompare": {
        const { compareRootCAs } = yield* live()
        const verdict = yield* compareRootCAs(request.flags, request.pods).pipe(Effect.mapError((e) => fail(e.message)))
        if (!verdict.same) return yield* fail(verdict.message)
        return yield* Console.log(verdict.message)
      }
    }
  })
