/**
 * The root-cert distributor (run through `LeaderElection.whileLeader`) against the test API
 * server: `mesh-ca-root-cert` in every namespace (not system or terminating ones), in a new
 * namespace, recreated after a delete, restored after an edit, rewritten when the CA's root
 * changes; with MESH_WATCH_NAMESPACE only in that namespace.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, SubscriptionRef } from "effect"
import { afterAll, beforeAll } from "vitest"
import { createSelfSigned } from "../../../../src/layers/ca/key-material.js"
import { rootCertDistributor } from "../../../../src/layers/ca/orchestrator/root-cert-distributor.js"
import { CertificateAuthority } from "../../../../src/services/ca/ca.js"
import { type SigningMaterial, trustBundlePem } from "../../../../src/services/ca/material.js"
import { LeaderElection, layerAlwaysLeader } from "../../../../src/services/orchestrator/leader.js"
import type { OrchConfigMap } from "../../../../src/services/orchestrator/objects.js"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../../support/orchestrator/layers.js"
import { eventually } from "./helpers.js"

let server: Orchestrator
let scoped: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ namespaces: ["default", "kube-system", "mesh-system", "apps"] })
  scoped = await startOrchestrator({ namespaces: ["default", "apps"] })
})
afterAll(async () => {
  await server.close()
  await scoped.close()
})

const newRoot = () =>
  Effect.map(
    createSelfSigned({ trustDomain: "cluster.local", rsaKeySize: 2048, ttl: Duration.hours(10) }, Date.now()),
    (l) => l.material,
  )

/** A CA whose material the test sets; only `material` and `changes` are used by the distributor. */
const fakeCa = (ref: SubscriptionRef.SubscriptionRef<SigningMaterial>) =>
  CertificateAuthority.of({
    policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(1) },
    material: SubscriptionRef.get(ref),
    changes: ref.changes,
    sign: () => Effect.die("unused"),
    issueServerCertificate: () => Effect.die("unused"),
  })

const cmOf = (o: Orchestrator, ns: string) =>
  o.get("v1", "ConfigMap", ns, "mesh-ca-root-cert") as OrchConfigMap | undefined
const holds = (o: Orchestrator, ns: string, pem: string) =>
  Effect.sync(() => cmOf(o, ns)?.data?.["root-cert.pem"] === pem)

const start = (o: Orchestrator, ref: SubscriptionRef.SubscriptionRef<SigningMaterial>, watchNamespace = "") =>
  Effect.gen(function* () {
    const context = yield* Layer.build(Layer.merge(orchestratorLayer(o), layerAlwaysLeader))
    const leader = yield* Effect.provide(LeaderElection, context)
    yield* leader
      .whileLeader("root-cert", rootCertDistributor({ watchNamespace, retryDelay: Duration.millis(100) }))
      .pipe(Effect.provide(context), Effect.provideService(CertificateAuthority, fakeCa(ref)))
  })

describe("root-cert distributor", () => {
  it.scopedLive("keeps mesh-ca-root-cert in every namespace, in sync with the CA's root", () =>
    Effect.gen(function* () {
      const ref = yield* SubscriptionRef.make(yield* newRoot())
      const pem = trustBundlePem(yield* SubscriptionRef.get(ref))
      yield* start(server, ref)

      for (const ns of ["default", "mesh-system", "apps"])
        yield* eventually(holds(server, ns, pem), `ConfigMap in ${ns}`)
      expect(cmOf(server, "apps")?.metadata.labels).toEqual({ "mesh.io/config": "true" })

      // A new namespace gets one; a terminating one does not.
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "dying" }, status: { phase: "Terminating" } })
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "late" } })
      yield* eventually(holds(server, "late", pem), "ConfigMap in the new namespace")

      // Deleted: recreated. Edited: restored, other keys kept.
      server.remove("v1", "ConfigMap", "apps", "mesh-ca-root-cert")
      yield* eventually(holds(server, "apps", pem), "ConfigMap recreated after delete")
      const current = cmOf(server, "default")!
      server.put({ ...current, data: { "root-cert.pem": "tampered", extra: "kept" } } as never)
      yield* eventually(holds(server, "default", pem), "ConfigMap restored after an edit")
      expect(cmOf(server, "default")?.data?.extra).toBe("kept")

      // The root changes: every ConfigMap follows.
      yield* SubscriptionRef.set(ref, yield* newRoot())
      const next = trustBundlePem(yield* SubscriptionRef.get(ref))
      expect(next).not.toBe(pem)
      for (const ns of ["default", "mesh-system", "apps", "late"])
        yield* eventually(holds(server, ns, next), `new root in ${ns}`)

      // System and terminating namespaces never got one.
      expect(cmOf(server, "kube-system")).toBeUndefined()
      expect(cmOf(server, "dying")).toBeUndefined()
    }),
  )

  it.scopedLive("serves only MESH_WATCH_NAMESPACE when it is set", () =>
    Effect.gen(function* () {
      const ref = yield* SubscriptionRef.make(yield* newRoot())
      const pem = trustBundlePem(yield* SubscriptionRef.get(ref))
      yield* start(scoped, ref, "apps")
      yield* eventually(holds(scoped, "apps", pem), "ConfigMap in the watched namespace")
      scoped.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } })
      scoped.remove("v1", "ConfigMap", "apps", "mesh-ca-root-cert")
      yield* eventually(holds(scoped, "apps", pem), "ConfigMap recreated in the watched namespace")
      expect(cmOf(scoped, "default")).toBeUndefined()
      expect(cmOf(scoped, "other")).toBeUndefined()
    }),
  )
})
