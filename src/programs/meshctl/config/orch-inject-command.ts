/**
 * `meshctl orch-inject`: injects the sidecar into the pods and workloads of a file (`-f`, `-` for
 * stdin) and writes the result (`-o`, stdout by default); unsupported kinds pass through
 * unchanged. The injector's `config` and `values` and the mesh config come from
 * `--injectConfigFile`, `--valuesFile` and `--meshConfigFile`; those without a file come from the
 * cluster's injector and mesh ConfigMaps when a cluster is named (`--orchconfig`, `--context`,
 * `$KUBECONFIG`, `--injectConfigMapName`, `--meshConfigMapName`), else from the built-in
 * defaults (offline use on a laptop). `ENABLE_NATIVE_SIDECARS` (true, false, auto: the default)
 * chooses native sidecars as the webhook does; `auto` asks the cluster's nodes only when the
 * injector config comes from the cluster, and is off otherwise. `COMPLIANCE_POLICY` is written into
 * the injected proxies as the webhook writes mesh-discovery's. Injecting through the control plane's webhook
 * (`--webhookConfig`, `--xds-address`) is not done: those flags are ignored with a warning.
 */
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Data, Effect, Either, Option } from "effect"
import { MeshctlEnv } from "../../../services/config/meshctl-env.js"
import type { LogSettings } from "../../../services/logging/options.js"
import { boolFlag, durationFlag, textFlag, uint16Flag, withNote } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"
import { type InputError, readInputFile, readProcessStdin, STDIN } from "../input-files.js"
import { clusterAsked } from "../orchestrator-source.js"

/** The failure of `meshctl orch-inject`. */
export class OrchInjectFailed extends Data.TaggedError("OrchInjectFailed")<{ readonly message: string }> {}

const DEFAULT_INJECT_CONFIGMAP = "mesh-sidecar-injector"
const DEFAULT_MESH_CONFIGMAP = "mesh"

/** A flag whose presence matters (it names an orchestrator source), with its default for help. */
const optionalText = (name: string, defaultValue: string) =>
  Options.text(name).pipe(Options.optional, withNote({ default: defaultValue }))

const options = {
  filename: textFlag("filename").pipe(
    Options.withAlias("f"),
    Options.withDescription("Input orchestrator resource filename (- for stdin)"),
  ),
  output: textFlag("output").pipe(
    Options.withAlias("o"),
    Options.withDescription("Modified output orchestrator resource filename (default: stdout)"),
  ),
  injectConfigFile: textFlag("injectConfigFile").pipe(
    Options.withDescription(
      "Injection configuration filename (the injector ConfigMap's `config`). Cannot be used with --injectConfigMapName",
    ),
  ),
  meshConfigFile: textFlag("meshConfigFile").pipe(
    Options.withDescription("Mesh configuration filename. Takes precedence over --meshConfigMapName if set"),
  ),
  valuesFile: textFlag("valuesFile").pipe(
    Options.withDescription("Injection values configuration filename (the injector ConfigMap's `values`)"),
  ),
  revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
  injectConfigMapName: optionalText("injectConfigMapName", DEFAULT_INJECT_CONFIGMAP).pipe(
    Options.withDescription(
      "ConfigMap name for the injection configuration (keys `config` and `values`), read from the orchestrator",
    ),
  ),
  meshConfigMapName: optionalText("meshConfigMapName", DEFAULT_MESH_CONFIGMAP).pipe(
    Options.withDescription("ConfigMap name for the mesh config, key `mesh`, read from the orchestrator"),
  ),
  webhookConfig: optionalText("webhookConfig", DEFAULT_INJECT_CONFIGMAP).pipe(
    Options.withDescription("MutatingWebhookConfiguration whose service injects (not supported offline)"),
  ),
  operatorFileName: textFlag("operatorFileName").pipe(
    Options.withDescription("Path to the operator custom resource file (accepted; not read)"),
  ),
  authority: textFlag("authority").pipe(Options.withDescription("XDS subject alternative name (accepted; not used)")),
  certDir: textFlag("cert-dir").pipe(
    Options.withDescription("XDS endpoint certificate directory (accepted; not used)"),
  ),
  insecure: boolFlag("insecure").pipe(Options.withDescription("Skip server certificate and domain verification")),
  plaintext: boolFlag("plaintext").pipe(Options.withDescription("Use plain-text HTTP/2 when connecting to the server")),
  timeout: durationFlag("timeout", "30s").pipe(Options.withDescription("The duration to wait before failing")),
  xdsAddress: textFlag("xds-address").pipe(Options.withDescription("XDS endpoint (not supported offline)")),
  xdsLabel: textFlag("xds-label").pipe(
    Options.withDescription("Control-plane pod label selector for the XDS endpoint"),
  ),
  xdsPort: uint16Flag("xds-port", 15012).pipe(Options.withDescription("Control-plane XDS port")),
  global: globalOptions,
}

