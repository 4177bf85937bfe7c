/**
 * `mesh-agent proxy` wiring (loaded lazily by proxy-command.ts): reads the agent environment and
 * mesh config, then launches the workload identity (CA client, renewal, OUTPUT_CERTS), the SDS
 * server, the xDS proxy, the proxyless gRPC bootstrap, and the status/readiness listeners, with
 * the drain rule of spec 001 §1 rule 1 on shutdown.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { hostname } from "node:os"
import { join, resolve } from "node:path"
import { Config, Data, Deferred, Duration, Effect, Either, Layer, Ref } from "effect"
import { writeGrpcBootstrap } from "../../layers/agent/bootstrap/grpc-bootstrap.js"
import { caClientLayer, hostOf } from "../../layers/agent/identity/ca-client.js"
import { workloadIdentityLayer } from "../../layers/agent/identity/identity.js"
import { DEFAULT_MOUNTED_WATCH } from "../../layers/agent/identity/mounted.js"
import { writeProxyBootstrap } from "../../layers/agent/proxy/bootstrap.js"
import { superviseProxy } from "../../layers/agent/proxy/supervisor.js"
import { startSdsServer } from "../../layers/agent/sds/sds-server.js"
import { statusServersLayer } from "../../layers/agent/status/status-server.js"
import { xdsProxyLayer } from "../../layers/agent/xds-proxy/xds-proxy.js"
import { loggingLayer } from "../../layers/logging.js"
import { metricsLayer } from "../../layers/metrics.js"
import { grpcBootstrap, unixUri } from "../../services/agent/bootstrap/grpc-bootstrap.js"
import { buildNode } from "../../services/agent/bootstrap/node.js"
import { resolveProxyConfig } from "../../services/agent/bootstrap/proxy-config.js"
import {
  CERT_FILES,
  caSettingsProblem,
  keySpecFrom,
  MOUNTED_CERTS_DIR,
  tokenPathFor,
  WorkloadIdentity,
} from "../../services/agent/identity/identity.js"
import { bootstrapValues } from "../../services/agent/proxy/bootstrap.js"
import { bootstrapFile, ProxyProcess, proxyArgs, proxyBootstrap } from "../../services/agent/proxy/proxy.js"
import { WORKLOAD_IDENTITY_DIR } from "../../services/agent/sds/sds.js"
import { parseAppProbers } from "../../services/agent/status/app-probers.js"
import { drain } from "../../services/agent/status/drain.js"
import { parsePrometheusAnnotations } from "../../services/agent/status/metrics-merge.js"
import { AgentReadiness, agentReadiness } from "../../services/agent/status/status.js"
import { XdsProxy } from "../../services/agent/xds-proxy/xds-proxy.js"
import { buildInfo } from "../../services/build-info.js"
import { agentEnv } from "../../services/config/agent-env.js"
import { envTableConfig, parseEnvValue } from "../../services/config/env.js"
import { DEFAULT_CLUSTER_ID, Ports, spiffeId } from "../../services/constants.js"
import { withScope } from "../../services/logging/logging.js"
import type { LogSettings } from "../../services/logging/options.js"
import { agentScopes } from "../../services/logging/scopes.js"
import { applyMeshConfig, defaultMeshConfig, type MeshConfig } from "../../services/mesh-config/index.js"

export class ProxyAgentError extends Data.TaggedError("ProxyAgentError")<{ readonly message: string }> {}

export interface ProxyAgentFlags {
  readonly domain: string
  readonly meshConfig: string
  readonly serviceCluster: string
  readonly stsPort: number
  readonly proxyLogLevel: string
  readonly proxyComponentLogLevel: string
  readonly concurrency: number
  readonly templateFile: string
}

export const XDS_PROXY_SOCKET = "./etc/mesh/proxy/XDS"
export const DEFAULT_ROOT_CERT = "./var/run/secrets/mesh/root-cert.pem"
export const PROXYLESS_CERT_DIR = "./var/lib/mesh/data"

/** Pod facts the injector passes through the downward API (not part of the spec's table). */
const podConfig = Config.all({
  podName: Config.string("POD_NAME").pipe(Config.withDefault(hostname())),
  namespace: Config.string("POD_NAMESPACE").pipe(Config.withDefault("default")),
  serviceAccount: Config.string("SERVICE_ACCOUNT").pipe(Config.withDefault("default")),
  /** Overrides the token file of JWT_POLICY. */
  tokenPath: Config.option(Config.string("MESH_TOKEN_PATH")),
  /** The agent status port (pilot-agent's --statusPort; 0 = off). */
  statusPort: Config.integer("STATUS_PORT").pipe(Config.withDefault(Ports.agentStatus)),
  grpcBootstrapSet: Config.option(Config.string("GRPC_XDS_BOOTSTRAP")),
  /** Requested workload certificate lifetime (the reference's SECRET_TTL); unset lets the CA choose. */
  secretTtl: Config.option(Config.string("SECRET_TTL")),
})

