/**
 * The built mesh-agent's SDS serving file-mounted certificates (issue 44 point 3), with a real
 * gRPC client on its socket, as a proxy with a Sidecar ingress or Gateway `tls` naming files asks
 * for them: `file-cert:<cert>~<key>` and `file-root:<ca>` are served from files mounted the
 * orchestrator's way (through a `..data` symlink), a rotation (the symlink swapped to new files)
 * is pushed on the same stream, a missing file leaves its secret out with one log line and no
 * crash, and the file bounds (MESH_SDS_FILE_MAX_BYTES, MESH_SDS_MAX_FILES) refuse what is past
 * them with a few throttled lines however often the proxy asks.
 * Before, the agent served only `default` and `ROOTCA`: every file name got nothing, for ever.
 */
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sdsServiceDefinition } from "../../src/layers/agent/sds/sds-server.js"
import { SECRET_TYPE_URL } from "../../src/services/agent/sds/sds.js"
import { fileCertName, fileRootName } from "../../src/services/credentials/file-secret-name.js"
import { opensslServerCert } from "../support/openssl.js"
import { freePort } from "../support/ports.js"
import { type Daemon, startDaemon } from "../support/processes.js"

type Secret = {
  name: string
  tls_certificate?: { certificate_chain: { inline_bytes: string }; private_key: { inline_bytes: string } }
  validation_context?: { trusted_ca: { inline_bytes: string } }
}
type Response = { version_info: string; nonce: string; resources: Array<Secret> }

const MAX_BYTES = 16_384
const MAX_FILES = 8
const decode = (b64: string) => Buffer.from(b64, "base64").toString()

let dir: string
let agent: Daemon
let statusPort: number
let client: grpc.Client

/** The orchestrator's layout of a mounted Secret: `<dir>/<file>` → `..data/<file>` → `<version>/<file>`. */
const publish = async (at: string, version: string, files: Record<string, string>) => {
  await mkdir(join(at, version), { recursive: true })
  for (const [name, text] of Object.entries(files)) await writeFile(join(at, version, name), text)
  await symlink(version, join(at, "..data_tmp"))
  await rename(join(at, "..data_tmp"), join(at, "..data"))
  for (const name of Object.keys(files)) await symlink(join("..data", name), join(at, name)).catch(() => undefined)
}

