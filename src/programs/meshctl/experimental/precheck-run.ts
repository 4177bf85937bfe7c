/**
 * What `meshctl x precheck` does once its flags are read (loaded lazily): read the cluster
 * (server version, install permissions through SelfSubjectAccessReview, control-plane pods,
 * revision tags, namespaces, pods, the mesh ConfigMap), run services/precheck, print the findings
 * as `analyze` does, and fail on Error findings.
 */
import { Console, Data, Effect } from "effect"
import { load } from "js-yaml"
import { LEVEL_RANK, parseLevel } from "../../../services/analysis/message-types.js"
import { formatJson, formatLog, formatYaml } from "../../../services/analysis/output.js"
import { failsAt } from "../../../services/analysis/run.js"
import { Labels } from "../../../services/constants.js"
import { meshConfigMapName } from "../../../services/mesh-config/configmap.js"
import type { OrchestratorClientShape } from "../../../services/orchestrator/client.js"
import type { OrchConfigMap, OrchObject, OrchPod } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"
import {
  INSTALL_RESOURCES,
  invalidFromVersion,
  type ObjectSummary,
  type PermissionResult,
  resourceName,
  runPrechecks,
} from "../../../services/precheck/checks.js"
import { TAG_LABEL } from "../../../services/revision-tags/names.js"
import { DEFAULT_CONTROL_PLANE_LABEL } from "../control-plane-options.js"
import { orchestratorClient } from "../orchestrator-access.js"
import type { PrecheckArgs } from "./precheck-options.js"

export class PrecheckFailed extends Data.TaggedError("PrecheckFailed")<{ readonly message: string }> {}

const fail = (message: string) => new PrecheckFailed({ message })

const summary = (o: OrchObject): ObjectSummary => {
  const meta = o.metadata as OrchObject["metadata"] & {
    labels?: Record<string, string>
    annotations?: Record<string, string>
  }
  return {
    name: meta.name ?? "",
    namespace: meta.namespace ?? "",
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
  }
}

/** Asks SelfSubjectAccessReview for each kind an install creates; a server without the API cannot be asked. */
const checkPermissions = (client: OrchestratorClientShape, namespace: string) =>
  Effect.gen(function* () {
    const denied: Array<string> = []
    for (const r of INSTALL_RESOURCES) {
      const answer = yield* client
        .request<{ status?: { allowed?: boolean } }>({
          method: "POST",
          path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: { resourceAttributes: { namespace, verb: "create", group: r.group, resource: r.resource } },
          },
        })
        .pipe(Effect.either)
      if (answer._tag === "Left")
        return {
          _tag: "Unavailable",
          reason:
            answer.left.status === 404
              ? "the orchestrator does not serve SelfSubjectAccessReview"
              : answer.left.message,
        } satisfies PermissionResult
      if (answer.right?.status?.allowed !== true) denied.push(resourceName(r))
    }
    return { _tag: "Checked", denied } satisfies PermissionResult
  })

export const runPrecheck = (args: PrecheckArgs) =>
  Effect.gen(function* () {
    const threshold = parseLevel(args.outputThreshold)
    if (threshold === undefined)
      return yield* fail(`invalid --output-threshold "${args.outputThreshold}": one of Info, Warning, Error`)
    if (!["log", "json", "yaml"].includes(args.output))
      return yield* fail(`invalid --output "${args.output}": one of log, json, yaml`)
    const badVersion = invalidFromVersion(args.fromVersion)
    if (badVersion !== undefined) return yield* fail(badVersion)
    const meshNamespace = args.global.meshNamespace
    const client = yield* orchestratorClient(args.global).pipe(Effect.mapError((e) => fail(e.message)))
    const version = yield* client
      .request<{ major: string; minor: string; gitVersion?: string }>({ method: "GET", path: "/version" })
      .pipe(Effect.either)
    const reachable = version._tag === "Right"
    const list = <T extends OrchObject>(
      ref: Parameters<typeof client.list>[0],
      namespace?: string,
      labelSelector?: string,
    ) =>
      reachable
        ? client
            .list<T>(ref, {
              ...(namespace !== undefined ? { namespace } : {}),
              ...(labelSelector !== undefined ? { labelSelector } : {}),
            })
            .pipe(
              Effect.map((page) => page.items),
              Effect.mapError((e) => fail(`cannot list ${ref.kind}: ${e.message}`)),
            )
        : Effect.succeed([] as ReadonlyArray<T>)
    const permissions: PermissionResult =
      reachable && !args.skipControlplane
        ? yield* checkPermissions(client, meshNamespace)
        : { _tag: "Unavailable", reason: "not asked" }
    const controlPlanePods = yield* list<OrchPod>(Resources.pods, meshNamespace, DEFAULT_CONTROL_PLANE_LABEL)
    const tagHooks = yield* list<OrchObject>(Resources.mutatingWebhookConfigurations, undefined, TAG_LABEL)
    const namespaces = yield* list<OrchObject>(Resources.namespaces)
    const pods = yield* list<OrchPod>(Resources.pods)
    const configMaps = yield* list<OrchConfigMap>(Resources.configMaps, meshNamespace)
    const revision = args.revision === "" ? "default" : args.revision
    const meshConfigMap = configMaps.find(
      (c) => c.metadata.name === meshConfigMapName(revision === "default" ? "" : revision),
    )
    let meshConfig: Record<string, unknown> = {}
    const meshText = meshConfigMap?.data?.mesh
    if (meshText !== undefined) {
      const parsed = yield* Effect.try(() => load(meshText)).pipe(Effect.orElseSucceed(() => undefined))
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        meshConfig = parsed as Record<string, unknown>
    }
    const messages = runPrechecks({
      serverVersion: reachable ? version.right : undefined,
      ...(version._tag === "Left" ? { reachError: `${client.server}: ${version.left.message}` } : {}),
      permissions,
      revision,
      installedRevisions: controlPlanePods.map((p) => summary(p).labels[Labels.revision] ?? "default"),
      tags: Object.fromEntries(
        tagHooks.map((h) => [summary(h).labels[TAG_LABEL] ?? "", summary(h).labels[Labels.revision] ?? "default"]),
      ),
      namespaces: namespaces.map(summary),
      pods: pods.map(summary),
      skipControlPlane: args.skipControlplane,
      fromVersion: args.fromVersion,
      meshConfig,
    })
    const shown = messages.filter((m) => LEVEL_RANK[m.level] >= LEVEL_RANK[threshold])
    if (args.output === "json") yield* Effect.sync(() => process.stdout.write(formatJson(shown)))
    else if (args.output === "yaml") yield* Effect.sync(() => process.stdout.write(formatYaml(shown)))
    else if (shown.length === 0)
      yield* Console.log("✔ No issues found when checking the cluster. Mesh is safe to install or upgrade!")
    else yield* Console.log(shown.map((m) => formatLog(m, false)).join("\n"))
    if (failsAt(messages, "Error"))
      return yield* fail(
        "Issues found when checking the cluster. Mesh may not be safe to install or upgrade.\nSee https://mesh.io/latest/docs/reference/config/analysis for more information about causes and resolutions.",
      )
  }).pipe(Effect.scoped)
