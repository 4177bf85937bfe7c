/**
 * The SDS server on a unix socket with a real grpc-js client: `default` and `ROOTCA` over SotW
 * and delta, ACKs answered with silence, renewals (TestClock) pushed, FetchSecrets, and an
 * existing socket left to its external provider; file-mounted secrets (`file-cert:`,
 * `file-root:`) served, rotated on the same stream, and left out while their files are missing.
 */
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { Chunk, Context, Duration, Effect, Layer, Queue, TestClock } from "effect"
import { makeWorkloadIdentity } from "../../../../src/layers/agent/identity/identity.js"
import { DEFAULT_FILE_SECRETS } from "../../../../src/layers/agent/sds/file-secrets.js"
import { sdsServiceDefinition, startSdsServer } from "../../../../src/layers/agent/sds/sds-server.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { WorkloadIdentity } from "../../../../src/services/agent/identity/identity.js"
import { ROOT_SECRET, SECRET_TYPE_URL, WORKLOAD_SECRET } from "../../../../src/services/agent/sds/sds.js"
import { fileCertName, fileRootName } from "../../../../src/services/credentials/file-secret-name.js"
import { selfSigned } from "../../../services/gateway-api/tls-fixtures.js"
import { makeFakeCa } from "../identity/fake-ca.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"
const HOUR = 3_600_000

type Secret = {
  "@type"?: string
  name: string
  tls_certificate?: { certificate_chain: { inline_bytes: string }; private_key: { inline_bytes: string } }
  validation_context?: { trusted_ca: { inline_bytes: string } }
}
type Response = {
  version_info?: string
  nonce: string
  type_url: string
  resources: Array<Secret | { name: string; version: string; resource: Secret }>
}

const awaitSleeper = Effect.gen(function* () {
  for (;;) {
    if (Chunk.size(yield* TestClock.sleeps()) > 0) return
    yield* Effect.promise(() => new Promise<void>((r) => setImmediate(r)))
  }
})

const decode = (b64: string) => Buffer.from(b64, "base64").toString()

const setup = Effect.gen(function* () {
  const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-sds-")))
  yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
  const tokenPath = join(dir, "token")
  yield* Effect.promise(() => writeFile(tokenPath, "t"))
  const fake = yield* makeFakeCa(Duration.hours(1))
  const context = yield* Layer.build(
    Layer.scoped(
      WorkloadIdentity,
      makeWorkloadIdentity({
        identity: ID,
        keySpec: { kind: "EC", curve: "P-256" },
        ttlSeconds: 3600,
        tokenPath,
        renewal: { graceRatio: 0.5, jitter: 0 },
      }),
    ),
  ).pipe(Effect.provide(Layer.merge(fake.layer, metricsLayer("test"))))
  const identity = Context.get(context, WorkloadIdentity)
  const socketPath = join(dir, "socket")
  // File events come in real time while the TestClock stands still: no debounce after them.
  const files = { ...DEFAULT_FILE_SECRETS, debounce: Duration.zero }
  const started = yield* startSdsServer({ socketPath, files }).pipe(Effect.provide(context))
  const Client = grpc.makeGenericClientConstructor(sdsServiceDefinition(true), "SecretDiscoveryService")
  const client = yield* Effect.acquireRelease(
    Effect.sync(() => new Client(`unix://${socketPath}`, grpc.credentials.createInsecure())),
    (c) => Effect.sync(() => c.close()),
  )
  const open = (method: "StreamSecrets" | "DeltaSecrets") =>
    Effect.gen(function* () {
      const inbox = yield* Queue.unbounded<Response>()
      const stream = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const s = (client as unknown as Record<string, () => grpc.ClientDuplexStream<unknown, Response>>)[
            method
          ]!.call(client)
          s.on("data", (r: Response) => Queue.unsafeOffer(inbox, r))
          s.on("error", () => {})
          return s
        }),
        (s) => Effect.sync(() => s.cancel()),
      )
      return { stream, inbox }
    })
  return { dir, identity, started, client, open, socketPath }
})

const node = { id: "sidecar~10.0.0.1~app.default~default.svc.cluster.local" }

