/**
 * Where meshctl asks the control plane's debug pages (control-plane-access.ts): the port of a
 * pod, the server name expected, what a cert dir holds, and the --xds-address rule (http:// =
 * the monitoring listener, host:port = xDS), without a control plane.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Duration, Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  certDirMaterial,
  debugTargets,
  expectedServerName,
  podXdsPort,
  type XdsFlags,
} from "../../../src/programs/meshctl/control-plane-access.js"
import type { GlobalOptions } from "../../../src/programs/meshctl/global-options.js"
import { MeshctlEnv } from "../../../src/services/config/meshctl-env.js"
import type { OrchPod } from "../../../src/services/orchestrator/objects.js"

const pod = (ports: ReadonlyArray<{ name: string; containerPort: number }>): OrchPod =>
  ({ metadata: { name: "meshd-1" }, spec: { containers: [{ name: "discovery", ports }] } }) as unknown as OrchPod

const flags: XdsFlags = {
  plaintext: false,
  certDir: "",
  authority: "",
  insecure: false,
  xdsPort: 15012,
  revision: "",
  timeout: Duration.seconds(1),
}

const global = {
  as: "",
  asGroup: [],
  asUid: "",
  context: "",
  meshNamespace: "mesh-system",
  orchclientTimeout: Duration.seconds(1),
  orchconfig: "",
  namespace: "",
} as unknown as GlobalOptions

const targets = (xdsAddress: string) =>
  Effect.runPromise(
    debugTargets({ global, xdsAddress, label: "app=meshd" }, flags).pipe(
      Effect.map((list) => list.map((t) => t.name)),
      Effect.either,
      Effect.scoped,
      // meshctl's settings at their defaults (KUBECONFIG unset).
      Effect.provide(MeshctlEnv.layer()),
    ),
  )

describe("control-plane access over xDS", () => {
  it("dials a pod at its declared xDS port for the transport, else --xds-port", () => {
    const declared = pod([
      { name: "grpc-xds", containerPort: 31010 },
      { name: "tls-xds", containerPort: 31012 },
    ])
    expect(podXdsPort(declared, { plaintext: false, xdsPort: 15012 })).toBe(31012)
    expect(podXdsPort(declared, { plaintext: true, xdsPort: 15010 })).toBe(31010)
    expect(podXdsPort(pod([]), { plaintext: true, xdsPort: 15010 })).toBe(15010)
  })

  it("expects --authority, else meshd[-<revision>].<namespace>.svc", () => {
    expect(expectedServerName({ authority: "", revision: "" }, "mesh-system")).toBe("meshd.mesh-system.svc")
    expect(expectedServerName({ authority: "", revision: "canary" }, "ops")).toBe("meshd-canary.ops.svc")
    expect(expectedServerName({ authority: "cp.example", revision: "canary" }, "ops")).toBe("cp.example")
  })

  it("reads the roots of a cert dir, and its client certificate only with both files", () => {
    const dir = mkdtempSync(join(tmpdir(), "meshctl-certdir-"))
    writeFileSync(join(dir, "root-cert.pem"), "ROOT")
    writeFileSync(join(dir, "cert-chain.pem"), "CHAIN")
    expect(certDirMaterial(dir)).toEqual({ rootPem: "ROOT" })
    writeFileSync(join(dir, "key.pem"), "KEY")
    expect(certDirMaterial(dir)).toEqual({ rootPem: "ROOT", clientCert: { certPem: "CHAIN", keyPem: "KEY" } })
    expect(certDirMaterial("")).toEqual({})
  })

  it("takes http://host:port as the monitoring listener and host:port as the xDS address, naming both by host:port", async () => {
    expect(await targets("http://127.0.0.1:15014/")).toEqual(Either.right(["127.0.0.1:15014"]))
    expect(await targets("127.0.0.1:15012")).toEqual(Either.right(["127.0.0.1:15012"]))
    const bad = await targets("127.0.0.1")
    expect(Either.isLeft(bad) && bad.left.message).toBe(
      "--xds-address 127.0.0.1: expected host:port (or http://host:port for the monitoring listener)",
    )
  })
})
