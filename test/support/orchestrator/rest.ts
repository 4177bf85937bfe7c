/**
 * The verbs of the orchestrator API with their real semantics, independent of HTTP: uid,
 * creationTimestamp, generation, optimistic concurrency on resourceVersion, the status
 * subresource, finalizers, paged lists from a consistent snapshot, dry runs, and the side
 * effects of CustomResourceDefinitions and Namespaces.
 */
import { randomBytes, randomUUID } from "node:crypto"
import { serverSideApply } from "./apply.js"
import { Allocators, applyDefaults } from "./defaults.js"
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js"
import { apiVersionOf, type KubeObject, type Registry, type ResourceType, typeOfCrd } from "./resources.js"
import { fieldSelector, labelSelector } from "./selectors.js"
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  failure,
  invalid,
  notFound,
  unsupportedMediaType,
} from "./status.js"
import type { Store } from "./store.js"

/** Where a request points: a type at one of its versions, in a namespace or across all. */
export interface Scope {
  readonly type: ResourceType
  readonly version: string
  readonly namespace?: string | undefined
}

export interface ListOptions {
  readonly labelSelector?: string
  readonly fieldSelector?: string
  readonly limit?: number
  readonly continue?: string
  readonly resourceVersion?: string
  readonly resourceVersionMatch?: string
}

export interface ListObject {
  readonly kind: string
  readonly apiVersion: string
  readonly metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }
  readonly items: Array<KubeObject>
}

export interface WriteOptions {
  readonly dryRun?: boolean
  readonly subresource?: "status"
  /** Server-side apply: who applies (required there) and whether to take over others' fields. */
  readonly fieldManager?: string
  readonly force?: boolean
}

export interface TokenReviewStatus {
  readonly authenticated?: boolean
  readonly user?: { username?: string; uid?: string; groups?: Array<string>; extra?: Record<string, Array<string>> }
  readonly audiences?: Array<string>
  readonly error?: string
}
export type TokenReviewer = (spec: { token?: string; audiences?: Array<string> }) => TokenReviewStatus

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/
const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, "Z")
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)
const withoutVersion = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } })
/** What counts as the spec for `generation`: everything but metadata and status. */
const specOf = ({ metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest }: KubeObject) => rest

