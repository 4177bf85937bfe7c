/**
 * A control plane for meshctl's process tests: a built `mesh-discovery` on ephemeral loopback
 * ports, real ADS clients (the agent's client, which ACKs every response) connected to it, and
 * a fake orchestrator whose `app=meshd` pod in mesh-system points at it (pod IP 127.0.0.1, the
 * monitoring, plaintext and TLS xDS ports declared as the `http-monitoring`, `grpc-xds` and
 * `tls-xds` container ports). The daemon runs in `dir`, so its self-signed CA is in `caDir`.
 */
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { makeAdsClient } from "../../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import type { AdsClientShape } from "../../../src/services/xds-client/client.js"
import { discoveryArgs, exampleMeshDir } from "../../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { type Daemon, startDaemon } from "../../support/processes.js"

export interface ControlPlane {
  readonly daemon: Daemon
  /** host:port of the monitoring listener (`/debug/syncz`, `/version`). */
  readonly monitoring: string
  /** host:port of the plaintext (15010-style) and TLS (15012-style) xDS listeners. */
  readonly ads: string
  readonly secure: string
  /** The daemon's CA state: `ca-cert.pem` (the mesh root) and `ca-key.pem`. */
  readonly caDir: string
  readonly introspectionPort: number
  readonly orchestrator: Orchestrator
  /** A kubeconfig for the fake orchestrator (context `orchestrator`). */
  readonly kubeconfig: string
  readonly clients: ReadonlyArray<AdsClientShape>
  readonly stop: () => Promise<void>
}

export const proxyId = (pod: string, namespace = "default") =>
  `sidecar~10.0.0.${pod.length}~${pod}.${namespace}~${namespace}.svc.cluster.local`

/** Starts the control plane with one ADS client per entry of `proxies` (CDS and LDS watched). */
export const startControlPlane = async (
  proxies: ReadonlyArray<{ readonly pod: string; readonly version: string; readonly extraType?: string }>,
): Promise<ControlPlane> => {
  const dir = exampleMeshDir("meshctl-cp-")
  const daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh")), {}, dir)
  const secure = (await daemon.waitFor(/secure gRPC listener on ([\d.]+:\d+)/))[1]!
  const ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/))[1]!
  const monitoring = (await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/))[1]!
  const introspection = (await daemon.waitFor(/introspection listening on ([\d.]+:\d+)/))[1]!
  const scope = Effect.runSync(Scope.make())
  const clients = await Effect.runPromise(
    Effect.forEach(proxies, (p) =>
      Effect.gen(function* () {
        const client = yield* makeAdsClient({
          address: ads,
          mode: "sotw",
          node: {
            id: proxyId(p.pod),
            metadata: plainToStruct({ CLUSTER_ID: "cluster-1", MESH_VERSION: p.version, NAMESPACE: "default" }),
          },
        })
        yield* client.subscribe(TypeUrl.Cluster)
        yield* client.subscribe(TypeUrl.Listener)
        if (p.extraType !== undefined) yield* client.subscribe(p.extraType, ["example"])
        return client
      }),
    ).pipe(Scope.extend(scope)),
  )
  const orchestrator = await startOrchestrator({ namespaces: ["default", "mesh-system"] })
  orchestrator.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "meshd-7f9c", namespace: "mesh-system", labels: { app: "meshd" } },
    spec: {
      containers: [
        {
          name: "discovery",
          ports: [
            { name: "http-monitoring", containerPort: Number(monitoring.split(":")[1]) },
            { name: "grpc-xds", containerPort: Number(ads.split(":")[1]) },
            { name: "tls-xds", containerPort: Number(secure.split(":")[1]) },
          ],
        },
      ],
    },
    status: { phase: "Running", podIP: "127.0.0.1" },
  })
  return {
    daemon,
    monitoring,
    ads,
    secure,
    caDir: join(dir, "var/lib/meshd/ca"),
    introspectionPort: Number(introspection.split(":")[1]),
    orchestrator,
    kubeconfig: orchestrator.kubeconfig(),
    clients,
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await orchestrator.close()
      await daemon.stop()
    },
  }
}

/** Retries `attempt` until `done` holds of its result (the ACKs reach the server asynchronously). */
export const eventually = async <A>(attempt: () => Promise<A>, done: (a: A) => boolean, millis = 15_000) => {
  const deadline = Date.now() + millis
  for (;;) {
    const result = await attempt()
    if (done(result) || Date.now() > deadline) return result
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
