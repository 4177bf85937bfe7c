/**
 * The orchestrator as meshctl's installer uses it, through `@kubernetes/client-node`'s
 * KubernetesObjectApi (it discovers each kind's path): server-side apply as field manager
 * `meshctl` (forced, so meshctl takes back fields others changed), get, list by label and
 * delete. Objects cross this boundary as plain JSON: typed library models stay inside.
 */
import {
  ApiException,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  type RequestContext,
  type ResponseContext,
} from "@kubernetes/client-node"
import { Data, Effect } from "effect"
import type { InstallKind, ObjectRef } from "../../services/install/apply-plan.js"
import { FIELD_MANAGER } from "../../services/install/names.js"
import type { Obj } from "../../services/orchestrator/json.js"

export class InstallClusterError extends Data.TaggedError("InstallClusterError")<{
  readonly status: number
  readonly message: string
}> {}

export interface InstallCluster {
  /** The context and server, for messages. */
  readonly where: string
  readonly apply: (o: Obj, dryRun: boolean) => Effect.Effect<Obj, InstallClusterError>
  /** Undefined when the object does not exist. */
  readonly get: (ref: ObjectRef) => Effect.Effect<Obj | undefined, InstallClusterError>
  /** Every object of a kind (in all namespaces) with the labels of `labelSelector`; none when the kind is not served. */
  readonly list: (kind: InstallKind, labelSelector: string) => Effect.Effect<ReadonlyArray<Obj>, InstallClusterError>
  /** False when it was already gone. */
  readonly remove: (ref: ObjectRef, dryRun: boolean) => Effect.Effect<boolean, InstallClusterError>
}

const messageOf = (error: unknown): { status: number; message: string } => {
  if (error instanceof ApiException) {
    const body = error.body as unknown
    let parsed: unknown = body
    if (typeof body === "string") {
      try {
        parsed = JSON.parse(body)
      } catch {
        parsed = undefined
      }
    }
    const message =
      typeof parsed === "object" && parsed !== null && "message" in parsed
        ? String((parsed as { message: unknown }).message)
        : String(body ?? error.message)
    return { status: error.code, message }
  }
  const e = error as { message?: string; code?: string; cause?: { code?: string } }
  return { status: 0, message: [e.message, e.code ?? e.cause?.code].filter(Boolean).join(": ") || String(error) }
}

/** JSON view of what the library returns. */
const plain = (o: unknown): Obj => JSON.parse(JSON.stringify(o)) as Obj

/**
 * The library's object API without its typed models: they drop fields they do not model (a
 * CRD schema's `enum` and `x-kubernetes-preserve-unknown-fields`), so applied bodies go out
 * as the JSON they are and answers come back as the JSON the server sent.
 */
class RawObjectApi extends KubernetesObjectApi {
  async applyRaw(o: Obj, dryRun: boolean): Promise<unknown> {
    const path = await this.specUriPath(o as never, "patch")
    const request = this.configuration.baseServer.makeRequestContext(path, "PATCH" as never)
    request.setHeaderParam("Accept", "application/json")
    request.setHeaderParam("Content-Type", PatchStrategy.ServerSideApply)
    request.setQueryParam("fieldManager", FIELD_MANAGER)
    request.setQueryParam("force", "true")
    if (dryRun) request.setQueryParam("dryRun", "All")
    request.setBody(JSON.stringify(o))
    return this.requestPromise(request)
  }

  protected override async processResponse<T extends KubernetesObject>(
    response: ResponseContext,
    type?: string,
  ): Promise<T> {
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299)
      return JSON.parse(await response.body.text()) as T
    return super.processResponse(response, type)
  }
}

/** Who to act as (`--as`, `--as-group`, `--as-uid`); an empty user acts as the kubeconfig's. */
export interface Impersonation {
  readonly user: string
  readonly groups: ReadonlyArray<string>
  readonly uid: string
}

/**
 * A kubeconfig whose every request carries the Impersonate-* headers. The library's request
 * context holds one value per header, so at most one group can be sent this way.
 */
class ImpersonatingKubeConfig extends KubeConfig {
  constructor(private readonly as: Impersonation) {
    super()
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context)
    context.setHeaderParam("Impersonate-User", this.as.user)
    const group = this.as.groups[0]
    if (group !== undefined) context.setHeaderParam("Impersonate-Group", group)
    if (this.as.uid !== "") context.setHeaderParam("Impersonate-Uid", this.as.uid)
  }
}

