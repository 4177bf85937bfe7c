/**
 * `meshctl analyze [<file>...]`: runs the configuration analyzers (services/analysis) over the
 * files given (directories read recursively for .yaml/.yml/.json, `-` for stdin) and, with
 * `--use-orch`/`-k`, over the live cluster's mesh resources, Services, Pods, Deployments,
 * Namespaces, Nodes, ConfigMaps, Secrets, webhook configurations and CRDs, the files overriding
 * cluster objects of the same name (analysing a change before applying it). Without `-k`, a
 * cluster is read only when no file is given.
 *
 * The analyzers see the mesh config of the built-in defaults, overridden by the cluster's mesh
 * ConfigMap in `-i` (`mesh`, or `mesh-<revision>` for `--revision`) and then by
 * `--meshConfigFile`; `--meshNetworksFile` gives the mesh networks checked (one MeshNetworks
 * object in the mesh namespace, services/analysis/mesh-networks-input.ts); `--revision` also
 * picks the control plane whose injection and config objects are analyzed
 * (services/analysis/analysis-config.ts).
 *
 * Analyzing files alone, the default ingress gateway's Service and a Pod for it are assumed in
 * `-i` (services/analysis/default-resources.ts), as the reference does. The orchestrator's system
 * namespaces are left out as the reference leaves them (services/analysis/system-namespaces.ts),
 * and unknown `--analyzer` names are ignored (none known: the default set runs), as there.
 *
 * Exit codes: 79 when a printed message reaches `--failure-threshold` (spec §7 rule 1, the
 * reference's code for "analyzers found issues"); 1 for unreadable input (unless
 * `--ignore-unknown`, §7 rule 4), bad flags, an unreachable cluster or `--timeout`.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Data, Duration, Effect, Option } from "effect"
import type { Entry } from "../../../services/analysis/snapshot.js"
import { MeshctlEnv } from "../../../services/config/meshctl-env.js"
import { colorAllowed } from "../../../services/config/terminal-env.js"
import type { LogSettings } from "../../../services/logging/options.js"
import type { OrchConfigMap } from "../../../services/orchestrator/objects.js"
import { boolFlag, durationFlag, listFlag, textFlag } from "../../shared/options.js"
import { type GlobalOptions, globalOptions } from "../global-options.js"
import { expandInputs, type InputError, readInput, readInputFile, readProcessStdin, STDIN } from "../input-files.js"

/** The failure of `meshctl analyze` (exit 1). */
export class AnalyzeFailed extends Data.TaggedError("AnalyzeFailed")<{ readonly message: string }> {}

/** The reference's exit code when analyzers found issues at or above the failure threshold. */
export const ANALYZER_FOUND_ISSUES_EXIT_CODE = 79

const CONFIG_EXTENSIONS = [".yaml", ".yml", ".json"]

/** A boolean whose absence is told apart from `=false` (Go semantics otherwise, see boolFlag). */
const presenceBool = (name: string, alias: string) =>
  (Options.boolean(name) as unknown as { readonly options: Options.Options<boolean> }).options.pipe(
    Options.withAlias(alias),
    Options.optional,
  )

