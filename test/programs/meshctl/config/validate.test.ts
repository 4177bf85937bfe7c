/**
 * `meshctl validate`: in-process through @effect/cli (files, directories, stdin, mixed), and
 * as a process through the built binary.
 */
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Cause, Effect, Exit, Option } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { validateAliasCommand, validateCommand } from "../../../../src/programs/meshctl/config/validate-command.js"
import { loggingOptions } from "../../../../src/programs/shared/logging-options.js"
import { meshctlScopes } from "../../../../src/services/logging/scopes.js"
import { binary, ROOT } from "../../../support/processes.js"

const VALID_SE = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: api
  namespace: demo
spec:
  hosts: [api.example.com]
  ports: [{number: 443, name: https, protocol: HTTPS}]
  resolution: DNS
`
const VALID_DR = `apiVersion: networking.istio.io/v1beta1
kind: DestinationRule
metadata: {name: api, namespace: demo}
spec:
  host: api.example.com
  subsets: [{name: v1, labels: {version: v1}}]
`
const INVALID_VS = `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: demo}
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: {host: reviews, subset: v1}
      weight: 70
    - destination: {host: reviews, subset: v2}
      weight: 20
`
/** Valid on its own; its second destination names a subset the DestinationRule below lacks. */
const VS_UNDEFINED_SUBSET = `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: demo}
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: {host: reviews, subset: v1}
      weight: 50
    - destination: {host: reviews.demo.svc.cluster.local, subset: v3}
      weight: 50
`
const REVIEWS_DR = `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: demo}
spec:
  host: reviews
  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]
`
const SUBSET_WARNING =
  'field spec.http[0].route[1].destination.subset: referenced host+subset not found: the DestinationRules for host reviews.demo.svc.cluster.local define no subset "v3" (subsets: v1, v2; requests routed there fail)'
/** Valid, at a version the reference's Gateway-API CRD serves but marks deprecated. */
const DEPRECATED_GRANT = `apiVersion: gateway.networking.k8s.io/v1alpha2
kind: ReferenceGrant
metadata: {name: allow-routes, namespace: backend}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: frontend}]
  to: [{group: "", kind: Service}]
`
const GRANT_WARNING =
  "field apiVersion: The v1alpha2 version of ReferenceGrant has been deprecated and will be removed in a future release of the API. Please upgrade to v1beta1."
/** Telemetry at v1alpha1: served by the reference and not deprecated, so neither error nor warning. */
const ALPHA_TELEMETRY = `apiVersion: telemetry.istio.io/v1alpha1
kind: Telemetry
metadata: {name: mesh-default, namespace: mesh-system}
spec:
  accessLogging: [{providers: [{name: envoy}]}]