interface ContinueToken {
  readonly v: string
  readonly rv: number
  readonly start: string
}
const encodeContinue = (rv: number, start: string): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv, start })).toString("base64url")
const decodeContinue = (token: string): ContinueToken => {
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString()) as ContinueToken
    if (parsed.v !== "meta.k8s.io/v1" || typeof parsed.rv !== "number") throw new Error()
    return parsed
  } catch {
    throw badRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
  }
}
const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name}`

export class Api {
  private readonly alloc = new Allocators()
  /** Server-side apply: the last configuration each manager applied, by object uid and manager. */
  private readonly applied = new Map<string, unknown>()

  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
    readonly options: { readonly requireNamespace: boolean; tokenReviewer: TokenReviewer },
  ) {}

  /** The object as served at `version`; typed (built-in) list items carry no kind/apiVersion. */
  present(type: ResourceType, version: string, o: KubeObject, inList = false): KubeObject {
    if (inList && type.builtin) {
      const { apiVersion: _a, kind: _k, ...rest } = o
      return rest as KubeObject
    }
    return { ...o, apiVersion: apiVersionOf(type.group, version), kind: type.kind }
  }

  get(scope: Scope, name: string): KubeObject {
    const o = this.store.get(scope.type, scope.namespace, name)
    if (o === undefined) throw notFound(scope.type, name)
    return this.present(scope.type, scope.version, o)
  }

  list(scope: Scope, options: ListOptions): ListObject {
    const matches = this.matcher(scope.type, options)
    const current = this.store.resourceVersion
    let rv = current
    let start = ""
    let items: Array<KubeObject> | undefined
    if (options.continue !== undefined && options.continue !== "") {
      const token = decodeContinue(options.continue)
      start = token.start
      if (token.rv === -1) items = this.store.list(scope.type, scope.namespace)
      else {
        rv = token.rv
        items = this.store.listAt(scope.type, rv, scope.namespace)
        if (items === undefined)
          throw expired(
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
            encodeContinue(-1, start),
          )
      }
    } else if (options.resourceVersionMatch === "Exact" && options.resourceVersion !== undefined) {
      rv = Number(options.resourceVersion)
      items = this.store.listAt(scope.type, rv, scope.namespace)
      if (items === undefined) throw expired(`too old resource version: ${rv} (${this.store.oldestResourceVersion})`)
    } else items = this.store.list(scope.type, scope.namespace)
    const selected = items.filter((o) => keyOf(o) >= start && matches(o))
    // resourceVersion=0 is served from the watch cache, which ignores limit.
    const limit = options.resourceVersion === "0" && start === "" ? undefined : options.limit
    const page = limit !== undefined && limit > 0 ? selected.slice(0, limit) : selected
    const more = selected.length - page.length
    const metadata: ListObject["metadata"] = { resourceVersion: String(rv) }
    if (more > 0) {
      metadata.continue = encodeContinue(rv, `${keyOf(page[page.length - 1]!)}\u0000`)
      if (options.labelSelector === undefined && options.fieldSelector === undefined) metadata.remainingItemCount = more
    }
    return {
      kind: scope.type.listKind,
      apiVersion: apiVersionOf(scope.type.group, scope.version),
      metadata,
      items: page.map((o) => this.present(scope.type, scope.version, o, true)),
    }
  }

  matcher(type: ResourceType, options: Pick<ListOptions, "labelSelector" | "fieldSelector">) {
    const labels = labelSelector(options.labelSelector)
    const fields = fieldSelector(options.fieldSelector, type)
    return (o: KubeObject) => labels(o) && fields(o)
  }

  create(scope: Scope, body: unknown, options: WriteOptions = {}): KubeObject {
    const { type } = scope
    const o = this.checkBody(scope, body)
    if (type.kind === "TokenReview") {
      const spec = (o.spec ?? {}) as { token?: string; audiences?: Array<string> }
      return {
        ...this.present(type, scope.version, o),
        metadata: { creationTimestamp: null } as never,
        status: this.options.tokenReviewer(spec),
      }
    }
    if (o.metadata.name === undefined || o.metadata.name === "") {
      if (o.metadata.generateName === undefined)
        throw invalid(type.kind, type.group, "", "metadata.name", "Required value: name or generateName is required")
      o.metadata.name = `${o.metadata.generateName}${randomBytes(4).toString("hex").slice(0, 5)}`
    }
    this.checkName(type, o.metadata.name)
    if (type.namespaced && this.options.requireNamespace) this.checkNamespace(o.metadata.namespace!)
    if (this.store.get(type, o.metadata.namespace, o.metadata.name) !== undefined)
      throw alreadyExists(type, o.metadata.name)
    const { resourceVersion: _rv, deletionTimestamp: _d, ...metadata } = o.metadata
    let created: KubeObject = {
      ...o,
      metadata: {
        ...metadata,
        uid: randomUUID(),
        creationTimestamp: now(),
        ...(type.generation ? { generation: 1 } : {}),
      },
    }
    // Custom resources with a status subresource drop status on create, as the real server does.
    if (type.status && !type.builtin) delete created.status
    created = applyDefaults(type.kind, created, undefined, this.alloc, true)
    return this.present(type, scope.version, options.dryRun ? created : this.commit(type, created))
  }

  update(scope: Scope, name: string, body: unknown, options: WriteOptions = {}): KubeObject {
    const { type } = scope
    const o = this.checkBody(scope, body)
    if (o.metadata.name !== name)
      throw badRequest(`the name of the object (${o.metadata.name}) does not match the name on the URL (${name})`)
    const previous = this.store.get(type, scope.namespace, name)
    if (previous === undefined) {
      if (type.createOnUpdate && options.subresource === undefined) return this.create(scope, body, options)
      throw notFound(type, name)
    }
    const rv = o.metadata.resourceVersion
    if (rv === undefined || rv === "") {
      if (!type.builtin)
        throw invalid(
          type.kind,
          type.group,
          name,
          "metadata.resourceVersion",
          "Invalid value: 0x0: must be specified for an update",
        )
    } else if (rv !== previous.metadata.resourceVersion) throw conflict(type, name)
    return this.replace(scope, previous, o, options)
  }

  patch(scope: Scope, name: string, contentType: string, patch: unknown, options: WriteOptions = {}): KubeObject {
    const { type } = scope
    if (contentType === "application/apply-patch+yaml") return this.apply(scope, name, patch, options)
    const previous = this.store.get(type, scope.namespace, name)
    if (previous === undefined) throw notFound(type, name)
    const current = this.present(type, scope.version, previous)
    let patched: unknown
    if (contentType === "application/merge-patch+json") patched = mergePatch(current, patch)
    else if (contentType === "application/json-patch+json") patched = jsonPatch(current, patch)
    else if (contentType === "application/strategic-merge-patch+json" && type.builtin)
      patched = strategicMergePatch(current, patch, type.kind)
    else
      throw unsupportedMediaType([
        "application/json-patch+json",
        "application/merge-patch+json",
        ...(type.builtin ? ["application/strategic-merge-patch+json"] : []),
      ])
    const o = this.checkBody(scope, patched)
    if (o.metadata.name !== name)
      throw badRequest("metadata.name: Invalid value: the name may not be changed by a patch")
    // A resourceVersion in the patch is a precondition.
    const rv = o.metadata.resourceVersion
    if (rv !== undefined && rv !== previous.metadata.resourceVersion) throw conflict(type, name)
    return this.replace(scope, previous, o, options)
  }

  /** Server-side apply: creates the object when absent; conflicts between managers are not detected. */
  private apply(scope: Scope, name: string, patch: unknown, options: WriteOptions): KubeObject {
    const { type } = scope
    const manager = options.fieldManager ?? ""
    if (manager === "") throw badRequest("PATCH, application/apply-patch+yaml requires the fieldManager parameter")
    const config = this.checkBody(scope, patch)
    if (config.metadata.name !== name)
      throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`)
    const previous = this.store.get(type, scope.namespace, name)
    const remember = (o: KubeObject): KubeObject => {
      if (!options.dryRun) this.applied.set(`${o.metadata.uid}/${manager}/${options.subresource ?? ""}`, config)
      return o
    }
    if (previous === undefined) {
      if (options.subresource !== undefined) throw notFound(type, name)
      return remember(this.create(scope, config, options))
    }
    const before = this.applied.get(`${previous.metadata.uid}/${manager}/${options.subresource ?? ""}`)
    const merged = serverSideApply(this.present(type, scope.version, previous), before, config)
    const o = this.checkBody(scope, merged)
    return remember(this.replace(scope, previous, o, options))
  }

  delete(
    scope: Scope,
    name: string,
    options: WriteOptions & { preconditions?: { resourceVersion?: string; uid?: string } } = {},
  ): KubeObject {
    const { type } = scope
    const previous = this.store.get(type, scope.namespace, name)
    if (previous === undefined) throw notFound(type, name)
    const pre = options.preconditions
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== previous.metadata.resourceVersion)
      throw new ApiError(
        failure(
          409,
          "Conflict",
          `Operation cannot be fulfilled on ${type.plural} "${name}": Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${previous.metadata.resourceVersion}`,
          { name, group: type.group, kind: type.plural },
        ),
      )
    if (pre?.uid !== undefined && pre.uid !== previous.metadata.uid) throw conflict(type, name)
    if (options.dryRun) return this.present(type, scope.version, previous)
    if ((previous.metadata.finalizers ?? []).length > 0) {
      if (previous.metadata.deletionTimestamp !== undefined) return this.present(type, scope.version, previous)
      const marking = {
        ...previous,
        metadata: { ...previous.metadata, deletionTimestamp: now(), deletionGracePeriodSeconds: 0 },
      }
      return this.present(type, scope.version, this.commit(type, marking))
    }
    return this.present(type, scope.version, this.removeNow(type, previous))
  }

  deleteCollection(scope: Scope, options: ListOptions & WriteOptions): ListObject {
    const list = this.list(scope, { ...options, limit: 0 })
    for (const item of list.items)
      this.delete({ ...scope, namespace: item.metadata.namespace }, item.metadata.name!, options)
    return list
  }

  /** Test hook: writes `o` as given (status included), creating or replacing, no checks. */
  put(type: ResourceType, o: KubeObject): KubeObject {
    const previous = this.store.get(type, o.metadata.namespace, o.metadata.name!)
    const next: KubeObject = {
      ...o,
      apiVersion: apiVersionOf(type.group, type.versions[0]!),
      kind: type.kind,
      metadata: {
        ...o.metadata,
        uid: previous?.metadata.uid ?? o.metadata.uid ?? randomUUID(),
        creationTimestamp: previous?.metadata.creationTimestamp ?? o.metadata.creationTimestamp ?? now(),
        generation: this.generation(type, previous, o),
      },
    }
    return this.commit(type, applyDefaults(type.kind, next, previous, this.alloc, false))
  }

  /** Test hook and the end of a deletion: removes at once, cascading for CRDs and Namespaces. */
  removeNow(type: ResourceType, o: KubeObject): KubeObject {
    if (type.kind === "Namespace")
      for (const t of this.registry.all())
        if (t.namespaced) for (const item of this.store.list(t, o.metadata.name)) this.removeNow(t, item)
    if (type.kind === "CustomResourceDefinition") {
      const declared = typeOfCrd(o)
      for (const item of this.store.list(declared))
        this.store.remove(declared, item.metadata.namespace, item.metadata.name!)
      this.registry.remove(declared.group, declared.plural)
    }
    return this.store.remove(type, o.metadata.namespace, o.metadata.name!)!
  }

  private replace(scope: Scope, previous: KubeObject, o: KubeObject, options: WriteOptions): KubeObject {
    const { type } = scope
    let next: KubeObject
    if (options.subresource === "status") next = { ...previous, status: o.status }
    else {
      next = {
        ...o,
        metadata: {
          ...o.metadata,
          uid: previous.metadata.uid,
          creationTimestamp: previous.metadata.creationTimestamp,
          ...(previous.metadata.deletionTimestamp === undefined
            ? {}
            : { deletionTimestamp: previous.metadata.deletionTimestamp }),
        },
      }
      if (type.status) {
        if (previous.status === undefined) delete next.status
        else next.status = previous.status
      }
      next = applyDefaults(type.kind, next, previous, this.alloc, false)
    }
    next = {
      ...next,
      apiVersion: previous.apiVersion,
      metadata: { ...next.metadata, generation: this.generation(type, previous, next) },
    }
    if (next.metadata.generation === undefined) delete next.metadata.generation
    if (same(withoutVersion(next), withoutVersion(previous)) || options.dryRun)
      return this.present(type, scope.version, options.dryRun ? next : previous)
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0)
      return this.present(type, scope.version, this.removeNow(type, next))
    return this.present(type, scope.version, this.commit(type, next))
  }

  private generation(type: ResourceType, previous: KubeObject | undefined, next: KubeObject): number | undefined {
    if (!type.generation) return undefined
    const old = previous?.metadata.generation
    if (old === undefined) return 1
    return same(specOf(previous!), specOf(next)) ? old : old + 1
  }

  /** Stores with a new resourceVersion, and registers the type a CRD declares. */
  private commit(type: ResourceType, o: KubeObject): KubeObject {
    const stored = {
      ...o,
      apiVersion: apiVersionOf(type.group, type.versions[0]!),
      kind: type.kind,
      metadata: { ...o.metadata, resourceVersion: String(this.store.nextRevision()) },
    }
    if (type.kind === "CustomResourceDefinition") this.registry.add(typeOfCrd(stored))
    this.store.put(type, stored)
    return stored
  }

  private checkBody(scope: Scope, body: unknown): KubeObject {
    const { type } = scope
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw badRequest("the body of the request must be a JSON object")
    const o = structuredClone(body) as KubeObject
    o.metadata = typeof o.metadata === "object" && o.metadata !== null ? o.metadata : {}
    const apiVersion = apiVersionOf(type.group, scope.version)
    if ((o.kind !== undefined && o.kind !== type.kind) || (o.apiVersion !== undefined && o.apiVersion !== apiVersion))
      throw badRequest(
        `the API version in the data (${o.apiVersion}) does not match the expected API version (${apiVersion})`,
      )
    if (type.namespaced) {
      if (o.metadata.namespace !== undefined && o.metadata.namespace !== "" && o.metadata.namespace !== scope.namespace)
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request")
      o.metadata.namespace = scope.namespace
    } else delete o.metadata.namespace
    return o
  }

  private checkName(type: ResourceType, name: string): void {
    if (name.length > 253 || !NAME.test(name))
      throw invalid(
        type.kind,
        type.group,
        name,
        "metadata.name",
        `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      )
  }

  private checkNamespace(namespace: string): void {
    const namespaces = this.registry.lookup("", "v1", "namespaces")!
    if (this.store.get(namespaces, undefined, namespace) === undefined) throw notFound(namespaces, namespace)
  }
}
