/**
 * Which kubeconfig meshctl uses (orchestrator-source.ts): `--orchconfig`, else the first existing
 * file of `$KUBECONFIG` as `MeshctlEnv` read it at start, else `~/.kube/config`.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { ConfigProvider, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { clusterAsked, kubeconfigPath, kubeconfigSource } from "../../../src/programs/meshctl/orchestrator-source.js"
import { MeshctlEnv } from "../../../src/services/config/meshctl-env.js"

const dir = mkdtempSync(join(tmpdir(), "meshctl-kubeconfig-"))
const existing = join(dir, "existing")
writeFileSync(existing, "apiVersion: v1\n")
const missing = join(dir, "missing")
const home = join(dir, "home")
mkdirSync(join(home, ".kube"), { recursive: true })

describe("meshctl's kubeconfig", () => {
  it("takes --orchconfig first, then the first existing file of $KUBECONFIG, else the first named", () => {
    expect(kubeconfigPath({ orchconfig: "/given" }, existing, home)).toEqual({ path: "/given", from: "--orchconfig" })
    expect(kubeconfigPath({ orchconfig: "" }, [missing, existing].join(delimiter), home)).toEqual({
      path: existing,
      from: "$KUBECONFIG",
    })
    expect(kubeconfigPath({ orchconfig: "" }, missing, home)).toEqual({ path: missing, from: "$KUBECONFIG" })
  })

  it("falls back to ~/.kube/config, and to none when that is missing too", () => {
    expect(kubeconfigPath({ orchconfig: "" }, "", home)).toBeUndefined()
    writeFileSync(join(home, ".kube", "config"), "apiVersion: v1\n")
    expect(kubeconfigPath({ orchconfig: "" }, "", home)).toEqual({
      path: join(home, ".kube", "config"),
      from: "~/.kube/config",
    })
  })

  it("reads $KUBECONFIG from MeshctlEnv, not from the environment where it is used", async () => {
    const source = await Effect.runPromise(
      kubeconfigSource({ orchconfig: "" }).pipe(
        Effect.provide(MeshctlEnv.layer({ KUBECONFIG: existing })),
        // An environment naming another file: not looked at once the settings are read.
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["KUBECONFIG", missing]]))),
      ),
    )
    expect(source).toEqual({ path: existing, from: "$KUBECONFIG" })
  })

  it("counts a set $KUBECONFIG as asking for a cluster", () => {
    expect(clusterAsked({ orchconfig: "", context: "" }, "")).toBe(false)
    expect(clusterAsked({ orchconfig: "", context: "" }, existing)).toBe(true)
    expect(clusterAsked({ orchconfig: "", context: "ctx" }, "")).toBe(true)
  })
})
