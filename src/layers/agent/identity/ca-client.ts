/**
 * The CA client: `mesh.v1.auth.MeshCertificateService/CreateCertificate` at `CA_ADDR` over TLS,
 * the server verified against the configured root (and the trust bundle the agent holds, so a
 * CA that switched to a new root key is still trusted) and `MESHD_SAN`, the call authenticated
 * with a bearer token or the workload's current certificate (mutual TLS). `WatchTrustBundle`
 * follows the CA's trust bundle on a long-lived stream, acknowledging each bundle applied.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect, Layer, Runtime } from "effect"
import {
  CaCallError,
  CaClient,
  type CaCredentials,
  type IdentityError,
} from "../../../services/agent/identity/identity.js"
import { caClientConstructor } from "../../ca/proto.js"

export interface CaClientSettings {
  /** host:port */
  readonly address: string
  /** PEM roots that must have issued the CA's serving certificate. */
  readonly rootCaPem: string
  /** Name expected in the serving certificate; defaults to the host of `address`. */
  readonly serverName?: string
  /** Per-call deadline. */
  readonly timeoutMs?: number
  /** Metadata "CertSigner" (MESH_META_CERT_SIGNER). */
  readonly certSigner?: string
}

export const hostOf = (address: string): string => {
  const bracket = address.match(/^\[([^\]]+)\](?::\d+)?$/)
  if (bracket) return bracket[1]!
  const colon = address.lastIndexOf(":")
  return colon > 0 && address.indexOf(":") === colon ? address.slice(0, colon) : address
}

type CreateCertificate = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: { cert_chain?: Array<string> }) => void,
) => void

type WatchTrustBundle = (metadata: grpc.Metadata) => grpc.ClientDuplexStream<{ version: string }, unknown>

export const makeCaClient = (settings: CaClientSettings) => {
  const Client = caClientConstructor()
  const serverName = settings.serverName || hostOf(settings.address)
  const options: grpc.ClientOptions = {
    "grpc.ssl_target_name_override": serverName,
    "grpc.default_authority": serverName,
  }
  /** The trust bundle the agent holds, trusted beside the configured roots (this client's own). */
  let heldRoots = ""
  const channel = (credentials: CaCredentials) => {
    const channelCredentials = grpc.credentials.createSsl(
      Buffer.from(`${settings.rootCaPem}\n${heldRoots}`),
      credentials.clientCert ? Buffer.from(credentials.clientCert.keyPem) : null,
      credentials.clientCert ? Buffer.from(credentials.clientCert.certPem) : null,
    )
    // A channel per call: the client certificate changes with every renewal, and a call
    // happens at most a few times per certificate lifetime.
    const client = new Client(settings.address, channelCredentials, options)
    const metadata = new grpc.Metadata()
    if (credentials.token !== undefined) metadata.set("authorization", `Bearer ${credentials.token}`)
    return { client, metadata }
  }
  const sign = (csrPem: string, validitySeconds: number, credentials: CaCredentials) =>
    Effect.async<ReadonlyArray<string>, CaCallError>((resume) => {
      const { client, metadata } = channel(credentials)
      const fields: Record<string, unknown> = {}
      if (settings.certSigner) fields.CertSigner = { stringValue: settings.certSigner, kind: "stringValue" }
      const call = (client as unknown as { CreateCertificate: CreateCertificate }).CreateCertificate.bind(client)
      call(
        { csr: csrPem, validity_duration: validitySeconds, metadata: { fields } },
        metadata,
        { deadline: Date.now() + (settings.timeoutMs ?? 10_000) },
        (error, response) => {
          client.close()
          if (error) {
            resume(
              Effect.fail(
                new CaCallError({ reason: `CreateCertificate: ${error.details || error.message}`, code: error.code }),
              ),
            )
          } else if (!response?.cert_chain || response.cert_chain.length === 0) {
            resume(Effect.fail(new CaCallError({ reason: "CreateCertificate: the CA returned an empty chain" })))
          } else {
            resume(Effect.succeed(response.cert_chain))
          }
        },
      )
      return Effect.sync(() => client.close())
    })
  const watchTrustBundle = (
    credentials: Effect.Effect<CaCredentials, IdentityError>,
    onBundle: (rootsPem: string) => Effect.Effect<void>,
  ) =>
    Effect.flatMap(credentials, (creds) =>
      Effect.flatMap(Effect.runtime<never>(), (runtime) =>
        Effect.async<void, CaCallError>((resume) => {
          const { client, metadata } = channel(creds)
          const open = (client as unknown as { WatchTrustBundle: WatchTrustBundle }).WatchTrustBundle.bind(client)
          const call = open(metadata)
          // Bundles are applied one at a time, in order, each acknowledged after it is applied.
          let applying: Promise<unknown> = Promise.resolve()
          call.on("data", (message: { version?: string; root_certs?: ReadonlyArray<string> }) => {
            const version = message.version ?? ""
            const roots = (message.root_certs ?? []).map((p) => (p.endsWith("\n") ? p : `${p}\n`)).join("")
            if (roots === "") return
            applying = applying.then(() =>
              Runtime.runPromise(runtime)(onBundle(roots)).then(() => {
                if (!call.destroyed) call.write({ version })
              }),
            )
          })
          call.on("error", (error: grpc.ServiceError) => {
            client.close()
            resume(
              Effect.fail(
                new CaCallError({ reason: `WatchTrustBundle: ${error.details || error.message}`, code: error.code }),
              ),
            )
          })
          call.on("end", () => {
            client.close()
            resume(Effect.fail(new CaCallError({ reason: "WatchTrustBundle: the CA ended the stream" })))
          })
          return Effect.sync(() => {
            call.cancel()
            client.close()
          })
        }),
      ),
    )
  const trustRoots = (rootsPem: string) =>
    Effect.sync(() => {
      heldRoots = rootsPem
    })
  return CaClient.of({ sign, watchTrustBundle, trustRoots })
}

export const layer = (settings: CaClientSettings): Layer.Layer<CaClient> =>
  Layer.sync(CaClient, () => makeCaClient(settings))
