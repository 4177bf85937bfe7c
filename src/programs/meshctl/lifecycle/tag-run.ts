/**
 * What the `meshctl tag` subcommands do once their flags are read (loaded lazily): read the
 * injector webhook configurations from the cluster, plan the tag (services/revision-tags), then
 * print it (`generate`) or write it (`set`: create or replace each object); list tags with the
 * namespaces that use them; remove a tag after confirming when namespaces still use it.
 */
import { Console, Data, Effect, Option } from "effect"
import { stringify } from "yaml"
import type { OrchestratorClientShape, OrchestratorError } from "../../../services/orchestrator/client.js"
import type { Obj } from "../../../services/orchestrator/json.js"
import type { OrchCustomObject } from "../../../services/orchestrator/objects.js"
import { type ResourceRef, Resources } from "../../../services/orchestrator/resources.js"
import {
  DEFAULT_INJECTOR_NAME,
  DEFAULT_REVISION,
  namespacesUsingSelector,
  revisionWebhookSelector,
  TAG_LABEL,
  tagWebhookSelector,
} from "../../../services/revision-tags/names.js"
import { confirmed, describeTags, removalWarning, tagTable } from "../../../services/revision-tags/tag-list.js"
import { planTag } from "../../../services/revision-tags/tag-plan.js"
import { nameOf, tagOf } from "../../../services/revision-tags/tag-webhooks.js"
import type { GlobalOptions } from "../global-options.js"
import { orchestratorClient } from "../orchestrator-access.js"
import type { TagListArgs, TagRemoveArgs, TagWriteArgs } from "./tag-options.js"

/** A tag command that could not do what was asked; the message says what and why. */
export class TagFailed extends Data.TaggedError("TagFailed")<{ readonly message: string }> {}

const fail = (message: string) => new TagFailed({ message })

const clientFor = (global: GlobalOptions) => Effect.mapError(orchestratorClient(global), (e) => fail(e.message))

/** Maps a request failure to a message naming what was tried and where. */
const tried =
  (client: OrchestratorClientShape, what: string) =>
  <A, R>(effect: Effect.Effect<A, OrchestratorError, R>) =>
    Effect.mapError(effect, (e) => fail(`cannot ${what} on ${client.server}: ${e.message}`))

const listObjects = (client: OrchestratorClientShape, ref: ResourceRef, labelSelector: string) =>
  client.list<OrchCustomObject>(ref, { labelSelector }).pipe(
    Effect.map((page) => page.items.map((item) => item as unknown as Obj)),
    tried(client, `list ${ref.plural} labelled ${labelSelector}`),
  )

const mutating = Resources.mutatingWebhookConfigurations

const getOptional = (client: OrchestratorClientShape, ref: ResourceRef, name: string) =>
  client.get<OrchCustomObject>(ref, undefined, name).pipe(
    Effect.map((o) => Option.some(o as unknown as Obj)),
    Effect.catchIf(
      (e) => e.notFound,
      () => Effect.succeedNone,
    ),
    Effect.map(Option.getOrUndefined),
    tried(client, `read ${ref.kind} ${name}`),
  )

const refOf = (object: Obj): ResourceRef =>
  object.kind === "ValidatingWebhookConfiguration" ? Resources.validatingWebhookConfigurations : mutating

/** Creates `object`, or replaces the live one of its name. */
const upsert = (client: OrchestratorClientShape, object: Obj) => {
  const ref = refOf(object)
  const name = nameOf(object)
  return Effect.flatMap(getOptional(client, ref, name), (live) => {
    const liveMeta = (live?.metadata ?? {}) as { resourceVersion?: string }
    const write =
      live === undefined
        ? client.create(ref, object as unknown as OrchCustomObject)
        : client.replace(ref, {
            ...object,
            metadata: { ...(object.metadata as object), resourceVersion: liveMeta.resourceVersion },
          } as unknown as OrchCustomObject)
    return tried(client, `write ${ref.kind} ${name}`)(write)
  })
}

const printYaml = (objects: ReadonlyArray<Obj>) =>
  Console.log(
    objects
      .map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false }))
      .join("---\n")
      .trimEnd(),
  )