const options = {
  allNamespaces: boolFlag("all-namespaces").pipe(
    Options.withAlias("A"),
    Options.withDescription("Analyze all namespaces"),
  ),
  analyzer: listFlag("analyzer").pipe(
    Options.withDescription(
      "Analyzers to run (repeatable; see --list-analyzers). The reference's default set runs if omitted; the opt-in ones run only when named",
    ),
  ),
  color: boolFlag("color", true).pipe(
    Options.withDescription("Default true. Disable with '=false' or set $TERM to dumb"),
  ),
  failureThreshold: textFlag("failure-threshold", "Error").pipe(
    Options.withDescription(
      "The severity level of analysis at which to set a non-zero exit code. Valid values: [Info Warning Error]",
    ),
  ),
  ignoreUnknown: boolFlag("ignore-unknown").pipe(
    Options.withDescription("Don't complain about un-applicable file input"),
  ),
  listAnalyzers: boolFlag("list-analyzers").pipe(
    Options.withAlias("L"),
    Options.withDescription("List the analyzers available to run. Suppresses normal execution."),
  ),
  meshConfigFile: textFlag("meshConfigFile").pipe(
    Options.withDescription("Overrides the mesh config values to use for analysis."),
  ),
  meshNetworksFile: textFlag("meshNetworksFile").pipe(
    Options.withDescription("Overrides the mesh networks values to use for analysis."),
  ),
  output: textFlag("output", "log").pipe(
    Options.withAlias("o"),
    Options.withDescription("Output format: one of [log json yaml]"),
  ),
  outputThreshold: textFlag("output-threshold", "Info").pipe(
    Options.withDescription(
      "The severity level of analysis at which to display messages. Valid values: [Info Warning Error]",
    ),
  ),
  recursive: boolFlag("recursive", true).pipe(
    Options.withAlias("R"),
    Options.withDescription(
      "[Removed: The analyze command now always recurses directories] Process directory arguments recursively.",
    ),
  ),
  remoteContexts: listFlag("remote-contexts").pipe(
    Options.withDescription(
      "Orchestrator configuration contexts for remote clusters to be used in multi-cluster analysis. Not to be confused with '--context'. If unspecified, contexts are read from the remote secrets in the cluster.",
    ),
  ),
  revision: textFlag("revision", "default").pipe(
    Options.withAlias("r"),
    Options.withDescription("analyze a specific revision deployed."),
  ),
  suppress: Options.text("suppress").pipe(
    Options.withAlias("S"),
    Options.repeated,
    Options.withDescription(
      "Suppress reporting a message code on a specific resource: '<code>=<resource>' (e.g. 'MSH0102=Namespace frod'); '*' matches any characters. Repeatable.",
    ),
  ),
  timeout: durationFlag("timeout", "30s").pipe(Options.withDescription("The duration to wait before failing")),
  useOrch: presenceBool("use-orch", "k").pipe(
    Options.withDescription(
      "Use the live orchestrator cluster for analysis. Set --use-orch=false to analyze files only.",
    ),
  ),
  verbose: boolFlag("verbose").pipe(Options.withAlias("v"), Options.withDescription("Enable verbose output")),
  files: Args.text({ name: "file" }).pipe(Args.withDescription("files or directories to analyze"), Args.repeated),
  global: globalOptions,
}

type AnalyzeArgs = {
  readonly [K in keyof typeof options]: (typeof options)[K] extends Options.Options<infer A>
    ? A
    : (typeof options)[K] extends Args.Args<infer B>
      ? B
      : never
}

const fail = (message: string) => new AnalyzeFailed({ message })

/** The files named: directories expanded recursively (sorted), `-` kept for stdin. */
/**
 * The files of `paths` (directories walked for config files once per real directory, special
 * files and loops left out with a warning, see input-files.ts); a path that cannot be read fails.
 */
const expandPaths = (paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const expanded = yield* expandInputs(paths, CONFIG_EXTENSIONS)
    const [problem] = expanded.problems
    if (problem !== undefined) return yield* fail(`cannot read ${problem.path}: ${problem.reason}`)
    for (const line of expanded.skipped) yield* Console.error(`Warning: ${line}`)
    return expanded.files
  })

/**
 * The text of the revision's mesh ConfigMap (`mesh`, or `mesh-<revision>`) in `-i`; undefined
 * when it does not exist (the defaults apply, as for a cluster without the mesh).
 */
const readClusterMeshConfig = (global: GlobalOptions, revision: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const [{ orchestratorClient }, { Resources }, { configMapSource, meshConfigMapName, MESH_CONFIG_KEY }] =
        yield* Effect.promise(() =>
          Promise.all([
            import("../orchestrator-access.js"),
            import("../../../services/orchestrator/resources.js"),
            import("../../../services/mesh-config/configmap.js"),
          ]),
        )
      const client = yield* orchestratorClient(global).pipe(Effect.mapError((e) => fail(e.message)))
      const name = meshConfigMapName(revision)
      const configMap = yield* client.get<OrchConfigMap>(Resources.configMaps, global.meshNamespace, name).pipe(
        Effect.map(Option.some),
        Effect.catchAll((error) =>
          error.status === 404
            ? Effect.succeed(Option.none<OrchConfigMap>())
            : Effect.fail(fail(`cannot read ConfigMap ${global.meshNamespace}/${name}: ${error.message}`)),
        ),
      )
      return configMapSource(
        { namespace: global.meshNamespace, name, configMap: Option.getOrUndefined(configMap) },
        MESH_CONFIG_KEY,
      )
    }),
  )

