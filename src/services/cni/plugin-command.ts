/**
 * One invocation of the `mesh-cni` plugin: CNI_* environment and stdin in, what to print on
 * stdout and the exit code out. ADD decides from the pod and programs capture through the
 * Iptables service (the same rule set `mesh-agent mesh-iptables` applies); DEL is a no-op
 * (the namespace and its rules go away with the sandbox); CHECK has nothing of its own to
 * verify; VERSION lists the spec versions. Every failure becomes the CNI error object.
 */
import { Effect, Either, Option } from "effect"
import { Iptables } from "../iptables/service.js"
import { withScope } from "../logging/logging.js"
import { redirectionAnnotations } from "./node-agent-events.js"
import { DEFAULT_AGENT_RUN_DIR, isAmbientPod, NodeAgentClient } from "./plugin-ambient.js"
import { applyOptionsOf, iptablesConfigOf } from "./plugin-capture.js"
import type { MeshCniPluginConfig } from "./plugin-config.js"
import { decide, podToLookUp } from "./plugin-decision.js"
import { decodeConfig, pluginConfigOf } from "./plugin-network-config.js"
import { type PluginPod, podFacts } from "./plugin-pod.js"
import { PluginPodSource } from "./plugin-pod-source.js"
import {
  addResult,
  CniError,
  CniErrorCodes,
  type CniInvocation,
  errorObject,
  K8sArgs,
  parseInvocation,
  resultAddresses,
  versionInfo,
} from "./plugin-protocol.js"

export interface CommandOutput {
  readonly stdout: string
  readonly exitCode: number
}

/** What ADD did, for the log and for tests. */
export type AddOutcome =
  | { readonly _tag: "Skipped"; readonly reason: string }
  | { readonly _tag: "Captured"; readonly actions: ReadonlyArray<string> }
  | { readonly _tag: "Ambient"; readonly agent: string }

const fromEither = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> =>
  Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

const json = (value: unknown) => `${JSON.stringify(value)}\n`

/** ADD after the config was read: look the pod up, decide, program the namespace. */
export const addCapture = (invocation: CniInvocation, stdinConfig: Parameters<typeof pluginConfigOf>[0]) =>
  Effect.gen(function* () {
    const config = yield* fromEither(pluginConfigOf(stdinConfig))
    const ref = podToLookUp(invocation, config)
    if (Either.isLeft(ref)) return { _tag: "Skipped", reason: ref.left.reason } satisfies AddOutcome
    const source = yield* PluginPodSource
    const pod = yield* source.get(config.kubernetes.kubeconfig, ref.right)
    if (config.ambient_enabled === true) {
      const ambient = yield* handToNodeAgent(invocation, config, pod)
      if (ambient !== undefined) return ambient
    }
    const decision = yield* fromEither(decide(podFacts(pod)))
    if (decision._tag === "Skip") return { _tag: "Skipped", reason: decision.reason } satisfies AddOutcome
    const iptables = yield* Iptables
    const options = applyOptionsOf(
      iptablesConfigOf(decision.settings, resultAddresses(config.prevResult)),
      invocation.netns,
    )
    yield* Effect.logDebug("capture configuration", options.config)
    const report = yield* iptables.apply(options).pipe(
      Effect.mapError(
        (error) =>
          new CniError({
            code:
              error._tag === "IptablesConfigError" ? CniErrorCodes.invalidPodAnnotation : CniErrorCodes.captureFailed,
            msg: `cannot program traffic capture for pod ${ref.right.namespace}/${ref.right.name}`,
            details: error.message,
          }),
      ),
    )
    return {
      _tag: "Captured",
      actions: report.actions.map(({ family, action }) => `IPv${family} ${action}`),
    } satisfies AddOutcome
  })

/** Where the node agent listens for this config. */
const agentRunDirOf = (raw: Readonly<Record<string, unknown>>): string =>
  typeof raw.cni_agent_run_dir === "string" && raw.cni_agent_run_dir !== ""
    ? raw.cni_agent_run_dir
    : DEFAULT_AGENT_RUN_DIR

const agentClient = Effect.flatMap(Effect.serviceOption(NodeAgentClient), (client) =>
  Option.match(client, {
    onNone: () =>
      Effect.fail(
        new CniError({ code: CniErrorCodes.internal, msg: "internal error", details: "no node agent client" }),
      ),
    onSome: Effect.succeed,
  }),
)