/** A SotW stream whose responses are queued; `next` waits for one matching `test`. */
const openStream = () => {
  const call = (
    client as unknown as Record<string, () => grpc.ClientDuplexStream<unknown, Response>>
  ).StreamSecrets!.call(client)
  const seen: Array<Response> = []
  const waiters = new Set<() => void>()
  call.on("data", (r: Response) => {
    seen.push(r)
    for (const w of waiters) w()
  })
  call.on("error", () => undefined)
  const next = (test: (r: Response) => boolean, timeoutMs = 15_000) =>
    new Promise<Response>((done, fail) => {
      const check = () => {
        const i = seen.findIndex(test)
        if (i < 0) return
        const [r] = seen.splice(0, i + 1).slice(-1)
        waiters.delete(check)
        clearTimeout(timer)
        done(r!)
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        fail(new Error(`no matching SDS response within ${timeoutMs} ms; agent output:\n${agent.output()}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })
  return { call, next, pending: () => seen.length }
}

const metric = async (name: string): Promise<number> => {
  const body = await (await fetch(`http://127.0.0.1:${statusPort}/stats/prometheus`)).text()
  return Number(body.match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1] ?? Number.NaN)
}

const certOf = (r: Response, name: string) => {
  const s = r.resources.find((x) => x.name === name)?.tls_certificate
  return s === undefined ? undefined : decode(s.certificate_chain.inline_bytes)
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-sds-files-"))
  // The workload identity, mounted (FILE_MOUNTED_CERTS): no CA is needed.
  const identity = opensslServerCert(dir, "workload", "URI:spiffe://cluster.local/ns/default/sa/web")
  await mkdir(join(dir, "etc/certs"), { recursive: true })
  await writeFile(join(dir, "etc/certs/key.pem"), identity.keyPem)
  await writeFile(join(dir, "etc/certs/cert-chain.pem"), identity.certPem)
  await writeFile(join(dir, "etc/certs/root-cert.pem"), identity.caPem)
  await mkdir(join(dir, "etc/mesh/config"), { recursive: true })
  // Nothing listens there: the SDS server does not need the control plane.
  await writeFile(
    join(dir, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${await freePort()}\n  controlPlaneAuthPolicy: NONE\n`,
  )
  await writeFile(join(dir, "resolv.conf"), "nameserver 127.0.0.1\n")
  statusPort = await freePort()
  agent = startDaemon(
    "mesh-agent",
    ["proxy", "router"],
    {
      DISABLE_PROXY: "true",
      FILE_MOUNTED_CERTS: "true",
      CA_ADDR: "127.0.0.1:1",
      POD_NAME: "ingress-1",
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: "web",
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(await freePort()),
      STATUS_PORT: String(statusPort),
      MINIMUM_DRAIN_DURATION: "0s",
      DNS_PROXY_RESOLV_CONF: join(dir, "resolv.conf"),
      MESH_SDS_FILE_MAX_BYTES: String(MAX_BYTES),
      MESH_SDS_MAX_FILES: String(MAX_FILES),
    },
    dir,
  )
  const socket = resolve(dir, (await agent.waitFor(/SDS server listening on (\S+)/, 30_000))[1]!)
  const Client = grpc.makeGenericClientConstructor(sdsServiceDefinition(true), "SecretDiscoveryService")
  client = new Client(`unix://${socket}`, grpc.credentials.createInsecure())
}, 60_000)

afterAll(async () => {
  client?.close()
  if (agent?.process.exitCode === null) await agent.stop("SIGKILL")
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe("mesh-agent SDS: file-mounted certificates", () => {
  it("serves file-cert: and file-root:, pushes their rotation on the same stream, leaves a missing file out", async () => {
    const mount = join(dir, "etc/ingress-certs")
    const v1 = opensslServerCert(dir, "ingress-v1", "DNS:web.example.com")
    await publish(mount, "..v1", { "tls.crt": v1.certPem, "tls.key": v1.keyPem, "ca.crt": v1.caPem })
    const cert = fileCertName(join(mount, "tls.crt"), join(mount, "tls.key"))
    const root = fileRootName(join(mount, "ca.crt"))
    const missing = fileCertName(join(dir, "nowhere/tls.crt"), join(dir, "nowhere/tls.key"))
    const stream = openStream()
    stream.call.write({
      node: { id: "router~127.0.0.1~ingress-1.default~default.svc.cluster.local" },
      type_url: SECRET_TYPE_URL,
      resource_names: [cert, root, missing],
    })
    const first = await stream.next((r) => r.resources.length === 2)
    expect(first.resources.map((r) => r.name)).toEqual([cert, root])
    expect(certOf(first, cert)).toBe(v1.certPem)
    expect(decode(first.resources[0]!.tls_certificate!.private_key.inline_bytes)).toBe(v1.keyPem)
    expect(decode(first.resources[1]!.validation_context!.trusted_ca.inline_bytes)).toBe(v1.caPem)
    stream.call.write({
      type_url: SECRET_TYPE_URL,
      resource_names: [cert, root, missing],
      version_info: first.version_info,
      response_nonce: first.nonce,
    })

    const v2 = opensslServerCert(dir, "ingress-v2", "DNS:web.example.com")
    await publish(mount, "..v2", { "tls.crt": v2.certPem, "tls.key": v2.keyPem, "ca.crt": v2.caPem })
    const rotated = await stream.next((r) => certOf(r, cert) === v2.certPem)
    expect(rotated.version_info).not.toBe(first.version_info)
    expect(decode(rotated.resources.find((r) => r.name === cert)!.tls_certificate!.private_key.inline_bytes)).toBe(
      v2.keyPem,
    )
    const withRoot = rotated.resources.find((r) => r.name === root)!
    // The root is pushed on its own change too (the same response, or the next one).
    if (decode(withRoot.validation_context!.trusted_ca.inline_bytes) !== v2.caPem)
      await stream.next((r) => {
        const ca = r.resources.find((x) => x.name === root)?.validation_context
        return ca !== undefined && decode(ca.trusted_ca.inline_bytes) === v2.caPem
      })
    expect(stream.pending()).toBe(0)

    // The missing secret: one line naming it, the agent still up, nothing sent for it.
    const lines = agent.output().split("\n")
    expect(lines.filter((l) => l.includes("nowhere/tls.crt does not exist"))).toHaveLength(1)
    expect(lines.some((l) => l.includes(`SDS: rotated ${cert}`))).toBe(true)
    expect(agent.process.exitCode).toBeNull()
    expect(await metric("num_file_secret_loads_total")).toBe(4)
    expect(await metric("num_file_secret_failures_total")).toBeGreaterThanOrEqual(1)
    stream.call.cancel()
  })

  it("refuses files over MESH_SDS_FILE_MAX_BYTES and names past MESH_SDS_MAX_FILES, in a few lines however often asked", async () => {
    const big = join(dir, "big-ca.crt")
    await writeFile(big, "x".repeat(MAX_BYTES + 1))
    const before = agent.output().length
    const stream = openStream()
    const names = [
      fileRootName(big),
      ...Array.from({ length: 200 }, (_, i) => fileRootName(join(dir, `flood/ca-${i}.crt`))),
    ]
    for (let i = 0; i < 20; i++)
      stream.call.write({
        ...(i === 0 ? { node: { id: "router~127.0.0.1~ingress-1.default~default.svc.cluster.local" } } : {}),
        type_url: SECRET_TYPE_URL,
        resource_names: i % 2 === 0 ? names : names.slice().reverse(),
      })
    await agent.waitFor(/big-ca\.crt is larger than 16384 bytes \(MESH_SDS_FILE_MAX_BYTES\)/, 15_000)
    await agent.waitFor(/at most 8 \(MESH_SDS_MAX_FILES\)/, 15_000)
    // Nothing could be served, so nothing was sent; the agent is up and still answers.
    const ok = opensslServerCert(dir, "after-flood", "DNS:ok.example.com")
    await writeFile(join(dir, "ok-ca.crt"), ok.caPem)
    stream.call.cancel()
    const again = openStream()
    again.call.write({
      node: { id: "router~127.0.0.1~ingress-1.default~default.svc.cluster.local" },
      type_url: SECRET_TYPE_URL,
      resource_names: [fileRootName(join(dir, "ok-ca.crt"))],
    })
    const served = await again.next((r) => r.resources.length === 1)
    expect(decode(served.resources[0]!.validation_context!.trusted_ca.inline_bytes)).toBe(ok.caPem)
    again.call.cancel()
    // 20 requests of 201 refused names (over 4,000 refusals) cost a few throttled lines.
    const logged = agent.output().slice(before)
    expect(Buffer.byteLength(logged)).toBeLessThan(8 * 1024)
    expect(agent.process.exitCode).toBeNull()
  })
})
