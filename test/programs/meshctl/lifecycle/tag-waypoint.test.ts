/**
 * `meshctl tag` and `meshctl waypoint` against the fake orchestrator through the real client:
 * a tag is generated from and set beside the installed injector webhooks, refused without
 * --overwrite (naming the revision it references), listed with the namespaces using it, and
 * removed only after confirmation; a waypoint is applied and waited for (the test plays the
 * gateway controller and sets Programmed=True), listed, timed out on, and deleted.
 */
import { spawn } from "node:child_process"
import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { installNames } from "../../../../src/services/install/names.js"
import { resolveOperator } from "../../../../src/services/install/resolve.js"
import { injectionWebhookConfiguration } from "../../../../src/services/install/webhooks.js"
import type { Obj } from "../../../../src/services/orchestrator/json.js"
import { type KubeObject, type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { binary, ROOT, type RunResult, run } from "../../../support/processes.js"

const MWC = "admissionregistration.k8s.io/v1"
const GATEWAY = "gateway.networking.k8s.io/v1"

let orchestrator: Orchestrator
let kubeconfig: string

/** meshctl with `input` on its stdin (then closed): what a user types at a prompt, or nothing. */
const meshctlWithInput = (args: ReadonlyArray<string>, input: string): Promise<RunResult> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [binary("meshctl"), ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c) => (stdout += c))
    child.stderr.on("data", (c) => (stderr += c))
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }))
    child.stdin.end(input)
  })

const meshctl = (...args: ReadonlyArray<string>) => run("meshctl", [...args, "-c", kubeconfig])

const installedInjector = (revision: string): KubeObject => {
  const op = Either.getOrThrow(resolveOperator({ files: [], sets: [], revision }))
  return injectionWebhookConfiguration(op, installNames(op)) as KubeObject
}

beforeAll(async () => {
  orchestrator = await startOrchestrator({ namespaces: ["default", "mesh-system", "shop", "bank"] })
  // The Gateway API CRDs come with the cluster, not with the mesh.
  orchestrator.registerCustomResource({
    group: "gateway.networking.k8s.io",
    versions: ["v1"],
    kind: "Gateway",
    plural: "gateways",
  })
  kubeconfig = orchestrator.kubeconfig()
  orchestrator.put(installedInjector(""))
  orchestrator.put(installedInjector("canary"))
  orchestrator.put({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "shop", labels: { "mesh.io/rev": "prod" } },
  })
})

afterAll(async () => {
  await orchestrator?.close()
})

const tagWebhook = () => orchestrator.get(MWC, "MutatingWebhookConfiguration", undefined, "mesh-revision-tag-prod")

describe("meshctl tag", () => {
  it("generates, sets, refuses to overwrite and lists a tag", async () => {
    // Generating another tag writes nothing, so it runs beside the set.
    const [generated, set] = await Promise.all([
      meshctl("tag", "generate", "default", "-r", "canary"),
      meshctl("tag", "set", "prod", "--revision", "canary"),
    ])
    expect(generated.stderr).toBe("")
    const documents = generated.stdout.split(/^---$/m).map((d) => parse(d) as Obj)
    expect(documents.map((d) => [d.kind, (d.metadata as { name: string }).name])).toEqual([
      ["MutatingWebhookConfiguration", "mesh-revision-tag-default"],
      ["ValidatingWebhookConfiguration", "meshd-default-validator"],
    ])
    expect((documents[0]!.metadata as KubeObject["metadata"])?.labels).toMatchObject({ "mesh.io/tag": "default" })
    expect(
      orchestrator.get(MWC, "MutatingWebhookConfiguration", undefined, "mesh-revision-tag-default"),
    ).toBeUndefined()
    expect(set.code).toBe(0)
    expect(set.stdout).toContain('Revision tag "prod" created, referencing control plane revision "canary"')
    const written = tagWebhook()!
    expect(written.metadata?.labels).toMatchObject({ "mesh.io/tag": "prod", "mesh.io/rev": "canary" })
    const webhooks = (written as Obj).webhooks as Array<Obj>
    expect(webhooks.map((w) => w.name)).toEqual([
      "rev.namespace.sidecar-injector.mesh.io",
      "rev.object.sidecar-injector.mesh.io",
    ])
    expect(webhooks[0]!.clientConfig).toMatchObject({ service: { name: "meshd-canary", path: "/inject" } })

    const [refused, listed] = await Promise.all([
      meshctl("tag", "set", "prod", "-r", "default"),
      meshctl("tag", "list", "-o", "json"),
    ])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/revision tag "prod" already exists and references revision "canary".*--overwrite/)
    expect(tagWebhook()!.metadata?.labels?.["mesh.io/rev"]).toBe("canary")

    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toEqual([{ tag: "prod", revision: "canary", namespaces: ["shop"] }])
  })

  it("sets the default tag, and removes a tag still in use only after a yes on stdin", async () => {
    const [unanswered, setDefault] = await Promise.all([
      meshctlWithInput(["tag", "remove", "prod", "-c", kubeconfig], ""),
      meshctl("tag", "set", "default", "-r", "canary", "-y"),
    ])
    // The default tag: canary now validates cluster-wide and the default install's injector matches nothing.
    expect(setDefault.stderr).toBe("")
    const validator = orchestrator.get(
      MWC,
      "ValidatingWebhookConfiguration",
      undefined,
      "meshd-default-validator",
    ) as Obj
    expect((validator.webhooks as Array<Obj>)[0]!.clientConfig).toMatchObject({
      service: { name: "meshd-canary", path: "/validate" },
    })
    const oldDefault = orchestrator.get(MWC, "MutatingWebhookConfiguration", undefined, "mesh-sidecar-injector") as Obj
    for (const webhook of oldDefault.webhooks as Array<Obj>)
      expect(webhook.namespaceSelector).toEqual({ matchLabels: { "mesh.io/deactivated": "never-match" } })
    expect(orchestrator.get(MWC, "MutatingWebhookConfiguration", undefined, "mesh-revision-tag-default")).toBeDefined()

    expect(unanswered.stdout).toContain('Caution, found 1 namespace(s) still injected by tag "prod": shop')
    expect(unanswered.code).toBe(1)
    expect(unanswered.stderr).toMatch(/not removed: no answer on stdin/)
    expect(tagWebhook()).toBeDefined()

    const answered = await meshctlWithInput(["tag", "delete", "prod", "-c", kubeconfig], "y\n")
    expect(answered.code).toBe(0)
    expect(answered.stdout).toContain("Revision tag prod removed")
    expect(tagWebhook()).toBeUndefined()
  })
})

