/**
 * The SDS server on the workload-identity socket: envoy.service.secret.v3.SecretDiscoveryService
 * over SotW (StreamSecrets, FetchSecrets) and delta (DeltaSecrets), pushing `default` and
 * `ROOTCA` again whenever the workload identity renews, and the file-mounted secrets the proxy
 * names (`file-cert:<cert>~<key>`, `file-root:<ca>`; file-secrets.ts) again whenever their files
 * change. A secret that cannot be served yet is left out of the response (the proxy keeps
 * waiting for it). When the socket already exists an external provider owns it and this server
 * does not start.
 */
import { existsSync } from "node:fs"
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { Effect, Fiber, FiberSet, Runtime, Stream } from "effect"
import { type WorkloadCertificate, WorkloadIdentity } from "../../../services/agent/identity/identity.js"
import { SECRET_TYPE_URL, type SecretObject, secretFor, secretVersion } from "../../../services/agent/sds/sds.js"
import { isFileSecretName } from "../../../services/credentials/file-secret-name.js"
import { withScope } from "../../../services/logging/logging.js"
import { bindUnixSocket } from "../../grpc/unix-socket.js"
import { xdsProtoIncludeDirs } from "../../xds/protos.js"
import {
  DEFAULT_FILE_SECRETS,
  type FileSecretSettings,
  type FileSecretsShape,
  makeFileSecrets,
} from "./file-secrets.js"

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
  /** How file-mounted secrets are read and followed. */
  readonly files?: FileSecretSettings
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

interface Served {
  readonly secret: SecretObject
  readonly version: string
}

const asResource = (served: Served) => ({ ...served.secret, "@type": SECRET_TYPE_URL })

/**
 * The file secrets one stream asks for, held in the store while it does (`onChange` runs when
 * one of them gets a new version) and let go when it stops asking or ends.
 */
const heldFileSecrets = (files: FileSecretsShape, onChange: () => void) => {
  const held = new Set<string>()
  const add = (name: string) => {
    // A name refused now (bound reached) is tried again when the stream asks for it again.
    if (isFileSecretName(name) && !held.has(name) && files.retain(name, onChange)) held.add(name)
  }
  const remove = (name: string) => {
    if (held.delete(name)) files.release(name, onChange)
  }
  return {
    add,
    remove,
    /** SotW: exactly these names from now on. */
    set: (names: ReadonlyArray<string>) => {
      const wanted = new Set(names)
      for (const name of [...held]) if (!wanted.has(name)) remove(name)
      for (const name of wanted) add(name)
    },
    releaseAll: () => {
      for (const name of [...held]) remove(name)
    },
  }
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
    const files = yield* makeFileSecrets(settings.files ?? DEFAULT_FILE_SECRETS)
    const runtime = yield* Effect.runtime<never>()
    const fibers = yield* FiberSet.make()
    const run = Runtime.runFork(runtime)
    let nonceCounter = 0
    const nextNonce = () => `${Date.now().toString(36)}-${++nonceCounter}`

    /** A secret as it can be served now: the workload's from its certificate, a file's once read. */
    const lookup = (name: string, cert: WorkloadCertificate | undefined): Served | undefined => {
      if (isFileSecretName(name)) return files.current(name)
      if (cert === undefined) return undefined
      const secret = secretFor(name, cert)
      return secret === undefined ? undefined : { secret, version: secretVersion(name, cert) }
    }

    /** Runs `cleanup` once the stream ends, either way. */
    const onClosed = (call: grpc.ServerDuplexStream<Req, unknown>, cleanup: () => void) => {
      let done = false
      const once = () => {
        if (done) return
        done = true
        cleanup()
      }
      call.on("end", () => {
        once()
        call.end()
      })
      call.on("cancelled", once)
      call.on("error", once)
    }

    /** Hands every new certificate to a stream (either protocol); stopped by the function returned. */
    const followIdentity = (onCertificate: (cert: WorkloadCertificate) => void) => {
      const fiber = Runtime.runSync(runtime)(
        FiberSet.run(
          fibers,
          identity.changes.pipe(Stream.runForEach((cert) => Effect.sync(() => onCertificate(cert)))),
        ),
      )
      return () => run(Fiber.interrupt(fiber))
    }

    const sotw = (call: grpc.ServerDuplexStream<Req, unknown>) => {
      let names: ReadonlyArray<string> = []
      let current: WorkloadCertificate | undefined
      let sentVersion = ""
      let lastNonce = ""
      const push = () => {
        const served = names.flatMap((n) => lookup(n, current) ?? [])
        if (served.length === 0) return
        sentVersion = served.map((s) => s.version).join(",")
        lastNonce = nextNonce()
        call.write({
          version_info: sentVersion,
          resources: served.map(asResource),
          type_url: SECRET_TYPE_URL,
          nonce: lastNonce,
        })
      }
      const held = heldFileSecrets(files, push)
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
        held.set(requested)
        if (!(isAck && same)) push()
      })
      const stop = followIdentity((cert) => {
        current = cert
        push()
      })
      onClosed(call, () => {
        stop()
        held.releaseAll()
      })
    }

    const delta = (call: grpc.ServerDuplexStream<Req, unknown>) => {
      const subscribed = new Set<string>()
      const sentVersions = new Map<string, string>()
      let current: WorkloadCertificate | undefined
      const push = (force: ReadonlyArray<string> = []) => {
        const resources: Array<unknown> = []
        for (const name of subscribed) {
          const served = lookup(name, current)
          if (served === undefined) continue
          if (sentVersions.get(name) === served.version && !force.includes(name)) continue
          sentVersions.set(name, served.version)
          resources.push({ name, version: served.version, resource: asResource(served) })
        }
        if (resources.length === 0) return
        call.write({ system_version_info: "", resources, type_url: SECRET_TYPE_URL, nonce: nextNonce() })
      }
      const held = heldFileSecrets(files, () => push())
      call.on("data", (req: Req) => {
        if (req.error_detail?.message) {
          run(Effect.logWarning(`SDS (delta): ${req.node?.id ?? "client"} rejected: ${req.error_detail.message}`))
          return
        }
        const added: Array<string> = []
        for (const n of req.resource_names_subscribe ?? []) {
          if (!subscribed.has(n)) added.push(n)
          subscribed.add(n)
          held.add(n)
        }
        for (const n of req.resource_names_unsubscribe ?? []) {
          subscribed.delete(n)
          sentVersions.delete(n)
          held.remove(n)
        }
        if (added.length > 0) push(added)
      })
      const stop = followIdentity((cert) => {
        current = cert
        push()
      })
      onClosed(call, () => {
        stop()
        held.releaseAll()
      })
    }

    const fetch = (call: grpc.ServerUnaryCall<Req, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      run(
        Effect.gen(function* () {
          const cert = yield* identity.current
          const served: Array<Served> = []
          for (const name of call.request.resource_names ?? []) {
            const one = isFileSecretName(name) ? yield* files.readOnce(name) : lookup(name, cert)
            if (one !== undefined) served.push(one)
          }
          callback(null, {
            version_info: served.map((s) => s.version).join(","),
            resources: served.map(asResource),
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
