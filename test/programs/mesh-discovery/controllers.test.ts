/**
 * mesh-discovery's leader election takes its settings from `ControllersConfig`
 * (ENABLE_LEADER_ELECTION, POD_NAME and --namespace), on the in-process orchestrator API server
 * through the real client.
 */
import { Effect, Layer, Option, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layerLeaderElection } from "../../../src/programs/mesh-discovery/controllers.js"
import { ControllersConfig } from "../../../src/services/config/discovery-config.js"
import { OrchestratorClient } from "../../../src/services/orchestrator/client.js"
import { Informers } from "../../../src/services/orchestrator/informer.js"
import { LeaderElection } from "../../../src/services/orchestrator/leader.js"
import type { OrchLease } from "../../../src/services/orchestrator/lease.js"
import { LocalCluster } from "../../../src/services/orchestrator/local-cluster.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ namespaces: ["meshns"] })
})
afterAll(() => server.close())

/** The LocalCluster of the test API server. */
const localCluster = () =>
  Layer.effect(
    LocalCluster,
    Effect.map(Effect.all({ client: OrchestratorClient, informers: Informers }), Option.some),
  ).pipe(Layer.provide(orchestratorLayer(server)))

const leases = () => server.list("coordination.k8s.io/v1", "Lease", "meshns") as ReadonlyArray<OrchLease>

/** The identity of the election once it leads with the given settings, and the Leases' holders then. */
const leading = (overrides: Parameters<typeof ControllersConfig.layer>[0]) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const election = yield* LeaderElection
      return yield* election.changes.changes.pipe(
        Stream.filter((lead) => lead),
        Stream.runHead,
        Effect.timeout("10 seconds"),
        // The Lease while leading (a leader that stops releases it).
        Effect.map(() => ({
          identity: election.identity,
          holders: leases().map((lease) => lease.spec?.holderIdentity),
        })),
      )
    }).pipe(
      Effect.provide(
        layerLeaderElection.pipe(Layer.provide(Layer.merge(ControllersConfig.layer(overrides), localCluster()))),
      ),
    ),
  )

describe("mesh-discovery leader election settings", () => {
  it("holds a Lease in --namespace as POD_NAME when ENABLE_LEADER_ELECTION is on", async () => {
    const elected = await leading({ ENABLE_LEADER_ELECTION: true, POD_NAME: "meshd-a", namespace: "meshns" })
    expect(elected).toEqual({ identity: "meshd-a", holders: ["meshd-a"] })
  }, 30_000)

  it("leads without a Lease when ENABLE_LEADER_ELECTION is off", async () => {
    const before = leases().length
    const elected = await leading({ ENABLE_LEADER_ELECTION: false, POD_NAME: "meshd-b", namespace: "meshns" })
    expect(elected.holders).not.toContain("meshd-b")
    expect(leases().length).toBe(before)
  }, 30_000)
})
