/**
 * What `mesh-agent proxy` settles from its `AgentConfig` before any subsystem starts: the mesh
 * config and the ProxyConfig (`PROXY_CONFIG` over its defaultConfig), the workload's identity,
 * key and certificate lifetime, where its files and sockets are, its node, the roots it trusts,
 * and — in sidecar mode — the proxy's bootstrap file. Every setting that can be wrong fails here,
 * at once, rather than after the first CA call (which retries until the CA answers).
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Context, Data, Duration, Effect, Either, Layer } from "effect"
import { buildNode, type NodeIdentity } from "../../services/agent/bootstrap/node.js"
import {
  CERT_FILES,
  caSettingsProblem,
  type KeySpec,
  keySpecFrom,
  MOUNTED_CERTS_DIR,
  tokenPathFor,
} from "../../services/agent/identity/identity.js"
import { bootstrapValues } from "../../services/agent/proxy/bootstrap.js"
import { bootstrapFile, proxyBootstrap } from "../../services/agent/proxy/proxy.js"
import { WORKLOAD_IDENTITY_DIR } from "../../services/agent/sds/sds.js"
import { type AppProber, parseAppProbers } from "../../services/agent/status/app-probers.js"
import { type AppScrapeTarget, parsePrometheusAnnotations } from "../../services/agent/status/metrics-merge.js"
import { buildInfo } from "../../services/build-info.js"
import { AgentConfig, type AgentConfigValues } from "../../services/config/agent-config.js"
import { parseEnvValue } from "../../services/config/env.js"
import { DEFAULT_CLUSTER_ID, Ports, spiffeId } from "../../services/constants.js"
import { withScope } from "../../services/logging/logging.js"
import {
  applyMeshConfig,
  defaultMeshConfig,
  type EffectiveProxyConfig,
  type MeshConfig,
} from "../../services/mesh-config/index.js"
import { resolveProxyConfig } from "../../services/mesh-config/proxy-config.js"
import { hostOf } from "./identity/ca-client.js"
import { writeProxyBootstrap } from "./proxy/bootstrap.js"

export class ProxyAgentError extends Data.TaggedError("ProxyAgentError")<{ readonly message: string }> {}

export const XDS_PROXY_SOCKET = "./etc/mesh/proxy/XDS"
export const DEFAULT_ROOT_CERT = "./var/run/secrets/mesh/root-cert.pem"
export const PROXYLESS_CERT_DIR = "./var/lib/mesh/data"

export interface AgentSetupShape {
  readonly mesh: MeshConfig
  /** The mesh config's defaultConfig with `PROXY_CONFIG` merged over it. */
  readonly proxyConfig: EffectiveProxyConfig
  /** `DISABLE_PROXY`: proxyless gRPC, no proxy process. */
  readonly proxyless: boolean
  readonly discoveryAddress: string
  /** `CA_ADDR`, else the discovery address. */
  readonly caAddress: string
  /** spiffe://<trust domain>/ns/<ns>/sa/<sa> */
  readonly identity: string
  readonly keySpec: KeySpec
  /** Requested certificate lifetime (`SECRET_TTL`); 0 lets the CA choose. */
  readonly ttlSeconds: number
  readonly tokenPath: string
  /** Where `FILE_MOUNTED_CERTS` are read. */
  readonly mountedDir: string
  /** `OUTPUT_CERTS`, or the proxyless default when a gRPC bootstrap is written; "" = in memory only. */
  readonly certDir: string
  /** Proxyless, or `GRPC_XDS_BOOTSTRAP` set. */
  readonly writeGrpcBootstrap: boolean
  readonly xdsSocket: string
  readonly sdsSocket: string
  readonly node: NodeIdentity
  /** Node metadata problems, logged when a bootstrap is written. */
  readonly nodeProblems: ReadonlyArray<string>
  /** Roots the CA's certificate must verify against ("" with `FILE_MOUNTED_CERTS`). */
  readonly caRootPem: string
  /** TLS toward the discovery server; undefined = plaintext. */
  readonly xdsTls: { readonly rootCaPem: string; readonly serverName: string } | undefined
  /** Sidecar: the proxy's bootstrap file, written. */
  readonly proxyBootstrapFile: string
  readonly appProbers: ReadonlyMap<string, AppProber>
  readonly appMetrics: AppScrapeTarget | undefined
}

export class AgentSetup extends Context.Tag("mesh/agent/AgentSetup")<AgentSetup, AgentSetupShape>() {}

const fail = (message: string) => new ProxyAgentError({ message })

const readMeshConfig = (file: string) =>
  Effect.gen(function* () {
    if (!existsSync(file)) return defaultMeshConfig()
    const text = yield* Effect.tryPromise({
      try: () => readFile(file, "utf8"),
      catch: (e) => fail(`--meshConfig ${file}: ${(e as Error).message}`),
    })
    const applied = applyMeshConfig(file, text)
    if (Either.isLeft(applied)) return yield* fail(`--meshConfig ${file}: ${applied.left.join("; ")}`)
    for (const warning of applied.right.warnings) yield* Effect.logWarning(warning)
    return applied.right.value
  })

const readRoots = (path: string, what: string) =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) => fail(`${what} ${path}: ${(e as Error).message}`),
  })

/** Plaintext toward the discovery server on its plaintext port (15010). */
const isPlaintext = (address: string) => address.endsWith(`:${Ports.xdsPlaintext}`)

