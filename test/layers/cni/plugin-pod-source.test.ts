/**
 * The plugin's pod lookup against the fake orchestrator API server through the real client:
 * a found pod, a transient failure retried away, a refusal (100), an unreachable server and a
 * missing kubeconfig ("try again later", 11).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Logger, LogLevel } from "effect"
import { makePodLookup } from "../../../src/layers/cni/plugin-pod-source.js"
import { injectedPod } from "../../services/cni/plugin-fixtures.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"

let orchestrator: Orchestrator
let kubeconfig: string

beforeAll(async () => {
  orchestrator = await startOrchestrator({ token: "plugin-token" })
  orchestrator.put(injectedPod({ name: "app-1", namespace: "default" }))
  kubeconfig = orchestrator.kubeconfig()
})

afterAll(async () => {
  await orchestrator.close()
})

const lookup = makePodLookup({ retries: 3, firstRetryDelayMillis: 20, requestTimeoutMillis: 1000 })
const get = (path: string, name: string) =>
  Effect.runPromiseExit(
    lookup.get(path, { namespace: "default", name }).pipe(Logger.withMinimumLogLevel(LogLevel.None)),
  )
const codeOf = (exit: Exit.Exit<unknown, { code: number }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.code : undefined

describe("pod lookup", () => {
  it("gets the pod with the kubeconfig's credentials", async () => {
    const exit = await get(kubeconfig, "app-1")
    expect(Exit.isSuccess(exit) && exit.value.spec?.containers?.map((c) => c.name)).toEqual(["app", "mesh-proxy"])
  })

  it("a 503 is retried; the next answer is used", async () => {
    const before = orchestrator.requestCount({ verb: "get", path: "/api/v1/namespaces/default/pods/app-1" })
    orchestrator.failNext({ verb: "get", path: "/api/v1/namespaces/default/pods/app-1", status: 503, count: 2 })
    const exit = await get(kubeconfig, "app-1")
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(orchestrator.requestCount({ verb: "get", path: "/api/v1/namespaces/default/pods/app-1" }) - before).toBe(3)
  })

  it("a pod that does not exist is the plugin's error 100, not retried", async () => {
    const before = orchestrator.requestCount({ verb: "get" })
    const exit = await get(kubeconfig, "missing")
    expect(codeOf(exit)).toBe(100)
    expect(orchestrator.requestCount({ verb: "get" }) - before).toBe(1)
  })

  it("a missing kubeconfig is 'try again later' (install-cni has not written it yet)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mesh-cni-"))
    try {
      expect(codeOf(await get(join(dir, "absent"), "app-1"))).toBe(11)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("an API server that is down is 'try again later' once the retries are spent", async () => {
    await orchestrator.down()
    try {
      const exit = await get(kubeconfig, "app-1")
      expect(codeOf(exit)).toBe(11)
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("ECONNREFUSED")
    } finally {
      await orchestrator.up()
    }
  })
})
