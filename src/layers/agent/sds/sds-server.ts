/**
 * The SDS server on the workload-identity socket: envoy.service.secret.v3.SecretDiscoveryService
 * over SotW (StreamSecrets, FetchSecrets) and delta (DeltaSecrets), pushing `default` and
 * `ROOTCA` again whenever the workload identity renews. When the socket already exists an
 * external provider owns it and this server does not start.
 */
import { existsSync } from "node:fs"
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { Effect, Fiber, FiberSet, Runtime, Stream } from "effect"
import { type WorkloadCertificate, WorkloadIdentity } from "../../../services/agent/identity/identity.js"
import { SECRET_TYPE_URL, secretFor, secretVersion } from "../../../services/agent/sds/sds.js"
import { withScope } from "../../../services/logging/logging.js"
import { bindUnixSocket } from "../../grpc/unix-socket.js"
import { xdsProtoIncludeDirs } from "../../xds/protos.js"

const SDS = "envoy.service.secret.v3.SecretDiscoveryService"
const FILES = ["envoy/service/secret/v3/sds.proto", "envoy/extensions/transport_sockets/tls/v3/secret.proto"]

let definition: grpc.ServiceDefinition | undefined

/** The SDS service definition (with the Secret type loaded so Any `@type` resolves). */
export const sdsServiceDefinition = (json = false): grpc.ServiceDefinition => {
  if (!json && definition !== undefined) return definition
  const loaded = protoLoader.loadSync(FILES, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
    json,
    includeDirs: [...xdsProtoIncludeDirs()],
  })
  const service = loaded[SDS] as unknown as grpc.ServiceDefinition
  if (!json) definition = service
  return service
}

export interface SdsServerSettings {
  readonly socketPath: string
}

type Req = {
  readonly resource_names?: ReadonlyArray<string>
  readonly resource_names_subscribe?: ReadonlyArray<string>
  readonly resource_names_unsubscribe?: ReadonlyArray<string>
  readonly type_url?: string
  readonly response_nonce?: string
  readonly error_detail?: { readonly message?: string } | null
  readonly node?: { readonly id?: string } | null
}

/** Starts the server (scoped); `false` when an external provider's socket is already there. */
export const startSdsServer = (settings: SdsServerSettings) =>
  Effect.gen(function* () {
    if (existsSync(settings.socketPath)) {
      yield* Effect.logInfo(
        `workload identity socket ${settings.socketPath} exists: using the external SDS provider, not starting the agent's`,
      )
      return false
    }
    const identity = yield* WorkloadIdentity
    const runtime = yield* Effect.runtime<never>()
    const fibers = yield* FiberSet.make()
    const run = Runtime.runFork(runtime)
    let nonceCounter = 0
    const nextNonce = () => `${Date.now().toString(36)}-${++nonceCounter}`

    /** Hands every new certificate to a stream until the stream ends (either protocol). */
    const followIdentity = (
      call: grpc.ServerDuplexStream<Req, unknown>,
      onCertificate: (cert: WorkloadCertificate) => void,
    ) => {
      const fiber = Runtime.runSync(runtime)(
        FiberSet.run(
          fibers,
          identity.changes.pipe(Stream.runForEach((cert) => Effect.sync(() => onCertificate(cert)))),
        ),
      )
      const stop = () => run(Fiber.interrupt(fiber))
      call.on("end", () => {
        stop()
        call.end()
      })
      call.on("cancelled", stop)
      call.on("error", stop)
    }

    const sotw = (call: grpc.ServerDuplexStream<Req, unknown>) => {
      let names: ReadonlyArray<string> = []
      let current: WorkloadCertificate | undefined
      let sentVersion = ""
      let lastNonce = ""
      const push = () => {
        if (current === undefined || names.length === 0) return
        const resources = names.flatMap((n) => {
          const s = secretFor(n, current!)
          return s ? [{ ...s, "@type": SECRET_TYPE_URL }] : []
        })
        const version = names.map((n) => secretVersion(n, current!)).join(",")
        sentVersion = version
        lastNonce = nextNonce()
        call.write({ version_info: version, resources, type_url: SECRET_TYPE_URL, nonce: lastNonce })
      }
      call.on("data", (req: Req) => {
        if (req.type_url !== undefined && req.type_url !== "" && req.type_url !== SECRET_TYPE_URL) return
        if (req.error_detail?.message) {
          run(
            Effect.logWarning(`SDS: ${req.node?.id ?? "client"} rejected ${sentVersion}: ${req.error_detail.message}`),
          )
          return
        }
        const requested = [...(req.resource_names ?? [])]
        const same = requested.length === names.length && requested.every((n, i) => n === names[i])
        const isAck = req.response_nonce !== undefined && req.response_nonce !== "" && req.response_nonce === lastNonce
        names = requested
        if (!(isAck && same)) push()
      })
      followIdentity(call, (cert) => {
        current = cert
        push()
      })
    }

    const delta = (call: grpc.ServerDuplexStream<Req, unknown>) => {
      const subscribed = new Set<string>()
      const sentVersions = new Map<string, string>()
      let current: WorkloadCertificate | undefined
      const push = (force: ReadonlyArray<string> = []) => {
        if (current === undefined) return
        const resources: Array<unknown> = []
        for (const name of subscribed) {
          const version = secretVersion(name, current)
          if (sentVersions.get(name) === version && !force.includes(name)) continue
          const secret = secretFor(name, current)
          if (secret === undefined) continue
          sentVersions.set(name, version)
          resources.push({ name, version, resource: { ...secret, "@type": SECRET_TYPE_URL } })
        }
        if (resources.length === 0) return
        call.write({ system_version_info: "", resources, type_url: SECRET_TYPE_URL, nonce: nextNonce() })
      }
      call.on("data", (req: Req) => {
        if (req.error_detail?.message) {
          run(Effect.logWarning(`SDS (delta): ${req.node?.id ?? "client"} rejected: ${req.error_detail.message}`))
          return
        }
        const added: Array<string> = []
        for (const n of req.resource_names_subscribe ?? []) {
          if (!subscribed.has(n)) added.push(n)
          subscribed.add(n)
        }
        for (const n of req.resource_names_unsubscribe ?? []) {
          subscribed.delete(n)
          sentVersions.delete(n)
        }
        if (added.length > 0) push(added)
      })
      followIdentity(call, (cert) => {
        current = cert
        push()
      })
    }

    const fetch = (call: grpc.ServerUnaryCall<Req, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      run(
        Effect.map(identity.current, (cert) => {
          const names = call.request.resource_names ?? []
          const resources = names.flatMap((n) => {
            const s = secretFor(n, cert)
            return s ? [{ ...s, "@type": SECRET_TYPE_URL }] : []
          })
          callback(null, {
            version_info: names.map((n) => secretVersion(n, cert)).join(","),
            resources,
            type_url: SECRET_TYPE_URL,
          })
        }),
      )
    }

    const server = new grpc.Server()
    server.addService(sdsServiceDefinition(), { StreamSecrets: sotw, DeltaSecrets: delta, FetchSecrets: fetch })
    yield* bindUnixSocket(server, { socketPath: settings.socketPath, source: "the SDS socket" }).pipe(Effect.orDie)
    yield* Effect.logInfo(`SDS server listening on ${settings.socketPath}`)
    return true
  }).pipe(withScope("sds"))
