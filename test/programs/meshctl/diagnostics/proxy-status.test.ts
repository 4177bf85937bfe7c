/**
 * `meshctl proxy-status` (and `ps`, `x proxy-status`) against a running mesh-discovery with real
 * ADS clients: the table shows each proxy's xDS types SYNCED or NOT SENT, JSON carries the same,
 * a name narrows to one proxy, and a missing control plane is an error naming where it looked.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { run } from "../../../support/processes.js"
import { type ControlPlane, eventually, startControlPlane } from "../control-plane-fixture.js"

let cp: ControlPlane

beforeAll(async () => {
  cp = await startControlPlane([
    { pod: "app-a", version: "1.2.3" },
    { pod: "app-b", version: "1.2.4", extraType: TypeUrl.NameTable },
  ])
}, 60_000)

afterAll(async () => {
  await cp?.stop()
})

const rowOf = (table: string, name: string) =>
  table
    .split("\n")
    .find((line) => line.startsWith(`${name} `))
    ?.split(/\s{3,}/)

describe("meshctl proxy-status", () => {
  it("prints one SYNCED row per connected proxy at --xds-address", async () => {
    const result = await eventually(
      () => run("meshctl", ["proxy-status", "--xds-address", `http://${cp.monitoring}`]),
      (r) => (r.stdout.match(/SYNCED/g) ?? []).length >= 4,
    )
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const lines = result.stdout.trim().split("\n")
    expect(lines[0]!.split(/\s{3,}/)).toEqual([
      "NAME",
      "CLUSTER",
      "CDS",
      "LDS",
      "EDS",
      "RDS",
      "ECDS",
      "MESHD",
      "VERSION",
    ])
    expect(lines).toHaveLength(3)
    expect(rowOf(result.stdout, "app-a.default")).toEqual([
      "app-a.default",
      "cluster-1",
      "SYNCED",
      "SYNCED",
      "NOT SENT",
      "NOT SENT",
      "NOT SENT",
      cp.monitoring,
      "1.2.3",
    ])
    expect(rowOf(result.stdout, "app-b.default")?.at(-1)).toBe("1.2.4")
  })

  it("shows every watched type with --verbosity 1, and only the standard ones without", async () => {
    const plain = await run("meshctl", ["ps", "--xds-address", `http://${cp.monitoring}`])
    expect(plain.stdout).not.toContain("NDS")
    const verbose = await run("meshctl", ["x", "ps", "--xds-address", `http://${cp.monitoring}`, "-v", "1"])
    expect(verbose.code).toBe(0)
    const header = verbose.stdout.split("\n")[0]!.split(/\s{3,}/)
    expect(header).toEqual(["NAME", "CLUSTER", "CDS", "LDS", "EDS", "RDS", "ECDS", "NDS", "MESHD", "VERSION"])
    // app-a never asked for the name table.
    expect(rowOf(verbose.stdout, "app-a.default")?.[7]).toBe("NOT SENT")
  })

  it("prints JSON with -o json and narrows to one proxy when named", async () => {
    const json = await run("meshctl", [
      "proxy-status",
      "--xds-address",
      `http://${cp.monitoring}`,
      "-o",
      "json",
      "app-b",
    ])
    expect(json.code).toBe(0)
    const statuses = JSON.parse(json.stdout)
    expect(statuses).toHaveLength(1)
    expect(statuses[0]).toMatchObject({
      name: "app-b.default",
      cluster: "cluster-1",
      version: "1.2.4",
      meshd: cp.monitoring,
      xds: { CDS: "SYNCED", LDS: "SYNCED" },
    })
    expect(statuses[0].nonces.CDS.sent).toBe(statuses[0].nonces.CDS.acked)
    const missing = await run("meshctl", ["proxy-status", "--xds-address", `http://${cp.monitoring}`, "nobody.default"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("proxy nobody.default is not connected")
  })

  it("finds the control plane pod through the orchestrator", async () => {
    const result = await run("meshctl", ["ps", "-c", cp.kubeconfig, "--plaintext"])
    expect(result.code).toBe(0)
    expect(rowOf(result.stdout, "app-a.default")?.at(-2)).toBe("meshd-7f9c")
  })

  it("fails when no control plane pod is found, naming namespace, label and context", async () => {
    const result = await run("meshctl", ["proxy-status", "-c", cp.kubeconfig, "-i", "default"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      "no control plane found in namespace default with label app=meshd (used context orchestrator)",
    )
    const label = await run("meshctl", ["proxy-status", "-c", cp.kubeconfig, "--xds-label", "app=other"])
    expect(label.code).toBe(1)
    expect(label.stderr).toContain("no control plane found in namespace mesh-system with label app=other")
  })

  it("reports an unreachable --xds-address", async () => {
    const result = await run("meshctl", ["proxy-status", "--xds-address", "http://127.0.0.1:1", "--timeout", "2s"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("127.0.0.1:1/debug/syncz")
  })
})

/** A `--cert-dir` for `spiffe://cluster.local/ns/<namespace>/sa/meshctl`, signed by the daemon's CA with openssl. */
const certDirFor = (namespace: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `meshctl-certs-${namespace}-`))
  const sh = (args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  sh(
    ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"].concat([
      "-keyout",
      "key.pem",
      "-out",
      "client.csr",
      "-subj",
      "/O=meshctl",
    ]),
  )
  writeFileSync(
    join(dir, "client.ext"),
    `subjectAltName=URI:spiffe://cluster.local/ns/${namespace}/sa/meshctl\nextendedKeyUsage=clientAuth\n`,
  )
  sh(
    [
      "x509",
      "-req",
      "-in",
      "client.csr",
      "-CA",
      join(cp.caDir, "ca-cert.pem"),
      "-CAkey",
      join(cp.caDir, "ca-key.pem"),
    ].concat([
      "-CAcreateserial",
      "-CAserial",
      join(dir, "ca.srl"),
      "-days",
      "1",
      "-extfile",
      "client.ext",
      "-out",
      "cert-chain.pem",
    ]),
  )
  execFileSync("cp", [join(cp.caDir, "ca-cert.pem"), join(dir, "root-cert.pem")])
  return dir
}

