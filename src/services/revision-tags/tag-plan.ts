/**
 * What `tag generate`/`tag set` do, decided from what the cluster holds (pure): refuse a tag
 * named like an installed revision (except `default`), find exactly one injector webhook of the
 * target revision, refuse to replace an existing tag without `--overwrite` (spec part 3 §7 rule
 * 2), and build the objects to write. `set default` also deactivates the default revision's own
 * injector so that only the tag serves the revision-less labels, as the reference does.
 */
import { Either } from "effect"
import type { Obj } from "../orchestrator/json.js"
import { DEFAULT_INJECTOR_NAME, DEFAULT_REVISION, DEFAULT_TAG, tagWebhookName } from "./names.js"
import {
  deactivated,
  defaultValidatorConfiguration,
  nameOf,
  revisionOf,
  tagWebhookConfiguration,
} from "./tag-webhooks.js"

export interface TagRequest {
  readonly tag: string
  readonly revision: string
  readonly meshNamespace: string
  /** `--webhook-name`; "" for the default name. */
  readonly webhookName: string
  readonly overwrite: boolean
  readonly autoInjectNamespaces: boolean
}

/** Injector webhook configurations read from the cluster for one request. */
export interface TagClusterView {
  /** Labelled `mesh.io/tag=<tag>`. */
  readonly taggedAlready: ReadonlyArray<Obj>
  /** A revision's own injectors (`mesh.io/rev=<tag>`, no tag label): a revision of the tag's name. */
  readonly revisionsNamedLikeTag: ReadonlyArray<Obj>
  /** The target revision's own injectors (`mesh.io/rev=<revision>`, no tag label). */
  readonly revisionInjectors: ReadonlyArray<Obj>
  /** `mesh-sidecar-injector`, when it exists: the default install's injector. */
  readonly defaultInjector: Obj | undefined
  /** The default revision's own injectors (`mesh.io/rev=default`, no tag label). */
  readonly defaultRevisionInjectors: ReadonlyArray<Obj>
}

export interface TagPlan {
  /** To create or replace, in order. */
  readonly apply: ReadonlyArray<Obj>
  /** Existing tag webhooks of other names, superseded by this one (only when overwriting). */
  readonly removeStale: ReadonlyArray<string>
  /** The default revision's own injector, deactivated (only for `set default`). */
  readonly deactivate: Obj | undefined
}

const names = (objects: ReadonlyArray<Obj>) => objects.map(nameOf).join(", ")

export const planTag = (request: TagRequest, view: TagClusterView): Either.Either<TagPlan, string> => {
  const { tag, revision } = request
  if (tag === "") return Either.left("a revision tag name is required")
  if (revision === "") return Either.left(`--revision/-r is required: the revision tag "${tag}" must reference one`)
  if (view.revisionsNamedLikeTag.length > 0 && tag !== DEFAULT_TAG)
    return Either.left(
      `cannot create revision tag "${tag}": a control plane revision of the same name exists (${names(view.revisionsNamedLikeTag)})`,
    )
  const candidates =
    view.revisionInjectors.length === 0 && revision === DEFAULT_REVISION && view.defaultInjector !== undefined
      ? [view.defaultInjector]
      : view.revisionInjectors
  if (candidates.length === 0)
    return Either.left(
      `cannot find a MutatingWebhookConfiguration of revision "${revision}" (label mesh.io/rev=${revision}${revision === DEFAULT_REVISION ? ` or name ${DEFAULT_INJECTOR_NAME}` : ""}): is that revision installed?`,
    )
  if (candidates.length > 1)
    return Either.left(`found several MutatingWebhookConfigurations of revision "${revision}": ${names(candidates)}`)
  const canonical = candidates[0]!
  if (view.taggedAlready.length > 0 && !request.overwrite) {
    const current = [...new Set(view.taggedAlready.map(revisionOf))].join(", ")
    return Either.left(
      `revision tag "${tag}" already exists and references revision "${current}" (${names(view.taggedAlready)}); use --overwrite to replace it`,
    )
  }
  const name = request.webhookName !== "" ? request.webhookName : tagWebhookName(tag, request.meshNamespace)
  const webhook = tagWebhookConfiguration({
    tag,
    canonical,
    name,
    autoInjectNamespaces: request.autoInjectNamespaces,
  })
  const isDefault = tag === DEFAULT_TAG
  const defaultOwn = view.defaultRevisionInjectors
  return Either.right({
    apply: isDefault ? [webhook, defaultValidatorConfiguration(canonical)] : [webhook],
    removeStale: view.taggedAlready.map(nameOf).filter((n) => n !== name),
    // Only one own injector of the default revision is deactivated; several means a cluster this
    // tool did not shape, left alone.
    deactivate: isDefault && defaultOwn.length === 1 ? deactivated(defaultOwn[0]!) : undefined,
  })
}