`
const UNKNOWN_KIND = `apiVersion: networking.mesh.io/v1
kind: Frobnicator
metadata: {name: x}
`

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "meshctl-validate-"))
  mkdirSync(join(dir, "valid", "nested"), { recursive: true })
  writeFileSync(join(dir, "valid", "se.yaml"), VALID_SE)
  writeFileSync(join(dir, "valid", "nested", "dr.yml"), VALID_DR)
  writeFileSync(join(dir, "valid", "notes.txt"), "not configuration")
  mkdirSync(join(dir, "mixed"))
  writeFileSync(join(dir, "mixed", "a-good.yaml"), `${VALID_SE}---\n${VALID_DR}`)
  writeFileSync(join(dir, "mixed", "b-bad.yaml"), `${VALID_SE}---\n${INVALID_VS}---\n${UNKNOWN_KIND}`)
  writeFileSync(join(dir, "syntax.yaml"), "apiVersion: v1\nkind: a: Namespace\n")
  mkdirSync(join(dir, "subsets"))
  writeFileSync(join(dir, "subsets", "dr.yaml"), REVIEWS_DR)
  writeFileSync(join(dir, "subsets", "vs.yaml"), VS_UNDEFINED_SUBSET)
  mkdirSync(join(dir, "deprecated"))
  writeFileSync(join(dir, "deprecated", "grant.yaml"), `${ALPHA_TELEMETRY}---\n${DEPRECATED_GRANT}`)
  writeFileSync(join(dir, "deprecated-and-bad.yaml"), `${DEPRECATED_GRANT}---\n${INVALID_VS}`)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const logging = loggingOptions(meshctlScopes)

const runInProcess = async (args: ReadonlyArray<string>, stdin = "") => {
  const out: Array<string> = []
  const err: Array<string> = []
  const log = vi.spyOn(console, "log").mockImplementation((...a: Array<unknown>) => void out.push(a.join(" ")))
  const error = vi.spyOn(console, "error").mockImplementation((...a: Array<unknown>) => void err.push(a.join(" ")))
  const root = Command.make("meshctl").pipe(
    Command.withSubcommands([
      validateCommand(logging, Effect.succeed(stdin)),
      validateAliasCommand(logging, Effect.succeed(stdin)),
    ]),
  )
  const exit = await Effect.runPromiseExit(
    Command.run(root, { name: "meshctl", version: "test" })(["node", "meshctl", ...args]).pipe(
      Effect.provide(NodeContext.layer),
    ),
  )
  log.mockRestore()
  error.mockRestore()
  const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
  const message = Option.isSome(failure) ? (failure.value as { message?: string }).message : undefined
  return { ok: Exit.isSuccess(exit), out, err, message }
}

afterEach(() => vi.restoreAllMocks())

describe("meshctl validate (in process)", () => {
  it("accepts a directory of valid files, recursively, skipping non-configuration files", async () => {
    const result = await runInProcess(["validate", "-f", join(dir, "valid")])
    expect(result.ok).toBe(true)
    expect(result.out).toEqual([
      `"${join(dir, "valid", "nested", "dr.yml")}" is valid`,
      `"${join(dir, "valid", "se.yaml")}" is valid`,
    ])
    expect(result.err).toEqual([])
  })

  it("reports every problem of a mixed directory and fails with a summary", async () => {
    const result = await runInProcess(["validate", "-f", join(dir, "mixed")])
    expect(result.ok).toBe(false)
    const bad = join(dir, "mixed", "b-bad.yaml")
    expect(result.out).toEqual([`"${join(dir, "mixed", "a-good.yaml")}" is valid`])
    expect(result.err).toEqual([
      `${bad} document 1 VirtualService demo/reviews: field spec.http[0].route: total destination weight 90 != 100`,
      `${bad} document 2 Frobnicator default/x: field kind: unknown kind "Frobnicator" (apiVersion "networking.mesh.io/v1")`,
    ])
    expect(result.message).toBe("validation failed: 2 problems (2 invalid documents) in 1 file")
  })

  it("takes repeated and comma-separated -f, and the v alias", async () => {
    const se = join(dir, "valid", "se.yaml")
    const dr = join(dir, "valid", "nested", "dr.yml")
    const result = await runInProcess(["v", "-f", se, "--filename", `${dr},${se}`])
    expect(result.ok).toBe(true)
    expect(result.out).toEqual([`"${se}" is valid`, `"${dr}" is valid`, `"${se}" is valid`])
  })

  it("reads - from stdin", async () => {
    const good = await runInProcess(["validate", "-f", "-"], VALID_SE)
    expect(good.ok).toBe(true)
    expect(good.out).toEqual(["validation succeed"])
    const bad = await runInProcess(["validate", "-f", "-"], INVALID_VS)
    expect(bad.ok).toBe(false)
    expect(bad.err).toEqual([
      "- document 0 VirtualService demo/reviews: field spec.http[0].route: total destination weight 90 != 100",
    ])
  })

  it("reports YAML syntax errors and unreadable paths", async () => {
    const result = await runInProcess(["validate", "-f", join(dir, "syntax.yaml"), "-f", join(dir, "missing.yaml")])
    expect(result.ok).toBe(false)
    expect(result.err[0]).toBe(`${join(dir, "missing.yaml")}: cannot read: no such file or directory`)
    expect(result.err[1]).toMatch(new RegExp(`^${join(dir, "syntax.yaml")} document 0: YAML syntax error at line 2: `))
    expect(result.message).toBe("validation failed: 2 problems (1 invalid document and 1 unreadable path) in 2 files")
  })

  it("warns about a deprecated version apart from the errors, and passes when only warnings remain", async () => {
    const grant = join(dir, "deprecated", "grant.yaml")
    const warned = await runInProcess(["validate", "-f", grant])
    expect(warned.ok).toBe(true)
    expect(warned.out).toEqual([`"${grant}" is valid`])
    expect(warned.err).toEqual([`Warning: ${grant} document 1 ReferenceGrant backend/allow-routes: ${GRANT_WARNING}`])
    const mixed = join(dir, "deprecated-and-bad.yaml")
    const failed = await runInProcess(["validate", "-f", mixed])
    expect(failed.ok).toBe(false)
    expect(failed.err).toEqual([
      `${mixed} document 1 VirtualService demo/reviews: field spec.http[0].route: total destination weight 90 != 100`,
      `Warning: ${mixed} document 0 ReferenceGrant backend/allow-routes: ${GRANT_WARNING}`,
    ])
    expect(failed.message).toBe("validation failed: 1 problem (1 invalid document) in 1 file")
  })

  it("warns about a route destination whose subset no DestinationRule of the files defines, and passes", async () => {
    const vs = join(dir, "subsets", "vs.yaml")
    const result = await runInProcess(["validate", "-f", join(dir, "subsets")])
    expect(result.ok).toBe(true)
    expect(result.out).toEqual([`"${join(dir, "subsets", "dr.yaml")}" is valid`, `"${vs}" is valid`])
    expect(result.err).toEqual([`Warning: ${vs} document 0 VirtualService demo/reviews: ${SUBSET_WARNING}`])
    // Without any DestinationRule every subset is undefined; with the subset defined there is none.
    const alone = await runInProcess(["validate", "-f", vs])
    expect(alone.ok).toBe(true)
    expect(alone.err).toEqual(
      ["v1", "v3"].map(
        (subset, i) =>
          `Warning: ${vs} document 0 VirtualService demo/reviews: field spec.http[0].route[${i}].destination.subset: referenced host+subset not found: no DestinationRule for host reviews.demo.svc.cluster.local defines subset "${subset}" (requests routed there fail)`,
      ),
    )
    const fixed = await runInProcess(
      ["validate", "-f", "-"],
      `${VS_UNDEFINED_SUBSET.replace("v3", "v2")}---\n${REVIEWS_DR}`,
    )
    expect(fixed.err).toEqual([])
  })

  it("prints warnings after the errors, apart from them", async () => {
    const result = await runInProcess(["validate", "-f", join(dir, "subsets", "vs.yaml"), "-f", join(dir, "mixed")])
    expect(result.ok).toBe(false)
    // b-bad.yaml's VirtualService is invalid: only the valid one is checked (no DestinationRule: v1 and v3).
    expect(result.err.map((line) => line.startsWith("Warning: "))).toEqual([false, false, true, true])
    expect(result.message).toBe("validation failed: 2 problems (2 invalid documents) in 1 file")
  })

  it("refuses to run without files", async () => {
    const result = await runInProcess(["validate"])
    expect(result.ok).toBe(false)
    expect(result.message).toBe("no file provided; use -f FILE|DIR|- (repeatable)")
  })
})

const runBinary = (args: ReadonlyArray<string>, input?: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [binary("meshctl"), ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }),
    )
    child.stdin?.end(input ?? "")
  })

describe.concurrent("meshctl validate (process)", () => {
  it("exits 0 on a valid directory", async () => {
    const result = await runBinary(["validate", "-f", join(dir, "valid")])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`"${join(dir, "valid", "se.yaml")}" is valid`)
  })

  it("exits 1 on an invalid file with every problem and a summary", async () => {
    const result = await runBinary(["validate", "-f", join(dir, "mixed")])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("field spec.http[0].route: total destination weight 90 != 100")
    expect(result.stderr).toContain('unknown kind "Frobnicator"')
    expect(result.stderr).toContain("Error: validation failed: 2 problems (2 invalid documents) in 1 file")
  })

  it("validates stdin", async () => {
    const good = await runBinary(["validate", "-f", "-"], VALID_SE)
    expect(good.code).toBe(0)
    expect(good.stdout.trim()).toBe("validation succeed")
    const bad = await runBinary(["validate", "-f", "-"], INVALID_VS)
    expect(bad.code).toBe(1)
  })

  it("exits 0 with a warning for an undefined subset", async () => {
    const result = await runBinary(["validate", "-f", join(dir, "subsets")])
    expect(result.code).toBe(0)
    expect(result.stderr).toContain(
      `Warning: ${join(dir, "subsets", "vs.yaml")} document 0 VirtualService demo/reviews: ${SUBSET_WARNING}`,
    )
    expect(result.stdout).toContain(`"${join(dir, "subsets", "vs.yaml")}" is valid`)
  })

  it("exits 0 with a deprecation warning, and 1 when an error comes with it", async () => {
    const grant = join(dir, "deprecated", "grant.yaml")
    const warned = await runBinary(["validate", "-f", grant])
    expect(warned.code).toBe(0)
    expect(warned.stdout).toContain(`"${grant}" is valid`)
    expect(warned.stderr).toContain(
      `Warning: ${grant} document 1 ReferenceGrant backend/allow-routes: ${GRANT_WARNING}`,
    )
    const failed = await runBinary(["validate", "-f", join(dir, "deprecated-and-bad.yaml")])
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain(`Warning: ${join(dir, "deprecated-and-bad.yaml")} document 0 ReferenceGrant`)
    expect(failed.stderr).toContain("Error: validation failed: 1 problem (1 invalid document) in 1 file")
  })

  it("validates the example mesh", async () => {
    const result = await runBinary(["validate", "-f", join(ROOT, "examples", "mesh")])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
  })
})

describe("the example mesh", () => {
  it("validates cleanly", async () => {
    const result = await runInProcess(["validate", "-f", join(ROOT, "examples", "mesh")])
    expect(result.err).toEqual([])
    expect(result.ok).toBe(true)
    expect(result.out.length).toBeGreaterThanOrEqual(3)
  })
})