export const runTagWrite = (mode: "generate" | "set", args: TagWriteArgs) =>
  Effect.gen(function* () {
    if (args.revision === "")
      return yield* fail(`--revision/-r is required: the revision tag "${args.tag}" must reference a revision`)
    const client = yield* clientFor(args.global)
    const [taggedAlready, revisionsNamedLikeTag, revisionInjectors, defaultInjector, defaultRevisionInjectors] =
      yield* Effect.all(
        [
          listObjects(client, mutating, tagWebhookSelector(args.tag)),
          listObjects(client, mutating, revisionWebhookSelector(args.tag)),
          listObjects(client, mutating, revisionWebhookSelector(args.revision)),
          getOptional(client, mutating, DEFAULT_INJECTOR_NAME),
          listObjects(client, mutating, revisionWebhookSelector(DEFAULT_REVISION)),
        ],
        { concurrency: "unbounded" },
      )
    const plan = planTag(
      {
        tag: args.tag,
        revision: args.revision,
        meshNamespace: args.global.meshNamespace,
        webhookName: args.webhookName,
        overwrite: args.overwrite,
        autoInjectNamespaces: args.autoInjectNamespaces,
      },
      {
        taggedAlready,
        revisionsNamedLikeTag,
        revisionInjectors,
        // A webhook that carries a tag label is a tag, never the default install's injector.
        defaultInjector: defaultInjector !== undefined && tagOf(defaultInjector) === "" ? defaultInjector : undefined,
        defaultRevisionInjectors,
      },
    )
    if (plan._tag === "Left") return yield* fail(plan.left)
    if (mode === "generate") return yield* printYaml(plan.right.apply)
    for (const object of plan.right.apply) yield* upsert(client, object)
    for (const stale of plan.right.removeStale)
      yield* tried(client, `delete the superseded tag webhook ${stale}`)(client.remove(mutating, undefined, stale))
    if (plan.right.deactivate !== undefined) yield* upsert(client, plan.right.deactivate)
    yield* Console.log(
      `Revision tag "${args.tag}" created, referencing control plane revision "${args.revision}". To enable injection using this\n` +
        `revision tag, label a namespace: mesh.io/rev=${args.tag}`,
    )
  }).pipe(Effect.scoped)

const namespacesUsing = (client: OrchestratorClientShape, tag: string) =>
  listObjects(client, Resources.namespaces, namespacesUsingSelector(tag))

export const runTagList = (args: TagListArgs) =>
  Effect.gen(function* () {
    const client = yield* clientFor(args.global)
    const webhooks = yield* listObjects(client, mutating, TAG_LABEL)
    const namespaces = yield* client.list<OrchCustomObject>(Resources.namespaces).pipe(
      Effect.map((page) => page.items.map((item) => item as unknown as Obj)),
      tried(client, "list namespaces"),
    )
    const tags = describeTags(webhooks, namespaces)
    if (args.output === "json") return yield* Console.log(JSON.stringify(tags, null, 2))
    if (args.output === "yaml") return yield* Console.log(stringify(tags).trimEnd())
    yield* Effect.sync(() => process.stdout.write(tagTable(tags)))
  }).pipe(Effect.scoped)

/** One line from stdin; undefined when stdin ends (or fails) before giving any. */
const readAnswer = Effect.async<string | undefined>((resume) => {
  const input = process.stdin
  let text = ""
  const finish = (answer: string | undefined) => {
    cleanup()
    resume(Effect.succeed(answer))
  }
  const onData = (chunk: string | Buffer) => {
    text += chunk.toString()
    const end = text.indexOf("\n")
    if (end >= 0) finish(text.slice(0, end))
  }
  const onEnd = () => finish(text === "" ? undefined : text)
  const cleanup = () => {
    input.off("data", onData)
    input.off("end", onEnd)
    input.off("error", onEnd)
    // Nothing else reads stdin: let the process exit without waiting on it.
    input.destroy()
  }
  input.on("data", onData)
  input.on("end", onEnd)
  input.on("error", onEnd)
  return Effect.sync(cleanup)
})

export const runTagRemove = (args: TagRemoveArgs) =>
  Effect.gen(function* () {
    const client = yield* clientFor(args.global)
    const webhooks = yield* listObjects(client, mutating, tagWebhookSelector(args.tag))
    if (webhooks.length === 0)
      return yield* fail(
        `cannot remove tag "${args.tag}": no MutatingWebhookConfiguration labelled ${tagWebhookSelector(args.tag)} on ${client.server}`,
      )
    const using = (yield* namespacesUsing(client, args.tag)).map(nameOf).sort()
    if (using.length > 0 && !args.skipConfirmation) {
      yield* Console.log(removalWarning(args.tag, using))
      yield* Effect.sync(() => process.stdout.write("Proceed with operation? [y/N] "))
      const answer = yield* readAnswer
      if (answer === undefined)
        return yield* fail(
          `\nrevision tag "${args.tag}" not removed: no answer on stdin (give --skip-confirmation/-y to remove it anyway)`,
        )
      if (!confirmed(answer)) return yield* Console.log("Aborting operation.")
    }
    for (const webhook of webhooks)
      yield* tried(
        client,
        `delete MutatingWebhookConfiguration ${nameOf(webhook)}`,
      )(client.remove(mutating, undefined, nameOf(webhook)))
    yield* Console.log(`Revision tag ${args.tag} removed`)
  }).pipe(Effect.scoped)