describe("meshctl waypoint", () => {
  /** Plays the gateway controller: marks the gateway Programmed once it exists. */
  const programWhenCreated = async (namespace: string, name: string) => {
    for (;;) {
      const gateway = orchestrator.get(GATEWAY, "Gateway", namespace, name)
      if (gateway !== undefined) {
        orchestrator.put({
          ...gateway,
          status: { conditions: [{ type: "Programmed", status: "True", reason: "Programmed", message: "" }] },
        })
        return
      }
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }

  it("applies a waypoint, waits until it is Programmed and enrolls the namespace", async () => {
    const [applied] = await Promise.all([
      meshctl(
        "waypoint",
        "apply",
        "-n",
        "shop",
        "--for",
        "workload",
        "--wait",
        "--enroll-namespace",
        "--waypoint-timeout",
        "20s",
      ),
      programWhenCreated("shop", "waypoint"),
    ])
    expect(applied.stderr).toBe("")
    expect(applied.code).toBe(0)
    expect(applied.stdout).toContain("waypoint shop/waypoint applied")
    expect(applied.stdout).toContain("waypoint shop/waypoint is ready")
    const gateway = orchestrator.get(GATEWAY, "Gateway", "shop", "waypoint") as Obj
    expect(gateway.spec).toEqual({
      gatewayClassName: "mesh-waypoint",
      listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }],
    })
    expect((gateway.metadata as KubeObject["metadata"])?.labels).toEqual({ "mesh.io/waypoint-for": "workload" })
    expect(orchestrator.get("v1", "Namespace", undefined, "shop")?.metadata?.labels).toMatchObject({
      "mesh.io/use-waypoint": "waypoint",
    })
  })

  it("refuses to re-apply without --overwrite, lists waypoints, times out on one not Programmed, and deletes them", async () => {
    orchestrator.put({
      apiVersion: GATEWAY,
      kind: "Gateway",
      metadata: { name: "slow", namespace: "shop", labels: { "mesh.io/rev": "canary" } },
      spec: { gatewayClassName: "mesh-waypoint", listeners: [] },
      status: { conditions: [{ type: "Programmed", status: "False", reason: "Pending", message: "no address yet" }] },
    })
    const [again, listed, status] = await Promise.all([
      meshctl("waypoint", "apply", "-n", "shop"),
      meshctl("waypoint", "list", "-A"),
      meshctl("waypoint", "status", "-n", "shop", "--name", "slow", "--waypoint-timeout", "300ms"),
    ])
    expect(
      listed.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(/\s{2,}/)),
    ).toEqual([
      ["NAMESPACE", "NAME", "REVISION", "PROGRAMMED"],
      ["shop", "slow", "canary", "False"],
      ["shop", "waypoint", "default", "True"],
    ])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("waypoint shop/waypoint already exists; use --overwrite")
    expect(status.code).toBe(1)
    expect(status.stderr).toContain(
      "timed out after 300ms waiting for waypoint shop/slow to be ready: condition Programmed is False (Pending: no address yet)",
    )

    const deleted = await meshctl("waypoint", "delete", "--all", "-n", "shop")
    expect(deleted.code).toBe(0)
    expect(deleted.stdout).toContain("waypoint shop/slow deleted")
    expect(deleted.stdout).toContain("waypoint shop/waypoint deleted")
    expect(orchestrator.list(GATEWAY, "Gateway", "shop")).toEqual([])
  })
})