const readMeshConfig = (file: string) =>
  Effect.gen(function* () {
    if (!existsSync(file)) return defaultMeshConfig()
    const text = yield* Effect.tryPromise({
      try: () => readFile(file, "utf8"),
      catch: (e) => new ProxyAgentError({ message: `--meshConfig ${file}: ${(e as Error).message}` }),
    })
    const applied = applyMeshConfig(file, text)
    if (Either.isLeft(applied)) {
      return yield* new ProxyAgentError({ message: `--meshConfig ${file}: ${applied.left.join("; ")}` })
    }
    for (const warning of applied.right.warnings) yield* Effect.logWarning(warning)
    return applied.right.value
  })

const readRoots = (path: string, what: string) =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) => new ProxyAgentError({ message: `${what} ${path}: ${(e as Error).message}` }),
  })

const readToken = (path: string) =>
  Effect.promise(() =>
    readFile(path, "utf8").then(
      (t) => t.trim() || undefined,
      () => undefined,
    ),
  )

/** Plaintext toward the discovery server on its plaintext port (15010) or with controlPlaneAuthPolicy NONE. */
const isPlaintext = (address: string) => address.endsWith(`:${Ports.xdsPlaintext}`)

export const proxyAgentLayer = (flags: ProxyAgentFlags) =>
  Effect.gen(function* () {
    const env = yield* envTableConfig(agentEnv)
    const pod = yield* podConfig
    const proxyless = env.DISABLE_PROXY
    const mesh: MeshConfig = yield* readMeshConfig(flags.meshConfig)
    // The mesh config's defaultConfig, then PROXY_CONFIG (the pod annotation has no file here).
    const resolvedProxyConfig = resolveProxyConfig(mesh.defaultConfig, [
      { source: "PROXY_CONFIG", text: env.PROXY_CONFIG },
    ])
    if (Either.isLeft(resolvedProxyConfig)) {
      return yield* new ProxyAgentError({ message: resolvedProxyConfig.left.join("; ") })
    }
    for (const warning of resolvedProxyConfig.right.warnings) yield* Effect.logWarning(warning)
    const pc = resolvedProxyConfig.right.value
    const discoveryAddress = pc.discoveryAddress
    const caAddress = env.CA_ADDR || discoveryAddress
    const keySpec = keySpecFrom(env)
    if (typeof keySpec === "string") return yield* new ProxyAgentError({ message: keySpec })
    const caProblem = env.FILE_MOUNTED_CERTS ? undefined : caSettingsProblem(env)
    if (caProblem !== undefined) return yield* new ProxyAgentError({ message: caProblem })
    const trustDomain = env.TRUST_DOMAIN || mesh.trustDomain
    const identity = spiffeId(trustDomain, pod.namespace, pod.serviceAccount)
    let ttlSeconds = 0
    if (pod.secretTtl._tag === "Some") {
      const parsed = parseEnvValue("D", pod.secretTtl.value)
      if (Either.isLeft(parsed)) return yield* new ProxyAgentError({ message: `SECRET_TTL: ${parsed.left}` })
      ttlSeconds = Math.max(1, Math.round(Duration.toSeconds(parsed.right)))
    }
    const tokenPath = pod.tokenPath._tag === "Some" ? pod.tokenPath.value : tokenPathFor(env.JWT_POLICY)
    const caRootPath = env.CA_ROOT_CA || env.XDS_ROOT_CA || DEFAULT_ROOT_CERT
    const mountedDir = resolve(MOUNTED_CERTS_DIR)
    const xdsRootPath =
      env.XDS_ROOT_CA ||
      env.CA_ROOT_CA ||
      (env.FILE_MOUNTED_CERTS ? join(mountedDir, CERT_FILES.root) : DEFAULT_ROOT_CERT)
    const writeBootstrap = proxyless || pod.grpcBootstrapSet._tag === "Some"
    const certDir = env.OUTPUT_CERTS || (writeBootstrap ? PROXYLESS_CERT_DIR : "")
    const instanceIps = env.INSTANCE_IP ? env.INSTANCE_IP.split(",") : ["127.0.0.1"]
    const xdsSocket = resolve(XDS_PROXY_SOCKET)
    const sdsSocket = resolve(WORKLOAD_IDENTITY_DIR, env.WORKLOAD_IDENTITY_SOCKET_FILE)

    const { node, problems: nodeProblems } = buildNode({
      type: "sidecar",
      podName: pod.podName,
      namespace: pod.namespace,
      instanceIps,
      domain: flags.domain,
      serviceAccount: pod.serviceAccount,
      clusterId: env.MESH_META_CLUSTER_ID || DEFAULT_CLUSTER_ID,
      meshVersion: buildInfo.version,
      env: process.env,
    })
    const caRoots = env.FILE_MOUNTED_CERTS ? "" : yield* readRoots(caRootPath, "CA root certificate (CA_ROOT_CA)")
    const xdsTls =
      isPlaintext(discoveryAddress) || pc.controlPlaneAuthPolicy === "NONE"
        ? undefined
        : {
            rootCaPem: yield* readRoots(xdsRootPath, "xDS root certificate (XDS_ROOT_CA)"),
            serverName: env.MESHD_SAN || hostOf(discoveryAddress),
          }

    const identityLayer = workloadIdentityLayer({
      identity,
      keySpec,
      ttlSeconds,
      tokenPath,
      ...(certDir !== "" ? { outputDir: resolve(certDir) } : {}),
      ...(env.FILE_MOUNTED_CERTS
        ? { mountedDir, mountedWatch: { ...DEFAULT_MOUNTED_WATCH, debounce: env.FILE_DEBOUNCE_DURATION } }
        : {}),
    }).pipe(
      Layer.provide(
        caClientLayer({
          address: caAddress,
          rootCaPem: caRoots,
          serverName: env.MESHD_SAN || hostOf(caAddress),
          ...(env.MESH_META_CERT_SIGNER ? { certSigner: env.MESH_META_CERT_SIGNER } : {}),
        }),
      ),
    )

    const xdsProxy = Layer.unwrapEffect(
      Effect.map(WorkloadIdentity, (workload) =>
        xdsProxyLayer({
          socketPath: xdsSocket,
          upstream: discoveryAddress,
          ...(xdsTls ? { tls: xdsTls } : {}),
          token: readToken(tokenPath),
          clientCert: Effect.map(workload.current, (c) => ({ certPem: c.certChainPem, keyPem: c.keyPem })),
        }),
      ),
    )

    const sds = Layer.scopedDiscard(startSdsServer({ socketPath: sdsSocket }))

    // proxyless readiness waits for the bootstrap the application will read
    const bootstrapWritten = yield* Ref.make(false)
    const bootstrap = writeBootstrap
      ? Layer.effectDiscard(
          Effect.gen(function* () {
            for (const problem of nodeProblems) yield* Effect.logWarning(problem)
            yield* writeGrpcBootstrap(
              resolve(env.GRPC_XDS_BOOTSTRAP),
              grpcBootstrap({
                serverUri: unixUri(xdsSocket),
                channelCreds: [{ type: "insecure" }],
                node,
                // Mounted certificates are read where they are mounted; nothing is copied to certDir.
                certDir: env.FILE_MOUNTED_CERTS ? mountedDir : resolve(certDir),
                // re-read the files well within a short certificate lifetime
                ...(ttlSeconds > 0 ? { refreshSeconds: Math.min(900, Math.max(1, Math.floor(ttlSeconds / 4))) } : {}),
              }),
            )
            yield* Ref.set(bootstrapWritten, true)
          }),
        )
      : Layer.empty

    // Sidecar: the proxy's bootstrap is written before anything starts, so a bad template or
    // override fails the start-up at once.
    const configFile = resolve(bootstrapFile(pc.configPath))
    if (!proxyless) {
      for (const problem of nodeProblems) yield* Effect.logWarning(problem)
      yield* writeProxyBootstrap({
        outFile: configFile,
        templateFile: flags.templateFile || pc.proxyBootstrapTemplatePath || "",
        overrideFile: env.MESH_BOOTSTRAP_OVERRIDE,
        values: bootstrapValues({ node, serviceCluster: flags.serviceCluster, proxyConfig: pc, xdsSocket, sdsSocket }),
        builtIn: proxyBootstrap({
          node,
          serviceCluster: flags.serviceCluster,
          adminPort: pc.proxyAdminPort,
          xdsSocket,
          sdsSocket,
        }),
      }).pipe(Effect.mapError((e) => new ProxyAgentError({ message: e.message })))
    }
    const proxyExit = yield* Deferred.make<number>()
    const terminationDrain = parseEnvValue("D", pc.terminationDrainDuration)
    const sidecar = proxyless
      ? undefined
      : Layer.scoped(
          ProxyProcess,
          Effect.gen(function* () {
            const drainTime = parseEnvValue("D", pc.drainDuration)
            const supervisor = yield* superviseProxy({
              binaryPath: pc.binaryPath,
              args: proxyArgs({
                configFile,
                drainSeconds: Either.isRight(drainTime) ? Math.round(Duration.toSeconds(drainTime.right)) : 45,
                logLevel: flags.proxyLogLevel,
                componentLogLevel: flags.proxyComponentLogLevel,
                concurrency: flags.concurrency || pc.concurrency,
              }),
              adminPort: pc.proxyAdminPort,
              maxRestarts: 10,
              restartBackoff: { base: Duration.millis(200), max: Duration.seconds(10) },
              drain: {
                minimumDrain: env.MINIMUM_DRAIN_DURATION,
                exitOnZeroActiveConnections: env.EXIT_ON_ZERO_ACTIVE_CONNECTIONS,
                terminationDrain: Either.isRight(terminationDrain) ? terminationDrain.right : Duration.seconds(5),
              },
              stopTimeout: Duration.seconds(10),
            })
            yield* Effect.forkScoped(
              Effect.flatMap(Deferred.await(supervisor.exited), (code) => Deferred.succeed(proxyExit, code)),
            )
            return ProxyProcess.of({
              exited: supervisor.exited,
              ready: Effect.tryPromise(() => fetch(`http://127.0.0.1:${pc.proxyAdminPort}/ready`)).pipe(
                Effect.map((r) => r.status === 200),
                Effect.orElseSucceed(() => false),
              ),
            })
          }),
        )

    const readiness = Layer.effect(
      AgentReadiness,
      Effect.gen(function* () {
        const workload = yield* WorkloadIdentity
        const proxy = yield* XdsProxy
        const process_ = yield* Effect.serviceOption(ProxyProcess)
        return AgentReadiness.of({
          check: Effect.gen(function* () {
            const cert = yield* workload.current
            return agentReadiness({
              proxyless,
              certificateValid: cert.notAfter.getTime() > Date.now(),
              bootstrapWritten: yield* Ref.get(bootstrapWritten),
              xdsResponseReceived: yield* proxy.receivedResponse,
              proxyReady: process_._tag === "Some" ? yield* process_.value.ready : true,
            })
          }),
        })
      }),
    )

    const drainLayer = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.flatMap(XdsProxy, (proxy) =>
          drain(
            {
              minimumDrain: env.MINIMUM_DRAIN_DURATION,
              exitOnZeroActiveConnections: env.EXIT_ON_ZERO_ACTIVE_CONNECTIONS,
              // Proxyless: nothing holds connections but the xDS proxy's streams.
              terminationDrain: Either.isRight(terminationDrain)
                ? Duration.min(terminationDrain.right, env.MINIMUM_DRAIN_DURATION)
                : env.MINIMUM_DRAIN_DURATION,
            },
            proxy.activeStreams,
          ),
        ),
      ),
    )

    const appProbers = parseAppProbers(env.MESH_ORCH_APP_PROBERS)
    if (Either.isLeft(appProbers)) {
      return yield* new ProxyAgentError({ message: `MESH_ORCH_APP_PROBERS: ${appProbers.left}` })
    }
    const appMetrics = parsePrometheusAnnotations(env.MESH_PROMETHEUS_ANNOTATIONS, pod.statusPort)
    if (Either.isLeft(appMetrics)) {
      return yield* new ProxyAgentError({ message: `MESH_PROMETHEUS_ANNOTATIONS: ${appMetrics.left}` })
    }
    const statusAddresses = {
      readiness: { host: undefined, port: env.PROXY_STATUS_PORT },
      agentStatus: pod.statusPort > 0 ? { host: undefined, port: pod.statusPort } : undefined,
      proxyAdminPort: proxyless ? undefined : pc.proxyAdminPort,
      appProbers: appProbers.right,
      appMetrics: appMetrics.right,
      stsPort: flags.stsPort,
    }

    const statusLayer = sidecar
      ? statusServersLayer(statusAddresses).pipe(Layer.provide(readiness), Layer.provideMerge(sidecar))
      : statusServersLayer(statusAddresses).pipe(Layer.provide(readiness))
    const servers = Layer.mergeAll(statusLayer, sds, bootstrap, drainLayer).pipe(
      Layer.provideMerge(xdsProxy),
      Layer.provideMerge(identityLayer),
    )

    yield* Effect.logInfo(
      `mesh-agent proxy (${proxyless ? "proxyless gRPC" : `sidecar, proxy ${pc.binaryPath}`}): identity ${identity}, CA ${caAddress}, discovery ${discoveryAddress}, certificates in ${certDir || "(memory)"}`,
    )
    return { servers, sidecar: sidecar !== undefined, proxyExit }
  }).pipe(withScope("default"))

/** Runs the agent until interrupted (SIGTERM/SIGINT through NodeRuntime.runMain). */
export const runProxyAgent = (flags: ProxyAgentFlags, logging: LogSettings) =>
  Effect.gen(function* () {
    const { servers, sidecar, proxyExit } = yield* proxyAgentLayer(flags)
    const layer = servers.pipe(Layer.provide(metricsLayer("mesh-agent")))
    if (!sidecar) return yield* Layer.launch(layer)
    // Sidecar: the agent lives as long as the proxy; its exit code becomes the agent's.
    return yield* Effect.scoped(
      Effect.gen(function* () {
        yield* Layer.build(layer)
        const code = yield* Deferred.await(proxyExit)
        if (code !== 0) return yield* new ProxyAgentError({ message: `the proxy exited with code ${code}` })
      }),
    )
  }).pipe(Effect.provide(loggingLayer(logging, agentScopes)))
