/**
 * Runs one rewritten application probe against the application on the pod's loopback and
 * turns the outcome into the status the orchestrator sees (see services/agent/status/app-probers).
 * Targets 127.0.0.1 unless the probe names a host (the reference probes "localhost").
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { request as httpsRequest } from "node:https"
import { connect } from "node:net"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect } from "effect"
import { type AppProber, PROBE_FAILED_STATUS, probeStatus } from "../../../services/agent/status/app-probers.js"
import { healthClientConstructor } from "./grpc-health.js"

const LOOPBACK = "127.0.0.1"

/** Result of a probe: the status to answer and, on failure, why (logged by the caller). */
export interface ProbeOutcome {
  readonly status: number
  readonly error?: string
}

// Hop-by-hop and framing headers belong to the kubelet's connection, not to the probe request.
const NOT_FORWARDED = new Set(["host", "connection", "keep-alive", "content-length", "transfer-encoding", "upgrade"])

const httpProbe = (prober: Extract<AppProber, { _tag: "HttpGet" }>, incoming: Readonly<Record<string, string>>) =>
  Effect.async<ProbeOutcome>((resume) => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(incoming)) {
      if (!NOT_FORWARDED.has(name.toLowerCase())) headers[name.toLowerCase()] = value
    }
    // The probe's own headers replace forwarded ones of the same name; Host sets the authority.
    for (const h of prober.headers)
      headers[h.name.toLowerCase() === ":authority" ? "host" : h.name.toLowerCase()] = h.value
    const request = (prober.scheme === "HTTPS" ? httpsRequest : httpRequest)({
      host: prober.host ?? LOOPBACK,
      port: prober.port,
      path: prober.path,
      method: "GET",
      headers: headers as IncomingHttpHeaders,
      // The orchestrator does not verify the application's certificate either.
      rejectUnauthorized: false,
    })
    request.once("response", (response) => {
      response.resume()
      resume(Effect.succeed({ status: probeStatus(response.statusCode ?? PROBE_FAILED_STATUS) }))
    })
    request.once("error", (e) => resume(Effect.succeed({ status: PROBE_FAILED_STATUS, error: e.message })))
    request.end()
    return Effect.sync(() => request.destroy())
  })

const tcpProbe = (prober: Extract<AppProber, { _tag: "TcpSocket" }>) =>
  Effect.async<ProbeOutcome>((resume) => {
    const socket = connect({ host: prober.host ?? LOOPBACK, port: prober.port })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed({ status: 200 }))
    })
    socket.once("error", (e) => resume(Effect.succeed({ status: PROBE_FAILED_STATUS, error: e.message })))
    return Effect.sync(() => socket.destroy())
  })

const grpcProbe = (prober: Extract<AppProber, { _tag: "Grpc" }>) =>
  Effect.async<ProbeOutcome>((resume) => {
    const Client = healthClientConstructor()
    const client = new Client(`${LOOPBACK}:${prober.port}`, grpc.credentials.createInsecure())
    const deadline = Date.now() + Duration.toMillis(prober.timeout)
    client.Check(
      { service: prober.service },
      { deadline },
      (error: grpc.ServiceError | null, response: { status?: string } | undefined) => {
        client.close()
        if (error !== null) {
          resume(Effect.succeed({ status: PROBE_FAILED_STATUS, error: `${grpc.status[error.code]}: ${error.details}` }))
        } else if (response?.status !== "SERVING") {
          resume(
            Effect.succeed({ status: PROBE_FAILED_STATUS, error: `health status ${response?.status ?? "missing"}` }),
          )
        } else {
          resume(Effect.succeed({ status: 200 }))
        }
      },
    )
    return Effect.sync(() => client.close())
  })

const attempt = (prober: AppProber, incomingHeaders: Readonly<Record<string, string>>): Effect.Effect<ProbeOutcome> => {
  switch (prober._tag) {
    case "HttpGet":
      return httpProbe(prober, incomingHeaders)
    case "TcpSocket":
      return tcpProbe(prober)
    case "Grpc":
      return grpcProbe(prober)
  }
}

/** One probe, bounded by its timeoutSeconds as a whole (connect and answer); interruption closes the socket. */
export const runAppProbe = (prober: AppProber, incomingHeaders: Readonly<Record<string, string>>) =>
  attempt(prober, incomingHeaders).pipe(
    Effect.timeoutTo({
      duration: prober.timeout,
      onSuccess: (outcome) => outcome,
      onTimeout: (): ProbeOutcome => ({
        status: PROBE_FAILED_STATUS,
        error: `no answer within ${Duration.format(prober.timeout)}`,
      }),
    }),
  )
