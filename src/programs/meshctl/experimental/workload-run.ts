/**
 * What `meshctl x workload group create` and `entry configure` do once their flags are read
 * (loaded lazily). `entry configure` reads the WorkloadGroup (file or API server), the mesh
 * config, the namespace's root certificate, issues a token for the group's service account
 * (TokenRequest, `--tokenDuration` seconds, audience of the mesh CA) and finds the gateway IP
 * that reaches the control plane, then writes cluster.env, mesh.yaml, root-cert.pem, mesh-token
 * and hosts into `--output`.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { isIP } from "node:net"
import { join } from "node:path"
import { Console, Data, Effect, Either, Option } from "effect"
import { DEFAULT_TOKEN_AUDIENCE } from "../../../services/ca/jwt.js"
import { ROOT_CERT_CONFIGMAP, ROOT_CERT_KEY } from "../../../services/ca/root-cert-configmap.js"
import { ApiGroups, DEFAULT_CLUSTER_ID } from "../../../services/constants.js"
import { injectorConfigMapName } from "../../../services/injection/webhook-config.js"
import { MESH_CONFIG_KEY, meshConfigMapName } from "../../../services/mesh-config/configmap.js"
import { defaultMeshConfig, type MeshConfig, resolveMeshConfig } from "../../../services/mesh-config/mesh-config.js"
import type { OrchestratorClientShape, OrchestratorError } from "../../../services/orchestrator/client.js"
import type { OrchConfigMap, OrchObject, OrchService } from "../../../services/orchestrator/objects.js"
import { type ResourceRef, Resources, resourcePath } from "../../../services/orchestrator/resources.js"
import {
  clusterEnv,
  discoveryHost,
  type EntryOptions,
  hostsFile,
  ingressServiceRef,
  meshYaml,
  missingEntryInputs,
  type WorkloadGroupInfo,
  workloadGroupFromText,
} from "../../../services/workload/entry-config.js"
import {
  missingGroupInputs,
  parseKeyValues,
  parsePorts,
  renderWorkloadGroup,
  workloadGroup,
} from "../../../services/workload/group.js"
import { readInputFile } from "../input-files.js"
import { orchestratorClient } from "../orchestrator-access.js"
import type { WorkloadEntryConfigureArgs, WorkloadGroupCreateArgs } from "./workload-options.js"

/** The failure of a `meshctl x workload` command. */
export class WorkloadCommandFailed extends Data.TaggedError("WorkloadCommandFailed")<{ readonly message: string }> {}

const failed = (message: string) => new WorkloadCommandFailed({ message })
const because = (what: string) => (e: OrchestratorError) => failed(`${what}: ${e.message}`)
const orFail = <A>(either: Either.Either<A, string>) => Effect.mapError(either, failed)

export const WORKLOAD_GROUPS: ResourceRef = {
  group: ApiGroups.networking,
  version: "v1",
  plural: "workloadgroups",
  kind: "WorkloadGroup",
  namespaced: true,
}

export const runWorkloadGroupCreate = (args: WorkloadGroupCreateArgs) =>
  Effect.gen(function* () {
    const missing = missingGroupInputs({ name: args.name, namespace: args.global.namespace })
    if (missing !== undefined) return yield* failed(missing)
    const labels = yield* orFail(parseKeyValues("--labels", args.labels))
    const annotations = yield* orFail(parseKeyValues("--annotations", args.annotations))
    const ports = yield* orFail(parsePorts(args.ports))
    const group = workloadGroup({
      name: args.name,
      namespace: args.global.namespace,
      labels,
      annotations,
      ports,
      serviceAccount: args.serviceAccount,
      network: args.network,
      locality: args.locality,
      weight: args.weight,
    })
    yield* Console.log(renderWorkloadGroup(group).trimEnd())
  })

/** A ConfigMap, or undefined when it does not exist. */
const configMap = (client: OrchestratorClientShape, namespace: string, name: string) =>
  client.get<OrchConfigMap>(Resources.configMaps, namespace, name).pipe(
    Effect.asSome,
    Effect.catchIf(
      (e) => e.notFound,
      () => Effect.succeedNone,
    ),
    Effect.map(Option.getOrUndefined),
    Effect.mapError(because(`could not read configmap ${namespace}/${name}`)),
  )

const readGroup = (client: OrchestratorClientShape, args: WorkloadEntryConfigureArgs) =>
  Effect.gen(function* () {
    const namespace = args.global.namespace !== "" ? args.global.namespace : "default"
    if (args.file !== "") {
      const text = yield* readInputFile(args.file).pipe(
        Effect.mapError((e) => failed(`could not read --file ${e.message}`)),
      )
      return yield* orFail(workloadGroupFromText(args.file, text, namespace))
    }
    const object = yield* client
      .get<OrchObject>(WORKLOAD_GROUPS, args.global.namespace, args.name)
      .pipe(Effect.mapError(because(`could not read workloadgroup ${args.global.namespace}/${args.name}`)))
    return yield* orFail(
      workloadGroupFromText(`workloadgroup ${args.global.namespace}/${args.name}`, JSON.stringify(object), namespace),
    )
  })

const readMeshConfig = (client: OrchestratorClientShape, systemNamespace: string, revision: string) =>
  Effect.gen(function* () {
    const name = meshConfigMapName(revision)
    const text = (yield* configMap(client, systemNamespace, name))?.data?.[MESH_CONFIG_KEY]
    if (text === undefined) {
      yield* Console.error(`Warning: no mesh config in configmap ${systemNamespace}/${name}; using the defaults`)
      return defaultMeshConfig()
    }
    const resolved = resolveMeshConfig({ standard: { file: `configmap ${systemNamespace}/${name}`, text } })
    if (Either.isLeft(resolved))
      return yield* failed(
        `invalid mesh config in configmap ${systemNamespace}/${name}: ${resolved.left.map((i) => `${i.path} ${i.message}`).join("; ")}`,
      )
    return resolved.right.value
  })

