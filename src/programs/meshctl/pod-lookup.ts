/**
 * Finding the one pod a command talks to (`dashboard`, `x proxy-stats`, `x metrics`): named as
 * `[<type>/]<name>[.<namespace>]`, or the first running, addressed pod a label selector matches
 * (by name order, so the choice is stable). Load lazily: it brings in the orchestrator client.
 */
import { Data, Effect, type Scope } from "effect"
import type { MeshctlEnv } from "../../services/config/meshctl-env.js"
import type { OrchestratorClientShape } from "../../services/orchestrator/client.js"
import type { OrchPod } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"
import { parsePodRef } from "./diagnostics/proxy-config-live.js"
import type { GlobalOptions } from "./global-options.js"
import { orchestratorClient } from "./orchestrator-access.js"

export class PodLookupFailed extends Data.TaggedError("PodLookupFailed")<{ readonly message: string }> {}

export interface FoundPod {
  readonly name: string
  readonly namespace: string
  readonly ip: string
  readonly pod: OrchPod
}

export interface PodQuery {
  /** `[<type>/]<name>[.<namespace>]`, or "" to use the selector. */
  readonly pod: string
  readonly selector: string
  /** Where the selector looks. */
  readonly selectorNamespace: string
  /** The namespace of a named pod without one when `-n` is not given (default `default`). */
  readonly podNamespace?: string
}

/** A named pod, or why it cannot be had (not found, or the API's error), as a message. */
export const getPodByRef = (
  client: OrchestratorClientShape,
  ref: { readonly name: string; readonly namespace: string },
): Effect.Effect<OrchPod, string> =>
  client
    .get<OrchPod>(Resources.pods, ref.namespace, ref.name)
    .pipe(
      Effect.mapError((e) =>
        e.notFound
          ? `pod ${ref.name}.${ref.namespace} not found`
          : `cannot get pod ${ref.name}.${ref.namespace}: ${e.message}`,
      ),
    )

/** A pod's address: `status.podIP`, else the first of `podIPs`; "" before it has one. */
export const ipOf = (pod: OrchPod): string => pod.status?.podIP ?? pod.status?.podIPs?.[0]?.ip ?? ""

export const findPod = (
  global: GlobalOptions,
  query: PodQuery,
): Effect.Effect<FoundPod, PodLookupFailed, Scope.Scope | MeshctlEnv> =>
  Effect.gen(function* () {
    const fail = (message: string) => new PodLookupFailed({ message })
    if (query.pod === "" && query.selector === "") return yield* fail("specify a pod or --selector/-l")
    const client = yield* orchestratorClient(global).pipe(Effect.mapError((e) => fail(e.message)))
    if (query.pod !== "") {
      const ref = parsePodRef(query.pod, global.namespace || query.podNamespace || "default")
      if (typeof ref === "string") return yield* fail(ref)
      const pod = yield* getPodByRef(client, ref).pipe(Effect.mapError(fail))
      const ip = ipOf(pod)
      if (ip === "") return yield* fail(`pod ${ref.name}.${ref.namespace} has no IP yet`)
      return { name: ref.name, namespace: ref.namespace, ip, pod }
    }
    const namespace = query.selectorNamespace
    const page = yield* client
      .list<OrchPod>(Resources.pods, { namespace, labelSelector: query.selector })
      .pipe(Effect.mapError((e) => fail(`cannot list pods in ${namespace} on ${client.server}: ${e.message}`)))
    const running = page.items
      .filter((p) => (p.status?.phase ?? "Running") === "Running" && ipOf(p) !== "")
      .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))
    const first = running[0]
    if (first === undefined)
      return yield* fail(`no pods found with selector ${query.selector} in namespace ${namespace}`)
    return { name: first.metadata.name ?? "", namespace, ip: ipOf(first), pod: first }
  })

/** The port of a container port named `name`, else `fallback`. */
export const namedPort = (pod: OrchPod, name: string, fallback: number): number =>
  pod.spec?.containers?.flatMap((c) => c.ports ?? []).find((p) => p.name === name)?.containerPort ?? fallback