/**
 * Ambient mode, after the pod was read: an enrolled pod goes to the node agent (undefined when
 * the pod is not enrolled, and the sidecar rules decide as without ambient mode).
 */
const handToNodeAgent = (invocation: CniInvocation, config: MeshCniPluginConfig, pod: PluginPod) =>
  Effect.gen(function* () {
    const source = yield* PluginPodSource
    const namespace = pod.metadata.namespace ?? invocation.args[K8sArgs.podNamespace] ?? ""
    const labels =
      source.namespaceLabels === undefined ? {} : yield* source.namespaceLabels(config.kubernetes.kubeconfig, namespace)
    if (!isAmbientPod(pod, labels)) return undefined
    const client = yield* agentClient
    const answer = yield* client.add(agentRunDirOf(config), {
      netns: invocation.netns,
      containerId: invocation.containerId,
      podName: pod.metadata.name,
      podNamespace: namespace,
      podUid: pod.metadata.uid ?? "",
      serviceAccount: pod.spec?.serviceAccountName ?? "default",
      ips: resultAddresses(config.prevResult).slice(0, 16),
      annotations: redirectionAnnotations(pod.metadata.annotations),
    })
    return { _tag: "Ambient", agent: answer } satisfies AddOutcome
  })

export const runPluginCommand = (
  env: Readonly<Record<string, string | undefined>>,
  stdin: string,
): Effect.Effect<CommandOutput, never, PluginPodSource | Iptables> => {
  // Errors carry the config's version once it is known.
  let cniVersion: string | undefined
  const program = Effect.gen(function* () {
    const invocation = yield* fromEither(parseInvocation(env))
    if (invocation.command === "VERSION") return json(versionInfo())
    const decoded = decodeConfig(stdin, invocation.command)
    cniVersion = decoded.cniVersion
    const config = yield* fromEither(decoded.result)
    const labels = {
      command: invocation.command,
      container: invocation.containerId,
      pod: `${invocation.args.K8S_POD_NAMESPACE ?? ""}/${invocation.args.K8S_POD_NAME ?? ""}`,
    }
    switch (invocation.command) {
      case "ADD": {
        const outcome = yield* addCapture(invocation, config).pipe(Effect.annotateLogs(labels))
        yield* Effect.annotateLogs(
          outcome._tag === "Skipped"
            ? Effect.logInfo(`no capture: ${outcome.reason}`)
            : outcome._tag === "Ambient"
              ? Effect.logInfo(`ambient pod handed to the node agent (${outcome.agent})`)
              : Effect.logInfo(`capture programmed in ${invocation.netns}: ${outcome.actions.join(", ")}`),
          labels,
        )
        return json(addResult(config.cniVersion, config.raw.prevResult))
      }
      case "DEL":
        if (config.raw.ambient_enabled === true) {
          // The node agent lets the pod go; DEL succeeds whatever it answers (the runtime must be
          // able to tear the sandbox down).
          const told = yield* Effect.either(
            Effect.flatMap(agentClient, (client) =>
              client.del(agentRunDirOf(config.raw), {
                containerId: invocation.containerId,
                podName: invocation.args[K8sArgs.podName] ?? "",
                podNamespace: invocation.args[K8sArgs.podNamespace] ?? "",
              }),
            ),
          )
          yield* Effect.annotateLogs(
            Either.isRight(told)
              ? Effect.logDebug(`DEL passed to the node agent: ${told.right}`)
              : Effect.logWarning(`DEL not passed to the node agent: ${told.left.message}`),
            labels,
          )
        } else {
          yield* Effect.annotateLogs(Effect.logDebug("DEL: nothing to undo (the rules go with the namespace)"), labels)
        }
        return ""
      case "CHECK":
        return ""
    }
  })
  return program.pipe(
    Effect.map((stdout) => ({ stdout, exitCode: 0 })),
    // A defect is a bug, but the runtime still needs an error object to show for the pod.
    Effect.catchAllDefect((defect) =>
      Effect.fail(new CniError({ code: CniErrorCodes.internal, msg: "internal error", details: String(defect) })),
    ),
    Effect.catchAll((error) =>
      Effect.as(Effect.logError(error.message).pipe(Effect.annotateLogs("code", error.code)), {
        stdout: json(errorObject(error, cniVersion)),
        exitCode: 1,
      }),
    ),
    withScope("cni-plugin"),
    Effect.withSpan("CniPlugin.run"),
  )
}