/**
 * The remote clusters of a multi-cluster analysis: the contexts of `--remote-contexts` (each must
 * be in the kubeconfig, as the reference requires), else the clusters of the primary's remote
 * secrets among its listed objects.
 */
const remoteSources = (args: AnalyzeArgs, primaryObjects: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const [clusters, remote] = yield* Effect.promise(() =>
      Promise.all([import("./analyze-clusters.js"), import("../../../services/analysis/remote-clusters.js")]),
    )
    if (args.remoteContexts.length === 0)
      return remote
        .remoteSecretClusters(primaryObjects, args.global.meshNamespace)
        .map((c) => ({ _tag: "secret" as const, ...c }))
    const kubeconfig = yield* clusters.readKubeconfig(args.global).pipe(Effect.mapError((e) => fail(e.message)))
    const [missing] = remote.missingContexts(kubeconfig, args.remoteContexts)
    if (missing !== undefined) return yield* fail(`context "${missing}" not found`)
    return [...new Set(args.remoteContexts)].map((context) => ({ _tag: "context" as const, context }))
  })

const runAnalyze = (args: AnalyzeArgs, readStdin: Effect.Effect<string, InputError>) =>
  Effect.gen(function* () {
    // The analyzers and the config model load only when this command runs.
    const [
      { DEFAULT_ANALYZERS, OPT_IN_ANALYZERS, selectAnalyzers },
      reader,
      { runAnalysis, failsAt, parseSuppression },
      output,
      { makeSnapshot },
      { parseLevel },
      config,
      system,
    ] = yield* Effect.promise(() =>
      Promise.all([
        import("../../../services/analysis/analyzers/index.js"),
        import("../../../services/analysis/read-documents.js"),
        import("../../../services/analysis/run.js"),
        import("../../../services/analysis/output.js"),
        import("../../../services/analysis/snapshot.js"),
        import("../../../services/analysis/message-types.js"),
        import("../../../services/analysis/analysis-config.js"),
        import("../../../services/analysis/system-namespaces.js"),
      ]),
    )
    if (args.listAnalyzers) {
      const lines = ["Available analyzers:"]
      for (const a of DEFAULT_ANALYZERS) lines.push(`* ${a.name}:`, `    ${a.description}`)
      // Beyond the reference's list: checks it does not run by default, selectable by name.
      lines.push("Opt-in analyzers (run only when named with --analyzer):")
      for (const a of OPT_IN_ANALYZERS) lines.push(`* ${a.name}:`, `    ${a.description}`)
      yield* Console.log(lines.join("\n"))
      return
    }
    const failureThreshold = parseLevel(args.failureThreshold)
    if (failureThreshold === undefined)
      return yield* fail(`invalid --failure-threshold "${args.failureThreshold}": one of Info, Warning, Error`)
    const outputThreshold = parseLevel(args.outputThreshold)
    if (outputThreshold === undefined)
      return yield* fail(`invalid --output-threshold "${args.outputThreshold}": one of Info, Warning, Error`)
    if (!["log", "json", "yaml"].includes(args.output))
      return yield* fail(`invalid --output "${args.output}": one of log, json, yaml`)
    const suppressions = []
    for (const text of args.suppress) {
      const parsed = parseSuppression(text)
      if (typeof parsed === "string") return yield* fail(parsed)
      suppressions.push(parsed)
    }
    // As the reference: unknown names are ignored, and when none is known the default set runs.
    const { analyzers, unknown } = selectAnalyzers(args.analyzer)
    if (unknown.length > 0)
      yield* Console.error(
        `Warning: unknown analyzer(s) ignored: ${unknown.join(", ")}${analyzers === DEFAULT_ANALYZERS ? "; running the default set" : ""} (see --list-analyzers)`,
      )

    const revision = config.normalizeRevision(args.revision)
    const meshConfigFile =
      args.meshConfigFile === ""
        ? undefined
        : {
            file: args.meshConfigFile,
            text: yield* readInputFile(args.meshConfigFile).pipe(
              Effect.mapError((e) => fail(`cannot read --meshConfigFile ${e.message}`)),
            ),
          }

    // The mesh networks the analysis checks, read with the control plane's parser.
    const meshNetworks =
      args.meshNetworksFile === ""
        ? undefined
        : (yield* Effect.promise(() => import("../../../services/analysis/mesh-networks-input.js"))).meshNetworksEntry(
            args.meshNetworksFile,
            yield* readInputFile(args.meshNetworksFile).pipe(
              Effect.mapError((e) => fail(`cannot read --meshNetworksFile ${e.message}`)),
            ),
            args.global.meshNamespace,
          )
    if (meshNetworks !== undefined && meshNetworks._tag === "Left")
      return yield* fail(`invalid mesh networks:\n  ${meshNetworks.left.map(config.issueText).join("\n  ")}`)
    if (meshNetworks !== undefined)
      for (const warning of meshNetworks.right.warnings) yield* Console.error(`Warning: ${warning}`)

    const namespace = args.global.namespace === "" ? "default" : args.global.namespace
    const useCluster = Option.getOrElse(args.useOrch, () => args.files.length === 0)
    // The cluster's mesh config (the revision's ConfigMap) is the base the file overrides.
    const clusterMeshConfig = useCluster ? yield* readClusterMeshConfig(args.global, revision) : undefined
    const resolved = config.analysisMeshConfig({ cluster: clusterMeshConfig, file: meshConfigFile })
    if (resolved._tag === "Left")
      return yield* fail(`invalid mesh config:\n  ${resolved.left.map(config.issueText).join("\n  ")}`)
    for (const warning of resolved.right.warnings) yield* Console.error(`Warning: ${warning}`)
    const entries = []
    const messages = []
    const unreadable: Array<string> = []
    const fileKeys = new Set<string>()
    for (const file of yield* expandPaths(args.files)) {
      const text = yield* readInput(file, readStdin).pipe(
        Effect.mapError((e) => fail(`cannot read ${e.path}: ${e.reason}`)),
      )
      const read = reader.readDocuments(file === STDIN ? "stdin" : file, text, namespace)
      // The orchestrator's system namespaces are not analyzed (system-namespaces.ts).
      entries.push(...read.entries.filter(system.outsideSystemNamespaces))
      messages.push(...read.messages)
      unreadable.push(...read.unreadable)
    }
    for (const e of entries) fileKeys.add(`${e.group}/${e.kind}/${e.namespace}/${e.name}`)
    const remotes: Array<{ readonly cluster: string; readonly entries: ReadonlyArray<Entry> }> = []
    if (useCluster) {
      const clusters = yield* Effect.promise(() => import("./analyze-clusters.js"))
      const objects = yield* clusters.listPrimary(args.global).pipe(Effect.mapError((e) => fail(e.message)))
      const read = reader.readObjects(objects, namespace)
      // A file's object replaces the cluster's of the same name: the files are what would be applied.
      entries.push(
        ...read.entries.filter(
          (e) => system.readFromCluster(e) && !fileKeys.has(`${e.group}/${e.kind}/${e.namespace}/${e.name}`),
        ),
      )
      messages.push(...read.messages)
      // Remote clusters (multi-cluster analysis): the contexts named, else the primary's remote secrets.
      const sources = yield* remoteSources(args, objects)
      const listed = yield* Effect.forEach(
        sources,
        (source) => clusters.listRemote(args.global, source).pipe(Effect.mapError((e) => fail(e.message))),
        { concurrency: 4 },
      )
      for (const remote of listed) {
        const remoteRead = reader.readObjects(remote.objects, namespace)
        remotes.push({ cluster: remote.cluster, entries: remoteRead.entries.filter(system.readFromCluster) })
        messages.push(...remoteRead.messages)
      }
    } else if (args.remoteContexts.length > 0)
      yield* Console.error("Warning: --remote-contexts is ignored when analyzing files alone (add --use-orch)")
    if (!useCluster) {
      // Files alone: the installation's default ingress objects are assumed, as the reference does.
      const { defaultIngressDocuments, DEFAULT_RESOURCES_ORIGIN } = yield* Effect.promise(
        () => import("../../../services/analysis/default-resources.js"),
      )
      const text = defaultIngressDocuments(resolved.right.value, args.global.meshNamespace)
      const read = reader.readDocuments(DEFAULT_RESOURCES_ORIGIN, text, namespace)
      entries.push(...read.entries.filter((e) => !fileKeys.has(`${e.group}/${e.kind}/${e.namespace}/${e.name}`)))
    }
    if (meshNetworks !== undefined) entries.push(meshNetworks.right.entry)
    const analyzedEntries =
      remotes.length === 0
        ? entries
        : (yield* Effect.promise(() => import("../../../services/analysis/remote-clusters.js"))).mergeClusters(
            entries,
            remotes,
          )
    if (args.verbose)
      yield* Console.error(
        `Analyzing ${analyzedEntries.length} resources with ${analyzers.length} analyzers${useCluster ? ` (files and ${remotes.length + 1} cluster${remotes.length === 0 ? "" : "s"})` : ""}`,
      )
    if (!args.ignoreUnknown) for (const line of unreadable) yield* Console.error(`Error: ${line}`)

    // Scoped to one namespace with the cluster (unless -A) or an explicit -n; files alone: all of them.
    const scoped = !args.allNamespaces && (useCluster || args.global.namespace !== "")
    const analyzed = analyzedEntries.filter((e) => config.inRevision(e, revision))
    const result = runAnalysis(makeSnapshot(analyzed, { meshConfig: resolved.right.value, revision }), messages, {
      analyzers,
      suppressions,
      outputThreshold,
      ...(scoped ? { namespace } : {}),
    })
    const target = args.allNamespaces ? "all namespaces" : `namespace: ${namespace}`
    const color = args.color && colorAllowed(yield* MeshctlEnv, process.stdout.isTTY === true)
    if (args.output === "json") yield* Effect.sync(() => process.stdout.write(output.formatJson(result.messages)))
    else if (args.output === "yaml") yield* Effect.sync(() => process.stdout.write(output.formatYaml(result.messages)))
    else if (result.messages.length === 0) {
      const hidden = result.all.length - result.messages.length
      yield* Console.error(
        hidden > 0
          ? `✔ No validation issues found at or above the output threshold when analyzing ${target}. (${hidden} message${hidden === 1 ? "" : "s"} below the threshold)`
          : `✔ No validation issues found when analyzing ${target}.`,
      )
    } else
      yield* Effect.sync(() =>
        process.stdout.write(`${result.messages.map((m) => output.formatLog(m, color)).join("\n")}\n`),
      )

    if (failsAt(result.messages, failureThreshold)) {
      yield* Console.error(
        `Error: Analyzers found issues when analyzing ${target}.\nSee https://mesh.io/latest/docs/reference/config/analysis for more information about causes and resolutions.`,
      )
      yield* Effect.sync(() => {
        process.exitCode = ANALYZER_FOUND_ISSUES_EXIT_CODE
      })
      return
    }
    if (unreadable.length > 0 && !args.ignoreUnknown)
      return yield* fail(`${unreadable.length} input document(s) could not be read (use --ignore-unknown to skip them)`)
  }).pipe(
    Effect.timeoutFail({
      duration: args.timeout,
      onTimeout: () => fail(`analysis timed out after ${Duration.format(args.timeout)}`),
    }),
  )

/** `meshctl analyze`. */
export const analyzeCommand = (
  logging: Options.Options<LogSettings>,
  readStdin: Effect.Effect<string, InputError> = readProcessStdin,
) =>
  Command.make("analyze", { ...options, logging }, (args) => runAnalyze(args, readStdin)).pipe(
    Command.withDescription(
      "Analyze mesh configuration and print validation messages: files and directories given, and the live cluster with --use-orch",
    ),
  )
