/**
 * The client's credentials against the in-process API server (TLS, bearer token required): a
 * kubeconfig with a token file and a CA file next to it (read without the client library), one
 * whose user runs an exec plugin (through the library), the in-cluster service account, and a
 * wrong token refused with 401 (so the others pass because their token is sent). Watches go
 * through the same credentials and agent.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Queue } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stringify } from "yaml"
import { makeOrchestratorClient, type OrchestratorSource } from "../../../src/layers/orchestrator/client.js"
import type { WatchEvent } from "../../../src/services/orchestrator/client.js"
import { Resources } from "../../../src/services/orchestrator/resources.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"

let server: Orchestrator
let dir: string
beforeAll(async () => {
  server = await startOrchestrator({ token: "right-token" })
  dir = mkdtempSync(join(tmpdir(), "orchestrator-credentials-"))
  writeFileSync(join(dir, "ca.crt"), server.caPem ?? "")
})
afterAll(() => server.close())

/** A kubeconfig in `dir` whose cluster names the CA file relatively. */
const kubeconfig = (name: string, user: Record<string, unknown>): OrchestratorSource => {
  const path = join(dir, name)
  writeFileSync(
    path,
    stringify({
      clusters: [{ name: "c", cluster: { server: server.url, "certificate-authority": "ca.crt" } }],
      users: [{ name: "u", user }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  )
  return { _tag: "file", path }
}

/** Lists namespaces, then watches them until one event arrives. */
const listAndWatch = (source: OrchestratorSource) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* makeOrchestratorClient({ source, clusterId: "c", qps: 0, burst: 0 })
      const page = yield* client.list(Resources.namespaces)
      const events = yield* Queue.unbounded<WatchEvent>()
      const handle = yield* client.watch(
        Resources.namespaces,
        { resourceVersion: page.resourceVersion },
        (e) => Queue.unsafeOffer(events, e),
        () => {},
      )
      yield* Effect.addFinalizer(() => Effect.sync(handle.close))
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: `watched-${Date.now()}` } })
      const event = yield* Queue.take(events)
      return { names: page.items.map((n) => n.metadata.name), event: event.type }
    }),
  )

describe("orchestrator client credentials", () => {
  it("reads a token file and a CA file named relative to the kubeconfig", async () => {
    writeFileSync(join(dir, "token"), "right-token\n")
    const result = await Effect.runPromise(listAndWatch(kubeconfig("token-file", { "token-file": join(dir, "token") })))
    expect(result.names).toContain("default")
    expect(result.event).toBe("ADDED")
  })

  it("runs an exec plugin through the client library", async () => {
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: "right-token" },
    })
    const source = kubeconfig("exec", {
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: ["-e", `process.stdout.write(${JSON.stringify(credential)})`],
        interactiveMode: "Never",
      },
    })
    const result = await Effect.runPromise(listAndWatch(source))
    expect(result.names).toContain("default")
  })

  it("uses the in-cluster service account's token and CA", async () => {
    const account = join(dir, "serviceaccount")
    mkdirSync(account, { recursive: true })
    writeFileSync(join(account, "token"), "right-token")
    writeFileSync(join(account, "ca.crt"), server.caPem ?? "")
    const result = await Effect.runPromise(
      listAndWatch({ _tag: "inCluster", host: "127.0.0.1", port: String(server.port), serviceAccountDir: account }),
    )
    expect(result.event).toBe("ADDED")
  })

  it("sends the kubeconfig's token: a wrong one is refused with 401", async () => {
    const exit = await Effect.runPromiseExit(listAndWatch(kubeconfig("wrong", { token: "wrong-token" })))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined).toMatchObject({
      status: 401,
    })
  })
})