type OrchInjectArgs = {
  readonly [K in keyof typeof options]: (typeof options)[K] extends Options.Options<infer A> ? A : never
}

const fail = (message: string) => new OrchInjectFailed({ message })

/** Whether any of the three inputs must come from the cluster (its file missing and a cluster named). */
const needsCluster = (args: OrchInjectArgs, kubeconfigEnv: string): boolean => {
  const asked =
    clusterAsked(args.global, kubeconfigEnv) ||
    Option.isSome(args.injectConfigMapName) ||
    Option.isSome(args.meshConfigMapName)
  return asked && (args.injectConfigFile === "" || args.valuesFile === "" || args.meshConfigFile === "")
}

const runOrchInject = (args: OrchInjectArgs, readStdin: Effect.Effect<string, InputError>) =>
  Effect.gen(function* () {
    if (args.filename === "") return yield* fail("filename not specified (see --help)")
    if (args.injectConfigFile !== "" && Option.isSome(args.injectConfigMapName)) {
      return yield* fail("--injectConfigFile and --injectConfigMapName are mutually exclusive")
    }
    for (const [flag, given] of [
      ["--webhookConfig", Option.isSome(args.webhookConfig)],
      ["--xds-address", args.xdsAddress !== ""],
    ] as const) {
      if (given)
        yield* Console.error(`Warning: ${flag} is ignored: meshctl injects locally from the injector ConfigMap`)
    }

    const fs = yield* FileSystem.FileSystem
    // Every input within the size limit, special files read as streams up to it (input-files.ts).
    const read = (file: string, what: string) =>
      readInputFile(file).pipe(Effect.mapError((e) => fail(`cannot read ${what} ${e.message}`)))
    const optionalFile = (file: string, what: string) =>
      file === "" ? Effect.succeedNone : Effect.map(read(file, what), (text) => Option.some({ name: file, text }))

    // The injector and the mesh config model load only when this command runs.
    const [
      { readInjectorSettings },
      { injectWorkloads },
      { applyMeshConfig },
      { formatIssue },
      { parseNativeSidecarMode, nativeSidecarDefault },
    ] = yield* Effect.promise(() =>
      Promise.all([
        import("../../../services/injection/injector-settings.js"),
        import("../../../services/injection/workloads.js"),
        import("../../../services/mesh-config/mesh-config.js"),
        import("../../../services/config-model/resource.js"),
        import("../../../services/injection/native-sidecars.js"),
      ]),
    )
    const environment = yield* MeshctlEnv
    const nativeMode = parseNativeSidecarMode(environment.ENABLE_NATIVE_SIDECARS)
    if (nativeMode.warning !== undefined) yield* Console.error(`Warning: ${nativeMode.warning}`)
    const cluster = needsCluster(args, environment.KUBECONFIG)
      ? yield* Effect.flatMap(
          Effect.promise(() => import("./orch-inject-cluster.js")),
          ({ readInjectionSources }) =>
            readInjectionSources({
              global: args.global,
              revision: args.revision,
              injectConfigMapName: args.injectConfigMapName,
              meshConfigMapName: args.meshConfigMapName,
              need: {
                config: args.injectConfigFile === "",
                values: args.valuesFile === "",
                mesh: args.meshConfigFile === "",
              },
              // As the reference: only an injector read from the cluster looks at its nodes.
              nodes: nativeMode.mode === "auto" && args.injectConfigFile === "",
            }),
        ).pipe(Effect.mapError((e) => fail(e.message)))
      : undefined
    const settings = readInjectorSettings(
      {
        config:
          cluster?.config ?? Option.getOrUndefined(yield* optionalFile(args.injectConfigFile, "--injectConfigFile")),
        values: cluster?.values ?? Option.getOrUndefined(yield* optionalFile(args.valuesFile, "--valuesFile")),
      },
      cluster === undefined ? "files" : "orchestrator",
    )
    if (Either.isLeft(settings)) return yield* fail(`invalid injection configuration:\n  ${settings.left.join("\n  ")}`)
    const mesh =
      cluster?.mesh !== undefined
        ? applyMeshConfig(cluster.mesh.name, cluster.mesh.text)
        : args.meshConfigFile === ""
          ? applyMeshConfig("built-in defaults", "")
          : applyMeshConfig(args.meshConfigFile, yield* read(args.meshConfigFile, "--meshConfigFile"))
    if (Either.isLeft(mesh)) {
      return yield* fail(`invalid mesh configuration:\n  ${mesh.left.map(formatIssue).join("\n  ")}`)
    }
    for (const warning of [...settings.right.warnings, ...mesh.right.warnings])
      yield* Console.error(`Warning: ${warning}`)

    const input =
      args.filename === STDIN
        ? yield* readStdin.pipe(Effect.mapError((e) => fail(`cannot read --filename ${e.message}`)))
        : yield* read(args.filename, "--filename")
    if (cluster?.nodes?._tag === "Unavailable")
      yield* Console.error(`Warning: ${cluster.nodes.reason}; native sidecars are off`)
    const nodeVersions = cluster?.nodes?._tag === "Listed" ? cluster.nodes.versions : undefined
    const nodes =
      nodeVersions === undefined
        ? undefined
        : { version: (name: string) => nodeVersions.get(name), all: () => [...nodeVersions.values()] }
    const injected = injectWorkloads(input, {
      config: settings.right.settings.config,
      values: settings.right.settings.values,
      meshConfig: mesh.right.value as unknown as Record<string, unknown>,
      revision: args.revision,
      nativeSidecars: (nodeName) => nativeSidecarDefault(nativeMode.mode, nodes, nodeName),
      // As the reference's kube-inject, the injector's compliance policy is read from the environment.
      compliancePolicy: environment.COMPLIANCE_POLICY,
    })
    const source = args.filename === STDIN ? "stdin" : args.filename
    if (Either.isLeft(injected)) {
      return yield* fail(`${source} document ${injected.left.documentIndex}: ${injected.left.message}`)
    }
    for (const note of injected.right.notes) yield* Console.error(note)
    if (args.output === "") {
      yield* Effect.sync(() => process.stdout.write(injected.right.text))
    } else {
      yield* fs
        .writeFileString(args.output, injected.right.text)
        .pipe(Effect.mapError((e) => fail(`cannot write --output ${args.output}: ${e.message}`)))
    }
  })

/** `meshctl orch-inject` (the reference's `kube-inject`). */
export const orchInjectCommand = (
  logging: Options.Options<LogSettings>,
  readStdin: Effect.Effect<string, InputError> = readProcessStdin,
) =>
  Command.make("orch-inject", { ...options, logging }, (args) => runOrchInject(args, readStdin)).pipe(
    Command.withDescription(
      "Inject the sidecar into orchestrator workload resources; other resources pass through unchanged",
    ),
  )