const make = (config: AgentConfigValues) =>
  Effect.gen(function* () {
    const proxyless = config.DISABLE_PROXY
    const mesh = yield* readMeshConfig(config.meshConfig)
    // The mesh config's defaultConfig, then PROXY_CONFIG (the pod annotation has no file here).
    const resolved = resolveProxyConfig(mesh.defaultConfig, [{ source: "PROXY_CONFIG", text: config.PROXY_CONFIG }])
    if (Either.isLeft(resolved)) return yield* fail(resolved.left.join("; "))
    for (const warning of resolved.right.warnings) yield* Effect.logWarning(warning)
    const pc = resolved.right.value
    const discoveryAddress = pc.discoveryAddress
    const keySpec = keySpecFrom(config)
    if (typeof keySpec === "string") return yield* fail(keySpec)
    const caProblem = config.FILE_MOUNTED_CERTS ? undefined : caSettingsProblem(config)
    if (caProblem !== undefined) return yield* fail(caProblem)
    let ttlSeconds = 0
    if (config.secretTtl !== undefined) {
      const parsed = parseEnvValue("D", config.secretTtl)
      if (Either.isLeft(parsed)) return yield* fail(`SECRET_TTL: ${parsed.left}`)
      ttlSeconds = Math.max(1, Math.round(Duration.toSeconds(parsed.right)))
    }
    const mountedDir = resolve(MOUNTED_CERTS_DIR)
    const caRootPath = config.CA_ROOT_CA || config.XDS_ROOT_CA || DEFAULT_ROOT_CERT
    const xdsRootPath =
      config.XDS_ROOT_CA ||
      config.CA_ROOT_CA ||
      (config.FILE_MOUNTED_CERTS ? join(mountedDir, CERT_FILES.root) : DEFAULT_ROOT_CERT)
    const writeGrpcBootstrap = proxyless || config.grpcBootstrapSet
    const xdsSocket = resolve(XDS_PROXY_SOCKET)
    const sdsSocket = resolve(WORKLOAD_IDENTITY_DIR, config.WORKLOAD_IDENTITY_SOCKET_FILE)
    const { node, problems: nodeProblems } = buildNode({
      type: config.proxyType,
      podName: config.podName,
      namespace: config.namespace,
      instanceIps: config.INSTANCE_IP ? config.INSTANCE_IP.split(",") : ["127.0.0.1"],
      domain: config.domain,
      serviceAccount: config.serviceAccount,
      clusterId: config.MESH_META_CLUSTER_ID || DEFAULT_CLUSTER_ID,
      meshVersion: buildInfo.version,
      env: process.env,
    })
    const caRootPem = config.FILE_MOUNTED_CERTS ? "" : yield* readRoots(caRootPath, "CA root certificate (CA_ROOT_CA)")
    const xdsTls =
      isPlaintext(discoveryAddress) || pc.controlPlaneAuthPolicy === "NONE"
        ? undefined
        : {
            rootCaPem: yield* readRoots(xdsRootPath, "xDS root certificate (XDS_ROOT_CA)"),
            serverName: config.MESHD_SAN || hostOf(discoveryAddress),
          }

    // Sidecar: a bad template or override fails the start-up here.
    const proxyBootstrapFile = resolve(bootstrapFile(pc.configPath))
    if (!proxyless) {
      for (const problem of nodeProblems) yield* Effect.logWarning(problem)
      yield* writeProxyBootstrap({
        outFile: proxyBootstrapFile,
        templateFile: config.templateFile || pc.proxyBootstrapTemplatePath || "",
        overrideFile: config.MESH_BOOTSTRAP_OVERRIDE,
        values: bootstrapValues({ node, serviceCluster: config.serviceCluster, proxyConfig: pc, xdsSocket, sdsSocket }),
        builtIn: proxyBootstrap({
          node,
          serviceCluster: config.serviceCluster,
          adminPort: pc.proxyAdminPort,
          xdsSocket,
          sdsSocket,
        }),
      }).pipe(Effect.mapError((e) => fail(e.message)))
    }

    const appProbers = parseAppProbers(config.MESH_ORCH_APP_PROBERS)
    if (Either.isLeft(appProbers)) return yield* fail(`MESH_ORCH_APP_PROBERS: ${appProbers.left}`)
    const appMetrics = parsePrometheusAnnotations(config.MESH_PROMETHEUS_ANNOTATIONS, config.statusPort)
    if (Either.isLeft(appMetrics)) return yield* fail(`MESH_PROMETHEUS_ANNOTATIONS: ${appMetrics.left}`)

    const setup: AgentSetupShape = {
      mesh,
      proxyConfig: pc,
      proxyless,
      discoveryAddress,
      caAddress: config.CA_ADDR || discoveryAddress,
      identity: spiffeId(config.TRUST_DOMAIN || mesh.trustDomain, config.namespace, config.serviceAccount),
      keySpec,
      ttlSeconds,
      tokenPath: config.tokenPath ?? tokenPathFor(config.JWT_POLICY),
      mountedDir,
      certDir: config.OUTPUT_CERTS || (writeGrpcBootstrap ? PROXYLESS_CERT_DIR : ""),
      writeGrpcBootstrap,
      xdsSocket,
      sdsSocket,
      node,
      nodeProblems,
      caRootPem,
      xdsTls,
      proxyBootstrapFile,
      appProbers: appProbers.right,
      appMetrics: appMetrics.right,
    }
    yield* Effect.logInfo(
      `mesh-agent proxy (${proxyless ? "proxyless gRPC" : `sidecar, proxy ${pc.binaryPath}`}): identity ${setup.identity}, CA ${setup.caAddress}, discovery ${discoveryAddress}, certificates in ${setup.certDir || "(memory)"}`,
    )
    return setup
  }).pipe(withScope("default"))

export const layer: Layer.Layer<AgentSetup, ProxyAgentError, AgentConfig> = Layer.effect(
  AgentSetup,
  Effect.flatMap(AgentConfig, make),
)
