/**
 * The webhook caBundle patcher against the in-process orchestrator API server through the real
 * client and informers: both configurations patched on start, re-patched after an edit and after
 * a CA change, counted in the metrics; a configuration created later is patched once it exists;
 * a failing write is counted, retried and does not stop the patcher; a malformed one is left alone.
 */
import { Effect, Fiber, Layer, SubscriptionRef } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import {
  runCaBundlePatcher,
  UPDATE_ERROR_METRIC,
  UPDATES_METRIC,
} from "../../../src/layers/webhook/ca-bundle-patcher.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import type { OrchWebhookConfiguration } from "../../../src/services/webhook/ca-bundle.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator()
})
afterAll(() => server.close())

const API = "admissionregistration.k8s.io/v1"
const PEM_1 = "-----BEGIN CERTIFICATE-----\nMIIB-one\n-----END CERTIFICATE-----\n"
const PEM_2 = "-----BEGIN CERTIFICATE-----\nMIIB-two\n-----END CERTIFICATE-----\n"
const b64 = (pem: string) => Buffer.from(pem).toString("base64")

let names = 0
const putConfig = (kind: string, name: string, webhooks: unknown, labels?: Record<string, string>) =>
  server.put({ apiVersion: API, kind, metadata: { name, ...(labels ? { labels } : {}) }, webhooks } as never)
const webhook = (name: string, caBundle?: string) => ({
  name,
  clientConfig: {
    service: { name: "meshd", namespace: "mesh-system", path: "/validate" },
    ...(caBundle ? { caBundle } : {}),
  },
  failurePolicy: "Ignore",
  sideEffects: "None",
  admissionReviewVersions: ["v1"],
})
const bundles = (kind: string, name: string) =>
  ((server.get(API, kind, undefined, name) as OrchWebhookConfiguration | undefined)?.webhooks ?? []).map(
    (w) => w.clientConfig?.caBundle,
  )

const eventually = (check: () => boolean, within = 5000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* Effect.sleep("20 millis")
    }
  })

const counterValue = (name: string, labels: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const metric = metrics.registry.getSingleMetric(name)
    if (metric === undefined) return 0
    const values = (yield* Effect.promise(async () => metric.get())).values
    return values
      .filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l))
      .reduce((sum, v) => sum + v.value, 0)
  })

/** The server stores a write before its answer reaches the client, which then counts it: wait for the count. */
const countReaches = (name: string, value: number, labels: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const deadline = Date.now() + 5000
    while ((yield* counterValue(name, labels)) < value && Date.now() < deadline) yield* Effect.sleep("20 millis")
    return yield* counterValue(name, labels)
  })

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof orchestratorLayer>> | Metrics>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, Layer.merge(orchestratorLayer(server), metricsLayer("test")))))