/** The cluster name in the injector's `values` JSON, or "" when absent or unreadable. */
const injectorClusterName = (values: string | undefined): string => {
  try {
    const parsed = JSON.parse(values ?? "{}") as { global?: { multiCluster?: { clusterName?: string } } }
    return parsed.global?.multiCluster?.clusterName ?? ""
  } catch {
    return ""
  }
}

/** `--clusterID`, else the cluster name the injector was installed with, else the default ID. */
const clusterIdOf = (client: OrchestratorClientShape, args: WorkloadEntryConfigureArgs) =>
  Effect.gen(function* () {
    if (args.clusterID !== "") return args.clusterID
    const injector = yield* configMap(client, args.global.meshNamespace, injectorConfigMapName(args.revision))
    const name = injectorClusterName(injector?.data?.values)
    return name !== "" ? name : DEFAULT_CLUSTER_ID
  })

const issueToken = (client: OrchestratorClientShape, group: WorkloadGroupInfo, seconds: number) => {
  const sa = group.spec.template.serviceAccount ?? "default"
  return client
    .request<{ status?: { token?: string } }>({
      method: "POST",
      path: `${resourcePath({ group: "", version: "v1", plural: "serviceaccounts", kind: "ServiceAccount", namespaced: true }, group.namespace, sa)}/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [DEFAULT_TOKEN_AUDIENCE], expirationSeconds: seconds },
      },
    })
    .pipe(
      Effect.mapError(because(`could not create a token under service account ${sa} in namespace ${group.namespace}`)),
      Effect.flatMap((answer) =>
        (answer.status?.token ?? "") === ""
          ? Effect.fail(failed(`the token request for service account ${group.namespace}/${sa} returned no token`))
          : Effect.succeed(answer.status!.token!),
      ),
    )
}

/** `--ingressIP` when it is an IP, else the gateway Service's load-balancer (or external) IP. */
const gatewayIp = (client: OrchestratorClientShape, args: WorkloadEntryConfigureArgs) =>
  Effect.gen(function* () {
    if (isIP(args.ingressIP) !== 0) return args.ingressIP
    const ref = ingressServiceRef(args.ingressService, args.global.meshNamespace)
    const service = yield* client.get<OrchService>(Resources.services, ref.namespace, ref.name).pipe(
      Effect.map((s) => s as OrchService | undefined),
      Effect.orElseSucceed(() => undefined),
    )
    const ip = service?.status?.loadBalancer?.ingress?.[0]?.ip ?? service?.spec?.externalIPs?.[0] ?? ""
    if (isIP(ip) === 0)
      yield* Console.error(
        `Warning: could not auto-detect the IP of ${ref.name}.${ref.namespace}; use --ingressIP to give the gateway address that reaches the control plane from the VM`,
      )
    return isIP(ip) === 0 ? "" : ip
  })

export const runWorkloadEntryConfigure = (args: WorkloadEntryConfigureArgs) =>
  Effect.gen(function* () {
    const missing = missingEntryInputs({
      output: args.output,
      file: args.file,
      name: args.name,
      namespace: args.global.namespace,
    })
    if (missing !== undefined) return yield* failed(missing)
    const client = yield* orchestratorClient(args.global).pipe(Effect.mapError((e) => failed(e.message)))
    const group = yield* readGroup(client, args)
    const systemNamespace = args.global.meshNamespace
    const mesh: MeshConfig = yield* readMeshConfig(client, systemNamespace, args.revision)
    const options: EntryOptions = {
      clusterId: yield* clusterIdOf(client, args),
      systemNamespace,
      revision: args.revision,
      autoregister: args.autoregister,
      captureDns: args.captureDns,
      externalIP: args.externalIP,
      internalIP: args.internalIP,
    }
    const rootCert = (yield* configMap(client, group.namespace, ROOT_CERT_CONFIGMAP))?.data?.[ROOT_CERT_KEY]
    if (rootCert === undefined)
      return yield* failed(
        `configmap ${group.namespace}/${ROOT_CERT_CONFIGMAP} (key ${ROOT_CERT_KEY}) not found: is the control plane running and the namespace in the mesh?`,
      )
    const token = yield* issueToken(client, group, args.tokenDuration)
    const ip = yield* gatewayIp(client, args)
    const files: ReadonlyArray<readonly [string, string]> = [
      ["cluster.env", clusterEnv(group, mesh, options)],
      ["mesh.yaml", meshYaml(group, mesh, options)],
      ["root-cert.pem", rootCert],
      ["mesh-token", token],
      ["hosts", hostsFile(ip, discoveryHost(systemNamespace, args.revision))],
    ]
    yield* Effect.try({
      try: () => {
        mkdirSync(args.output, { recursive: true })
        for (const [name, content] of files) writeFileSync(join(args.output, name), content, { mode: 0o644 })
      },
      catch: (e) => failed(`could not write to ${args.output}: ${(e as Error).message}`),
    })
    const sa = group.spec.template.serviceAccount ?? "default"
    yield* Console.error(
      `Warning: a security token for namespace "${group.namespace}" and service account "${sa}" has been generated and stored at "${join(args.output, "mesh-token")}"`,
    )
    yield* Console.log(`Configuration generation into directory ${args.output} was successful`)
  }).pipe(Effect.scoped)