/** The connection ids the control plane lists in its syncz (over HTTP, as a loopback caller). */
const connectionIds = async (): Promise<ReadonlyArray<string>> => {
  const rows = (await (await fetch(`http://${cp.monitoring}/debug/syncz`)).json()) as Array<{ connectionId: string }>
  return [...new Set(rows.map((r) => r.connectionId))].sort()
}

describe("meshctl proxy-status over xDS (debug type URLs)", () => {
  it("asks the TLS listener with a mesh-system client certificate and the plaintext one with --plaintext; other namespaces are refused; proxies are unaffected", async () => {
    const before = await connectionIds()
    expect(before).toHaveLength(2)
    const tls = await eventually(
      () => run("meshctl", ["ps", "--xds-address", cp.secure, "--cert-dir", certDirFor("mesh-system")]),
      (r) => (r.stdout.match(/SYNCED/g) ?? []).length >= 4,
    )
    expect(tls.stderr).toBe("")
    expect(tls.code).toBe(0)
    expect(rowOf(tls.stdout, "app-a.default")?.slice(2, 4)).toEqual(["SYNCED", "SYNCED"])
    expect(rowOf(tls.stdout, "app-b.default")?.at(-2)).toBe(cp.secure)
    // Only the two proxies: the debug stream is none.
    expect(tls.stdout.trim().split("\n")).toHaveLength(3)

    const plain = await run("meshctl", ["ps", "--xds-address", cp.ads, "--plaintext", "-o", "json"])
    expect(plain.code, plain.stderr).toBe(0)
    const statuses = JSON.parse(plain.stdout) as Array<{ name: string }>
    expect(statuses.map((s) => s.name).sort()).toEqual(["app-a.default", "app-b.default"])

    const other = await run("meshctl", ["ps", "--xds-address", cp.secure, "--cert-dir", certDirFor("default")])
    expect(other.code).toBe(1)
    expect(other.stdout).toBe("")
    expect(other.stderr).toContain(
      "PERMISSION_DENIED: debug information is only given to identities of namespace mesh-system; the caller is spiffe://cluster.local/ns/default/sa/meshctl (namespace default)",
    )
    // The same streams still connected, nothing added, and the server logged the refusal.
    expect(await connectionIds()).toEqual(before)
    await cp.daemon.waitFor(/debug request refused \(PERMISSION_DENIED\)/)
  })

  it("through the orchestrator: dials the pod's tls-xds port, trusting the distributed mesh root", async () => {
    cp.orchestrator.put({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: "mesh-system" },
    })
    cp.orchestrator.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "mesh-ca-root-cert", namespace: "mesh-system" },
      data: { "root-cert.pem": readFileSync(join(cp.caDir, "ca-cert.pem"), "utf8") },
    })
    const result = await run("meshctl", ["ps", "-c", cp.kubeconfig, "--timeout", "5s"])
    // The TLS handshake succeeded (root and meshd.mesh-system.svc checked): the server answered.
    // The caller's token (TokenRequest of the default account) is unsigned in the fake
    // orchestrator, and the server verifies none here, so it is refused as unauthenticated.
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `mesh.io/debug/syncz at ${cp.secure} (xDS, TLS): UNAUTHENTICATED: authentication failed`,
    )
  })
})
