/**
 * What `meshctl create-remote-secret` does once its flags are read (loaded lazily): find (or
 * create) the service account and its token Secret in the system namespace, and print the remote
 * Secret whose kubeconfig reaches this cluster's API server with that token or an auth plugin.
 */
import { readFileSync } from "node:fs"
import { Console, Data, Duration, Effect, Option, Schedule } from "effect"
import { MeshctlEnv } from "../../../services/config/meshctl-env.js"
import {
  authFlagsProblem,
  chooseTokenSecret,
  defaultServiceAccount,
  type RemoteAuth,
  remoteKubeconfig,
  remoteSecret,
  renderRemoteSecret,
  serviceAccountObjects,
  tokenOf,
  tokenSecret,
} from "../../../services/multicluster/remote-secret.js"
import type { OrchestratorClientShape, OrchestratorError } from "../../../services/orchestrator/client.js"
import { selectKubeconfig } from "../../../services/orchestrator/kubeconfig.js"
import type { OrchObject, OrchSecret } from "../../../services/orchestrator/objects.js"
import { type ResourceRef, Resources } from "../../../services/orchestrator/resources.js"
import type { GlobalOptions } from "../global-options.js"
import { orchestratorClient } from "../orchestrator-access.js"
import { kubeconfigPath } from "../orchestrator-source.js"
import type { CreateRemoteSecretArgs } from "./create-remote-secret-options.js"

/** The failure of `meshctl create-remote-secret`. */
export class CreateRemoteSecretFailed extends Data.TaggedError("CreateRemoteSecretFailed")<{
  readonly message: string
}> {}

class TokenNotFilled extends Data.TaggedError("TokenNotFilled")<{}> {}

const serviceAccounts: ResourceRef = {
  group: "",
  version: "v1",
  plural: "serviceaccounts",
  kind: "ServiceAccount",
  namespaced: true,
}

/** The REST resource of a manifest object (the kinds `serviceAccountObjects` renders). */
const refOf = (o: { apiVersion?: unknown; kind?: unknown; metadata?: { namespace?: string } }): ResourceRef => {
  const [group, version] = String(o.apiVersion).includes("/")
    ? String(o.apiVersion).split("/")
    : ["", String(o.apiVersion)]
  const kind = String(o.kind)
  return {
    group: group!,
    version: version!,
    kind,
    plural: `${kind.toLowerCase()}s`,
    namespaced: o.metadata?.namespace !== undefined,
  }
}

const failed = (message: string) => new CreateRemoteSecretFailed({ message })
const because = (what: string) => (e: OrchestratorError) => failed(`${what}: ${e.message}`)

/** The CA of the kubeconfig's cluster (of `--context`, else the current one); empty when none. */
const kubeconfigCa = (global: GlobalOptions, kubeconfigEnv: string): string => {
  const source = kubeconfigPath(global, kubeconfigEnv)
  if (source === undefined) return ""
  try {
    const { cluster } = selectKubeconfig(readFileSync(source.path, "utf8"), {
      file: source.path,
      context: global.context,
    })
    if (cluster.caData) return Buffer.from(cluster.caData, "base64").toString()
    if (cluster.caFile) return readFileSync(cluster.caFile, "utf8")
  } catch {
    // No readable CA: the secret then relies on the reader's trust store (or --tls-server-name).
  }
  return ""
}

const ensureServiceAccount = (
  client: OrchestratorClientShape,
  args: CreateRemoteSecretArgs,
  namespace: string,
  sa: string,
) =>
  Effect.gen(function* () {
    const found = yield* client
      .get<OrchObject & { secrets?: Array<{ name?: string }> }>(serviceAccounts, namespace, sa)
      .pipe(
        Effect.asSome,
        Effect.catchIf(
          (e) => e.notFound,
          () => Effect.succeedNone,
        ),
        Effect.map(Option.getOrUndefined),
        Effect.mapError(because(`could not read serviceaccount ${namespace}/${sa}`)),
      )
    if (found !== undefined) return found
    if (!args.createServiceAccount)
      return yield* failed(
        `serviceaccount ${namespace}/${sa} not found (and --create-service-account=false); create it or drop the flag`,
      )
    for (const object of serviceAccountObjects(args.type, sa, namespace))
      yield* client.create(refOf(object), object as unknown as OrchObject).pipe(
        Effect.catchIf(
          (e) => e.conflict,
          () => Effect.void,
        ),
        Effect.mapError(because(`could not create ${String(object.kind)} for serviceaccount ${namespace}/${sa}`)),
      )
    return { metadata: { name: sa, namespace } } as OrchObject & { secrets?: Array<{ name?: string }> }
  })