/** Why these impersonation flags cannot be sent, if they cannot. */
const impersonationProblem = (as: Impersonation | undefined): string | undefined => {
  if (as === undefined) return undefined
  if (as.user === "" && (as.groups.length > 0 || as.uid !== "")) return "--as-group and --as-uid need --as"
  if (as.groups.length > 1) return "the install commands can act as one --as-group only"
  return undefined
}

const callAt =
  (where: string) =>
  <A>(what: string, f: () => Promise<A>) =>
    Effect.tryPromise({
      try: f,
      catch: (error) => {
        const { status, message } = messageOf(error)
        return new InstallClusterError({ status, message: `${what}: ${message} (${where})` })
      },
    })

const describe = (ref: ObjectRef) => `${ref.kind} ${ref.namespace === undefined ? "" : `${ref.namespace}/`}${ref.name}`

export const makeInstallCluster = (source: {
  readonly path: string
  readonly context: string
  readonly impersonate?: Impersonation
}): Effect.Effect<InstallCluster, InstallClusterError> =>
  impersonationProblem(source.impersonate) !== undefined
    ? Effect.fail(new InstallClusterError({ status: 0, message: impersonationProblem(source.impersonate) ?? "" }))
    : Effect.try({
        try: () => {
          const as = source.impersonate
          const kc = as === undefined || as.user === "" ? new KubeConfig() : new ImpersonatingKubeConfig(as)
          kc.loadFromFile(source.path)
          if (source.context !== "") kc.setCurrentContext(source.context)
          return kc
        },
        catch: (e) => new InstallClusterError({ status: 0, message: `cannot load ${source.path}: ${String(e)}` }),
      }).pipe(
        Effect.map((kc): InstallCluster => {
          const api = kc.makeApiClient(RawObjectApi)
          // The library sets the kubeconfig's namespace as default only through its own factory.
          ;(api as unknown as { setDefaultNamespace: (k: KubeConfig) => void }).setDefaultNamespace(kc)
          const where = `context "${kc.getCurrentContext()}", server ${kc.getCurrentCluster()?.server ?? "?"}`
          const call = callAt(where)
          const refBody = (ref: ObjectRef) => ({
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            metadata: { name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }) },
          })
          return {
            where,
            apply: (o, dryRun) =>
              call(`apply ${String(o.kind)} ${String((o.metadata as Obj | undefined)?.name)}`, () =>
                api.applyRaw(structuredClone(o), dryRun),
              ).pipe(Effect.map(plain)),
            get: (ref) =>
              call(`get ${describe(ref)}`, () => api.read(refBody(ref) as never)).pipe(
                Effect.map((o): Obj | undefined => ({ ...plain(o), apiVersion: ref.apiVersion, kind: ref.kind })),
                Effect.catchIf(
                  (e) => e.status === 404,
                  () => Effect.sync((): Obj | undefined => undefined),
                ),
              ),
            list: (kind, labelSelector) =>
              call(`list ${kind.kind}`, () =>
                api.list(
                  kind.apiVersion,
                  kind.kind,
                  undefined,
                  undefined,
                  undefined,
                  undefined,
                  undefined,
                  labelSelector,
                ),
              ).pipe(
                // List items of built-in kinds come without apiVersion and kind.
                Effect.map((list) =>
                  (list.items ?? []).map((item) => ({ ...plain(item), apiVersion: kind.apiVersion, kind: kind.kind })),
                ),
                Effect.catchIf(
                  (e) => e.status === 404 || e.message.includes("Unrecognized API version and kind"),
                  () => Effect.succeed([]),
                ),
              ),
            remove: (ref, dryRun) =>
              call(`delete ${describe(ref)}`, () =>
                api.delete(
                  refBody(ref) as never,
                  undefined,
                  dryRun ? "All" : undefined,
                  undefined,
                  undefined,
                  "Background",
                ),
              ).pipe(
                Effect.as(true),
                Effect.catchIf(
                  (e) => e.status === 404,
                  () => Effect.succeed(false),
                ),
              ),
          }
        }),
      )
