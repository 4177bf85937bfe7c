/**
 * meshctl's xDS client for the control plane's debug pages (see control-plane-access.ts for
 * when it is used): one ADS stream per question, whose single request has the type URL
 * `mesh.io/debug/<path>`; the answer is the page's body in the response's one `Any`, and a
 * refusal is the stream's status. Loaded lazily: it brings in grpc-js and the xDS protos.
 */
import { randomUUID } from "node:crypto"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect } from "effect"
import { loadXdsProtos } from "../../layers/xds/protos.js"
import { debugTypeUrl } from "../../services/xds/protocol/debug-type.js"

/** How one control-plane xDS port is dialled. */
export interface XdsDial {
  /** host:port */
  readonly address: string
  /** Plain HTTP/2 (the 15010 listener), no TLS. */
  readonly plaintext: boolean
  /** PEM roots the server certificate must chain to; undefined: the system's roots. */
  readonly rootPem?: string
  /** The client certificate (mTLS), when the cert dir holds one. */
  readonly clientCert?: { readonly certPem: string; readonly keyPem: string }
  /** The name the server certificate must carry (and the :authority sent). */
  readonly serverName: string
  /** Skip server certificate and name verification. */
  readonly insecure: boolean
  /** A bearer token for the `authorization` header (TLS only). */
  readonly token?: string
  /** The node the stream names: an id in the mesh namespace. */
  readonly namespace: string
  readonly timeout: Duration.Duration
}

const credentialsOf = (dial: XdsDial): grpc.ChannelCredentials => {
  if (dial.plaintext) return grpc.credentials.createInsecure()
  const channel = grpc.credentials.createSsl(
    dial.rootPem !== undefined ? Buffer.from(dial.rootPem) : null,
    dial.clientCert !== undefined ? Buffer.from(dial.clientCert.keyPem) : null,
    dial.clientCert !== undefined ? Buffer.from(dial.clientCert.certPem) : null,
    dial.insecure ? { rejectUnauthorized: false, checkServerIdentity: () => undefined } : {},
  )
  if (dial.token === undefined) return channel
  const token = dial.token
  return grpc.credentials.combineChannelCredentials(
    channel,
    grpc.credentials.createFromMetadataGenerator((_, callback) => {
      const metadata = new grpc.Metadata()
      metadata.set("authorization", `Bearer ${token}`)
      callback(null, metadata)
    }),
  )
}

const statusName = (code: number): string =>
  Object.entries(grpc.status).find(([, value]) => value === code)?.[0] ?? String(code)

interface DebugResponse {
  readonly resources?: ReadonlyArray<{ readonly type_url?: string; readonly value?: Uint8Array }>
}

/**
 * The body of debug page `path` (`syncz`, `config_dump?proxyID=...`) from the control plane at
 * `dial`; fails with what was tried and why.
 */
export const askDebugOverXds = (dial: XdsDial, path: string): Effect.Effect<string, string> =>
  Effect.async<string, string>((resume) => {
    const where = `${dial.address} (xDS, ${dial.plaintext ? "plaintext" : "TLS"})`
    const failed = (why: string) => `${debugTypeUrl(path)} at ${where}: ${why}`
    let client: grpc.Client
    try {
      const Ctor = grpc.makeClientConstructor(loadXdsProtos().ads, "AggregatedDiscoveryService")
      client = new Ctor(dial.address, credentialsOf(dial), {
        // A debug page of a large mesh (syncz of thousands of proxies, a config dump) exceeds 4 MiB.
        "grpc.max_receive_message_length": -1,
        ...(dial.plaintext
          ? {}
          : { "grpc.ssl_target_name_override": dial.serverName, "grpc.default_authority": dial.serverName }),
      })
    } catch (error) {
      resume(Effect.fail(failed(error instanceof Error ? error.message : String(error))))
      return
    }
    const stream = (
      client as unknown as Record<string, () => grpc.ClientDuplexStream<object, DebugResponse>>
    ).StreamAggregatedResources!.call(client)
    let done = false
    const finish = (outcome: Effect.Effect<string, string>) => {
      if (done) return
      done = true
      clearTimeout(timer)
      stream.removeAllListeners()
      stream.on("error", () => {})
      stream.cancel()
      client.close()
      resume(outcome)
    }
    const timer = setTimeout(
      () => finish(Effect.fail(failed(`no answer within ${Duration.format(dial.timeout)}`))),
      Duration.toMillis(dial.timeout),
    )
    stream.on("data", (response: DebugResponse) => {
      const value = response.resources?.[0]?.value
      finish(
        value === undefined
          ? Effect.fail(failed("the answer holds no resource"))
          : Effect.succeed(Buffer.from(value).toString("utf8")),
      )
    })
    stream.on("error", (error: grpc.ServiceError) =>
      finish(Effect.fail(failed(`${statusName(error.code)}: ${error.details || error.message}`))),
    )
    stream.on("end", () => finish(Effect.fail(failed("the stream ended without an answer"))))
    stream.write({
      // A node id of the mesh namespace, as the server checks every stream's first node.
      node: {
        id: `sidecar~0.0.0.0~meshctl-${randomUUID().slice(0, 8)}.${dial.namespace}~${dial.namespace}.svc.cluster.local`,
      },
      type_url: debugTypeUrl(path),
    })
    return Effect.sync(() => finish(Effect.fail(failed("interrupted"))))
  })