describe("webhook caBundle patcher", () => {
  it("patches both configurations on start, after an edit and after a CA change, counting updates", async () => {
    const validating = `mesh-validation-${++names}`
    const mutating = `mesh-injector-${names}`
    putConfig("ValidatingWebhookConfiguration", validating, [webhook("a.mesh.io"), webhook("b.mesh.io", b64("old"))])
    putConfig("MutatingWebhookConfiguration", mutating, [webhook("sidecar-injector.mesh.io")])
    await run(
      Effect.gen(function* () {
        const ca = yield* SubscriptionRef.make(PEM_1)
        const fiber = yield* Effect.fork(
          runCaBundlePatcher({
            validatingWebhookConfigName: validating,
            mutatingWebhookConfigName: mutating,
            caPem: ca.changes,
          }),
        )
        yield* eventually(
          () =>
            bundles("ValidatingWebhookConfiguration", validating).join() === [b64(PEM_1), b64(PEM_1)].join() &&
            bundles("MutatingWebhookConfiguration", mutating).join() === b64(PEM_1),
        )
        expect(yield* countReaches(UPDATES_METRIC, 2)).toBe(2)
        // Other fields are untouched.
        const stored = server.get(API, "ValidatingWebhookConfiguration", undefined, validating) as never as {
          webhooks: Array<{ failurePolicy: string; clientConfig: { service: { path: string } } }>
        }
        expect(stored.webhooks[0]?.failurePolicy).toBe("Ignore")
        expect(stored.webhooks[0]?.clientConfig.service.path).toBe("/validate")

        // Someone edits the validating configuration: patched back.
        putConfig("ValidatingWebhookConfiguration", validating, [
          webhook("a.mesh.io", b64("edited")),
          webhook("c.mesh.io"),
        ])
        yield* eventually(
          () => bundles("ValidatingWebhookConfiguration", validating).join() === [b64(PEM_1), b64(PEM_1)].join(),
        )
        expect(yield* countReaches(UPDATES_METRIC, 3)).toBe(3)

        // The CA changes: both follow.
        yield* SubscriptionRef.set(ca, PEM_2)
        yield* eventually(
          () =>
            bundles("ValidatingWebhookConfiguration", validating).join() === [b64(PEM_2), b64(PEM_2)].join() &&
            bundles("MutatingWebhookConfiguration", mutating).join() === b64(PEM_2),
        )
        expect(yield* countReaches(UPDATES_METRIC, 5)).toBe(5)
        expect(yield* counterValue(UPDATE_ERROR_METRIC)).toBe(0)
        yield* Fiber.interrupt(fiber)
      }),
    )
  })

  it("waits for a configuration that does not exist yet and patches it once created", async () => {
    const validating = `mesh-validation-${++names}`
    const mutating = `mesh-injector-${names}`
    putConfig("MutatingWebhookConfiguration", mutating, [webhook("sidecar-injector.mesh.io")])
    await run(
      Effect.gen(function* () {
        const ca = yield* SubscriptionRef.make(PEM_1)
        const fiber = yield* Effect.fork(
          runCaBundlePatcher({
            validatingWebhookConfigName: validating,
            mutatingWebhookConfigName: mutating,
            caPem: ca.changes,
          }),
        )
        yield* eventually(() => bundles("MutatingWebhookConfiguration", mutating).join() === b64(PEM_1))
        expect((yield* Fiber.poll(fiber))._tag).toBe("None")
        putConfig("ValidatingWebhookConfiguration", validating, [webhook("a.mesh.io")])
        yield* eventually(() => bundles("ValidatingWebhookConfiguration", validating).join() === b64(PEM_1))
        yield* Fiber.interrupt(fiber)
      }),
    )
  })

  it("counts a failed write by reason, retries, and leaves a malformed configuration alone", async () => {
    const validating = `mesh-validation-${++names}`
    const mutating = `mesh-injector-${names}`
    putConfig("ValidatingWebhookConfiguration", validating, [webhook("a.mesh.io")])
    putConfig("MutatingWebhookConfiguration", mutating, [{ name: "broken.mesh.io" }])
    server.failNext({
      verb: "update",
      path: `/apis/${API}/validatingwebhookconfigurations/${validating}`,
      status: 500,
      count: 2,
    })
    await run(
      Effect.gen(function* () {
        const ca = yield* SubscriptionRef.make(PEM_1)
        const fiber = yield* Effect.fork(
          runCaBundlePatcher({
            validatingWebhookConfigName: validating,
            mutatingWebhookConfigName: mutating,
            caPem: ca.changes,
            minBackoff: "20 millis",
          }),
        )
        yield* eventually(() => bundles("ValidatingWebhookConfiguration", validating).join() === b64(PEM_1))
        expect(yield* countReaches(UPDATE_ERROR_METRIC, 2, { reason: "InternalError" })).toBe(2)
        expect(yield* countReaches(UPDATES_METRIC, 1)).toBe(1)
        expect(bundles("MutatingWebhookConfiguration", mutating)).toEqual([undefined])
        // Repaired by its owner: patched then.
        putConfig("MutatingWebhookConfiguration", mutating, [webhook("sidecar-injector.mesh.io")])
        yield* eventually(() => bundles("MutatingWebhookConfiguration", mutating).join() === b64(PEM_1))
        yield* Fiber.interrupt(fiber)
      }),
    )
  })

  it("follows the configurations labelled with its revision, created later, and leaves other revisions alone", async () => {
    const validating = `mesh-validation-${++names}`
    const tag = `mesh-revision-tag-canary-${names}`
    const otherTag = `mesh-revision-tag-other-${names}`
    const validator = `meshd-default-validator-${names}`
    const revision = `canary-${names}`
    putConfig("ValidatingWebhookConfiguration", validating, [webhook("a.mesh.io")], { "mesh.io/rev": revision })
    // Already there at start: the default validator of `tag set default`.
    putConfig("ValidatingWebhookConfiguration", validator, [webhook("validation.mesh.io")], {
      "mesh.io/rev": revision,
    })
    await run(
      Effect.gen(function* () {
        const ca = yield* SubscriptionRef.make(PEM_1)
        const fiber = yield* Effect.fork(
          runCaBundlePatcher({
            validatingWebhookConfigName: validating,
            // Named but absent: injection is on, so the revision's mutating configurations are patched.
            mutatingWebhookConfigName: `mesh-sidecar-injector-${names}`,
            revision,
            caPem: ca.changes,
          }),
        )
        yield* eventually(
          () =>
            bundles("ValidatingWebhookConfiguration", validating).join() === b64(PEM_1) &&
            bundles("ValidatingWebhookConfiguration", validator).join() === b64(PEM_1),
        )
        // Created after start, as `meshctl tag set` does: with the CA of that moment.
        const tagWebhooks = [
          webhook("rev.namespace.sidecar-injector.mesh.io", b64("copied")),
          webhook("rev.object.sidecar-injector.mesh.io", b64("copied")),
        ]
        putConfig("MutatingWebhookConfiguration", tag, tagWebhooks, {
          "mesh.io/rev": revision,
          "mesh.io/tag": "canary",
        })
        putConfig("MutatingWebhookConfiguration", otherTag, tagWebhooks, { "mesh.io/rev": "other", "mesh.io/tag": "x" })
        yield* eventually(() => bundles("MutatingWebhookConfiguration", tag).join() === [b64(PEM_1), b64(PEM_1)].join())

        yield* SubscriptionRef.set(ca, PEM_2)
        yield* eventually(
          () =>
            bundles("MutatingWebhookConfiguration", tag).join() === [b64(PEM_2), b64(PEM_2)].join() &&
            bundles("ValidatingWebhookConfiguration", validator).join() === b64(PEM_2) &&
            bundles("ValidatingWebhookConfiguration", validating).join() === b64(PEM_2),
        )
        // named 1 + validator 1 + tag 1, then all three again; the named one (also labelled) once each time.
        expect(yield* countReaches(UPDATES_METRIC, 6)).toBe(6)
        expect(bundles("MutatingWebhookConfiguration", otherTag)).toEqual([b64("copied"), b64("copied")])

        // Deleted, then the CA changes: nothing is written for it; created again: followed again.
        expect(server.remove(API, "MutatingWebhookConfiguration", undefined, tag)).toBe(true)
        yield* Effect.sleep("100 millis")
        yield* SubscriptionRef.set(ca, PEM_1)
        yield* eventually(() => bundles("ValidatingWebhookConfiguration", validator).join() === b64(PEM_1))
        expect(yield* countReaches(UPDATES_METRIC, 8)).toBe(8)
        expect(server.get(API, "MutatingWebhookConfiguration", undefined, tag)).toBeUndefined()
        putConfig("MutatingWebhookConfiguration", tag, tagWebhooks, {
          "mesh.io/rev": revision,
          "mesh.io/tag": "canary",
        })
        yield* eventually(() => bundles("MutatingWebhookConfiguration", tag).join() === [b64(PEM_1), b64(PEM_1)].join())
        expect(yield* countReaches(UPDATES_METRIC, 9)).toBe(9)
        expect(bundles("MutatingWebhookConfiguration", otherTag)).toEqual([b64("copied"), b64("copied")])
        expect(yield* counterValue(UPDATE_ERROR_METRIC)).toBe(0)
        expect((yield* Fiber.poll(fiber))._tag).toBe("None")
        yield* Fiber.interrupt(fiber)
      }),
    )
  })

  it("with injection off (no injector name) leaves the revision's mutating configurations alone", async () => {
    const validating = `mesh-validation-${++names}`
    const tag = `mesh-revision-tag-off-${names}`
    const revision = `off-${names}`
    putConfig("ValidatingWebhookConfiguration", validating, [webhook("a.mesh.io")], { "mesh.io/rev": revision })
    putConfig("MutatingWebhookConfiguration", tag, [webhook("rev.namespace.sidecar-injector.mesh.io", b64("copied"))], {
      "mesh.io/rev": revision,
      "mesh.io/tag": "off",
    })
    await run(
      Effect.gen(function* () {
        const ca = yield* SubscriptionRef.make(PEM_1)
        const fiber = yield* Effect.fork(
          runCaBundlePatcher({
            validatingWebhookConfigName: validating,
            mutatingWebhookConfigName: "",
            revision,
            caPem: ca.changes,
          }),
        )
        yield* eventually(() => bundles("ValidatingWebhookConfiguration", validating).join() === b64(PEM_1))
        // The validating side ran a full round; the mutating one was never followed.
        expect(bundles("MutatingWebhookConfiguration", tag)).toEqual([b64("copied")])
        yield* Fiber.interrupt(fiber)
      }),
    )
  })
})