describe("SDS server", () => {
  it.scoped("serves default and ROOTCA over SotW, silent on ACK, pushes the renewed certificate", () =>
    Effect.gen(function* () {
      const { identity, started, open } = yield* setup
      expect(started).toBe(true)
      const cert = yield* identity.current
      const { stream, inbox } = yield* open("StreamSecrets")
      stream.write({ node, type_url: SECRET_TYPE_URL, resource_names: [WORKLOAD_SECRET, ROOT_SECRET] })
      const first = yield* Queue.take(inbox)
      expect(first.type_url).toBe(SECRET_TYPE_URL)
      const [workload, root] = first.resources as Array<Secret>
      expect(workload!["@type"]).toBe(SECRET_TYPE_URL)
      expect(workload!.name).toBe("default")
      expect(decode(workload!.tls_certificate!.certificate_chain.inline_bytes)).toBe(cert.certChainPem)
      expect(decode(workload!.tls_certificate!.private_key.inline_bytes)).toBe(cert.keyPem)
      expect(root!.name).toBe("ROOTCA")
      expect(decode(root!.validation_context!.trusted_ca.inline_bytes)).toBe(cert.rootCertPem)
      // ACK: nothing is sent back
      stream.write({
        type_url: SECRET_TYPE_URL,
        resource_names: [WORKLOAD_SECRET, ROOT_SECRET],
        version_info: first.version_info,
        response_nonce: first.nonce,
      })
      // renewal at half life is pushed on the open stream
      yield* awaitSleeper
      yield* TestClock.adjust(Duration.millis(HOUR / 2))
      const pushed = yield* Queue.take(inbox)
      const renewed = yield* identity.current
      expect(renewed.keyPem).not.toBe(cert.keyPem)
      expect(pushed.nonce).not.toBe(first.nonce)
      expect(pushed.version_info).not.toBe(first.version_info)
      const w = (pushed.resources as Array<Secret>).find((s) => s.name === "default")!
      expect(decode(w.tls_certificate!.private_key.inline_bytes)).toBe(renewed.keyPem)
      // exactly one response between: the ACK produced none
      expect(yield* Queue.size(inbox)).toBe(0)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("serves delta: only subscribed secrets, then only what changed", () =>
    Effect.gen(function* () {
      const { identity, open } = yield* setup
      const { stream, inbox } = yield* open("DeltaSecrets")
      stream.write({ node, type_url: SECRET_TYPE_URL, resource_names_subscribe: [WORKLOAD_SECRET] })
      const first = yield* Queue.take(inbox)
      expect(first.resources.map((r) => r.name)).toEqual(["default"])
      stream.write({ type_url: SECRET_TYPE_URL, response_nonce: first.nonce })
      stream.write({ type_url: SECRET_TYPE_URL, resource_names_subscribe: [ROOT_SECRET] })
      const second = yield* Queue.take(inbox)
      expect(second.resources.map((r) => r.name)).toEqual(["ROOTCA"])
      const before = (first.resources[0] as { version: string }).version
      yield* awaitSleeper
      yield* TestClock.adjust(Duration.millis(HOUR / 2))
      const pushed = yield* Queue.take(inbox)
      // the root did not change: only the workload secret is resent
      expect(pushed.resources.map((r) => r.name)).toEqual(["default"])
      const entry = pushed.resources[0] as { version: string; resource: Secret }
      expect(entry.version).not.toBe(before)
      expect(decode(entry.resource.tls_certificate!.private_key.inline_bytes)).toBe((yield* identity.current).keyPem)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("FetchSecrets answers once", () =>
    Effect.gen(function* () {
      const { client, identity } = yield* setup
      const response = yield* Effect.async<Response>((resume) => {
        ;(client as unknown as Record<string, Function>).FetchSecrets!(
          { resource_names: [ROOT_SECRET] },
          (_e: unknown, r: Response) => resume(Effect.succeed(r)),
        )
      })
      const root = response.resources[0] as Secret
      expect(decode(root.validation_context!.trusted_ca.inline_bytes)).toBe((yield* identity.current).rootCertPem)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("does not start when the workload identity socket already exists", () =>
    Effect.gen(function* () {
      const { dir, identity } = yield* setup
      const external = join(dir, "external-socket")
      yield* Effect.promise(() => writeFile(external, ""))
      const started = yield* startSdsServer({ socketPath: external }).pipe(
        Effect.provideService(WorkloadIdentity, identity),
      )
      expect(started).toBe(false)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  describe("file-mounted secrets", () => {
    type Pair = { cert: string; key: string }
    const pair = (name: string) =>
      Effect.promise(() => selfSigned(name)).pipe(
        Effect.map((p): Pair => ({ cert: `${p.cert.trimEnd()}\n`, key: `${p.key.trimEnd()}\n` })),
      )
    /** Replaces a file as an editor or a copy tool does: written aside, renamed over. */
    const replace = (path: string, text: string) =>
      Effect.promise(async () => {
        await writeFile(`${path}.tmp`, text)
        await rename(`${path}.tmp`, path)
      })
    /** File events arrive in real time while the TestClock stands still: bound waits with a real timer. */
    const within10s = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.raceFirst(
        effect,
        Effect.promise(() => new Promise((r) => setTimeout(r, 10_000))).pipe(
          Effect.zipRight(Effect.dieMessage("no response within 10s")),
        ),
      )
    /** The next response in which `name` carries a certificate other than `not`. */
    const nextCert = (inbox: Queue.Queue<Response>, name: string, not = "") =>
      within10s(
        Effect.gen(function* () {
          for (;;) {
            const r = yield* Queue.take(inbox)
            const secret = (r.resources as Array<Secret>).find((s) => s.name === name)
            const cert = secret?.tls_certificate && decode(secret.tls_certificate.certificate_chain.inline_bytes)
            if (cert !== undefined && cert !== not) return { response: r, cert }
          }
        }),
      )

    it.scoped("serves file-cert: over SotW and pushes the rotated files on the same stream", () =>
      Effect.gen(function* () {
        const { dir, open } = yield* setup
        const [a, b] = [yield* pair("a.example.com"), yield* pair("b.example.com")]
        const [cert, key] = [join(dir, "tls.crt"), join(dir, "tls.key")]
        yield* replace(cert, a.cert)
        yield* replace(key, a.key)
        const name = fileCertName(cert, key)
        const { stream, inbox } = yield* open("StreamSecrets")
        stream.write({ node, type_url: SECRET_TYPE_URL, resource_names: [name] })
        const first = yield* nextCert(inbox, name)
        expect(first.cert).toBe(a.cert)
        const secret = first.response.resources[0] as Secret
        expect(secret["@type"]).toBe(SECRET_TYPE_URL)
        expect(decode(secret.tls_certificate!.private_key.inline_bytes)).toBe(a.key)
        stream.write({
          type_url: SECRET_TYPE_URL,
          resource_names: [name],
          version_info: first.response.version_info,
          response_nonce: first.response.nonce,
        })
        yield* replace(key, b.key)
        yield* replace(cert, b.cert)
        const rotated = yield* nextCert(inbox, name, a.cert)
        expect(rotated.cert).toBe(b.cert)
        expect(rotated.response.version_info).not.toBe(first.response.version_info)
        expect(decode((rotated.response.resources[0] as Secret).tls_certificate!.private_key.inline_bytes)).toBe(b.key)
      }).pipe(Effect.provide(metricsLayer("test"))),
    )

    it.scoped("a missing file leaves its secret out (the proxy waits) until the poll finds it", () =>
      Effect.gen(function* () {
        const { dir, open, identity } = yield* setup
        const a = yield* pair("a.example.com")
        const [cert, key] = [join(dir, "late.crt"), join(dir, "late.key")]
        const name = fileCertName(cert, key)
        const { stream, inbox } = yield* open("StreamSecrets")
        stream.write({ node, type_url: SECRET_TYPE_URL, resource_names: [WORKLOAD_SECRET, name] })
        const first = yield* Queue.take(inbox)
        expect(first.resources.map((r) => r.name)).toEqual(["default"])
        expect(decode((first.resources[0] as Secret).tls_certificate!.private_key.inline_bytes)).toBe(
          (yield* identity.current).keyPem,
        )
        stream.write({
          type_url: SECRET_TYPE_URL,
          resource_names: [WORKLOAD_SECRET, name],
          version_info: first.version_info,
          response_nonce: first.nonce,
        })
        yield* replace(key, a.key)
        yield* replace(cert, a.cert)
        // The directory is watched, so the files are seen at once; the poll would find them too.
        yield* TestClock.adjust(DEFAULT_FILE_SECRETS.pollInterval)
        const both = yield* nextCert(inbox, name)
        expect(both.response.resources.map((r) => r.name)).toEqual(["default", name])
        expect(both.cert).toBe(a.cert)
      }).pipe(Effect.provide(metricsLayer("test"))),
    )

    it.scoped("serves file-root: over delta, resending only it when its file changes", () =>
      Effect.gen(function* () {
        const { dir, open } = yield* setup
        const [a, b] = [yield* pair("ca-a.example.com"), yield* pair("ca-b.example.com")]
        const ca = join(dir, "ca.crt")
        yield* replace(ca, a.cert)
        const name = fileRootName(ca)
        const { stream, inbox } = yield* open("DeltaSecrets")
        stream.write({ node, type_url: SECRET_TYPE_URL, resource_names_subscribe: [WORKLOAD_SECRET, name] })
        const seen = new Map<string, string>()
        const takeRoot = (want: string) =>
          within10s(
            Effect.gen(function* () {
              for (;;) {
                const r = yield* Queue.take(inbox)
                for (const e of r.resources as Array<{ name: string; version: string; resource: Secret }>) {
                  if (e.resource.validation_context !== undefined)
                    seen.set(e.name, decode(e.resource.validation_context.trusted_ca.inline_bytes))
                  else seen.set(e.name, "certificate")
                }
                if (seen.get(name) === want) return r
              }
            }),
          )
        yield* takeRoot(a.cert)
        expect(seen.get("default")).toBe("certificate")
        seen.clear()
        yield* replace(ca, b.cert)
        const pushed = yield* takeRoot(b.cert)
        expect(pushed.resources.map((r) => r.name)).toEqual([name])
      }).pipe(Effect.provide(metricsLayer("test"))),
    )
  })
})