/** The token (and CA) of the service account, creating its token Secret when it has none. */
const serviceAccountToken = (
  client: OrchestratorClientShape,
  args: CreateRemoteSecretArgs,
  namespace: string,
  sa: string,
) =>
  Effect.gen(function* () {
    const account = yield* ensureServiceAccount(client, args, namespace, sa)
    const secrets = yield* client
      .list<OrchSecret>(Resources.secrets, { namespace })
      .pipe(Effect.mapError(because(`could not list secrets of namespace ${namespace}`)))
    const choice = chooseTokenSecret({
      serviceAccount: sa,
      namespace,
      listed: (account.secrets ?? []).flatMap((s) => (s.name === undefined ? [] : [s.name])),
      secrets: secrets.items,
      secretName: args.secretName,
    })
    if (choice._tag === "error") return yield* failed(choice.message)
    if (choice._tag === "create")
      yield* client.create(Resources.secrets, tokenSecret(sa, namespace) as unknown as OrchSecret).pipe(
        Effect.catchIf(
          (e) => e.conflict,
          () => Effect.void,
        ),
        Effect.mapError(because(`could not create token secret ${namespace}/${choice.name}`)),
      )
    // The orchestrator's token controller fills a new token Secret shortly after it is created.
    const wait = args.global.orchclientTimeout
    return yield* client.get<OrchSecret>(Resources.secrets, namespace, choice.name).pipe(
      Effect.mapError(because(`could not read token secret ${namespace}/${choice.name}`)),
      Effect.flatMap((secret) => {
        const filled = tokenOf(secret)
        return filled === undefined ? Effect.fail(new TokenNotFilled()) : Effect.succeed(filled)
      }),
      Effect.retry({ while: (e) => e._tag === "TokenNotFilled", schedule: Schedule.spaced("100 millis") }),
      Effect.timeoutFail({
        duration: wait,
        onTimeout: () =>
          failed(
            `token secret ${namespace}/${choice.name} of serviceaccount ${sa} has no token after ${Duration.format(wait)}`,
          ),
      }),
      Effect.catchTag("TokenNotFilled", () =>
        Effect.fail(failed(`token secret ${namespace}/${choice.name} has no token`)),
      ),
    )
  })

export const runCreateRemoteSecret = (args: CreateRemoteSecretArgs) =>
  Effect.gen(function* () {
    const problem = authFlagsProblem(args)
    if (problem !== undefined) return yield* failed(problem)
    const client = yield* orchestratorClient(args.global).pipe(Effect.mapError((e) => failed(e.message)))
    const namespace = args.global.meshNamespace
    const clusterName =
      args.name !== ""
        ? args.name
        : yield* client.get(Resources.namespaces, undefined, namespace).pipe(
            Effect.map((ns) => ns.metadata.uid ?? ""),
            Effect.mapError(
              because(
                `--name not given and the UID of namespace ${namespace} (the default cluster name) could not be read`,
              ),
            ),
          )
    if (clusterName === "") return yield* failed(`--name not given and namespace ${namespace} has no UID`)
    const sa = args.serviceAccount !== "" ? args.serviceAccount : defaultServiceAccount(args.type)
    const credentials = yield* serviceAccountToken(client, args, namespace, sa)
    const auth: RemoteAuth =
      args.authType === "plugin"
        ? { _tag: "plugin", name: args.authPluginName, config: args.authPluginConfig }
        : { _tag: "token", token: credentials.token }
    const kubeconfig = remoteKubeconfig({
      clusterName,
      server: args.server !== "" ? args.server : client.server,
      caPem: credentials.caPem !== "" ? credentials.caPem : kubeconfigCa(args.global, (yield* MeshctlEnv).KUBECONFIG),
      tlsServerName: args.tlsServerName,
      auth,
    })
    yield* Console.log(
      renderRemoteSecret(remoteSecret({ type: args.type, clusterName, namespace, kubeconfig })).trimEnd(),
    )
  }).pipe(Effect.scoped)
