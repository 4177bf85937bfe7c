/**
 * Application probe rewriting (MESH_ORCH_APP_PROBERS, the reference's ISTIO_KUBE_APP_PROBERS):
 * the injector moves the workload's orchestrator probes onto the agent status port as
 * `/app-health/<container>/readyz|livez|startupz`, and passes the original probe per path as
 * JSON. The agent then probes the application on the pod's loopback — so probes keep working
 * when mutual TLS would reject the kubelet. Pure: the parsed probers and the status rule.
 */
import { Duration, Either } from "effect"

/** Probes, and the postStart/preStop hooks' HTTP and TCP actions (`/app-lifecycle/<container>/poststartz|prestopz`). */
export const APP_PROBER_PATH =
  /^\/(app-health\/[^/]+\/(livez|readyz|startupz)|app-lifecycle\/[^/]+\/(prestopz|poststartz))$/

export interface HttpHeader {
  readonly name: string
  readonly value: string
}

export type AppProber =
  | {
      readonly _tag: "HttpGet"
      readonly path: string
      readonly port: number
      readonly host: string | undefined
      readonly scheme: "HTTP" | "HTTPS"
      readonly headers: ReadonlyArray<HttpHeader>
      readonly timeout: Duration.Duration
    }
  | {
      readonly _tag: "TcpSocket"
      readonly port: number
      readonly host: string | undefined
      readonly timeout: Duration.Duration
    }
  | {
      readonly _tag: "Grpc"
      readonly port: number
      /** The health service name asked for; empty asks about the server as a whole. */
      readonly service: string
      readonly timeout: Duration.Duration
    }

/** The orchestrator's default probe timeout (timeoutSeconds 1). */
export const DEFAULT_PROBE_TIMEOUT = Duration.seconds(1)

/** Answered when the application cannot be reached, times out or reports itself not serving. */
export const PROBE_FAILED_STATUS = 503

/** The orchestrator counts 2xx and 3xx as success; other answers keep the application's status. */
export const probeStatus = (appStatus: number): number => (appStatus >= 200 && appStatus < 400 ? 200 : appStatus)

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const portOf = (v: unknown, where: string): Either.Either<number, string> =>
  typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 65535
    ? Either.right(v)
    : Either.left(
        `${where}.port must be an integer port 1-65535 (named ports are resolved by the injector), got ${JSON.stringify(v)}`,
      )

const optionalString = (v: unknown, where: string): Either.Either<string | undefined, string> =>
  v === undefined || v === null || typeof v === "string"
    ? Either.right(v === null || v === "" ? undefined : (v as string | undefined))
    : Either.left(`${where} must be a string`)

const parseOne = (path: string, raw: unknown): Either.Either<AppProber, string> =>
  Either.gen(function* () {
    if (!APP_PROBER_PATH.test(path)) {
      return yield* Either.left(
        `"${path}": the path must be /app-health/<container>/livez, readyz or startupz, or /app-lifecycle/<container>/prestopz or poststartz`,
      )
    }
    if (!isObject(raw)) return yield* Either.left(`"${path}": expected an object`)
    const kinds = (["httpGet", "tcpSocket", "grpc"] as const).filter((k) => raw[k] !== undefined && raw[k] !== null)
    if (kinds.length !== 1) {
      return yield* Either.left(
        `"${path}": exactly one of httpGet, tcpSocket or grpc is required${kinds.length > 1 ? ` (got ${kinds.join(", ")})` : ""}`,
      )
    }
    const seconds = raw.timeoutSeconds
    if (seconds !== undefined && (typeof seconds !== "number" || !Number.isInteger(seconds) || seconds < 0)) {
      return yield* Either.left(`"${path}": timeoutSeconds must be a non-negative integer`)
    }
    const timeout = typeof seconds === "number" && seconds > 0 ? Duration.seconds(seconds) : DEFAULT_PROBE_TIMEOUT
    const kind = kinds[0] as "httpGet" | "tcpSocket" | "grpc"
    const action = raw[kind]
    const where = `"${path}": ${kind}`
    if (!isObject(action)) return yield* Either.left(`${where} must be an object`)
    const port = yield* portOf(action.port, where)
    if (kind === "grpc") {
      const service = yield* optionalString(action.service, `${where}.service`)
      return { _tag: "Grpc", port, service: service ?? "", timeout } as const
    }
    const host = yield* optionalString(action.host, `${where}.host`)
    if (kind === "tcpSocket") return { _tag: "TcpSocket", port, host, timeout } as const
    const probePath = (yield* optionalString(action.path, `${where}.path`)) ?? "/"
    const scheme = ((yield* optionalString(action.scheme, `${where}.scheme`)) ?? "HTTP").toUpperCase()
    if (scheme !== "HTTP" && scheme !== "HTTPS") {
      return yield* Either.left(`${where}.scheme must be HTTP or HTTPS, got "${scheme}"`)
    }
    const rawHeaders = action.httpHeaders ?? []
    if (!Array.isArray(rawHeaders)) return yield* Either.left(`${where}.httpHeaders must be a list`)
    const headers: Array<HttpHeader> = []
    for (const h of rawHeaders) {
      if (!isObject(h) || typeof h.name !== "string" || h.name === "" || typeof h.value !== "string") {
        return yield* Either.left(`${where}.httpHeaders: each entry needs a string name and value`)
      }
      headers.push({ name: h.name, value: h.value })
    }
    return {
      _tag: "HttpGet",
      path: probePath.startsWith("/") ? probePath : `/${probePath}`,
      port,
      host,
      scheme,
      headers,
      timeout,
    } as const
  })

/** Parses MESH_ORCH_APP_PROBERS; empty means no rewritten probes. Errors name the failing path. */
export const parseAppProbers = (text: string): Either.Either<ReadonlyMap<string, AppProber>, string> => {
  if (text.trim() === "") return Either.right(new Map())
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return Either.left(`invalid JSON: ${(e as Error).message}`)
  }
  if (!isObject(value)) return Either.left('expected a JSON object {"/app-health/<container>/readyz": {...}, ...}')
  const probers = new Map<string, AppProber>()
  for (const [path, raw] of Object.entries(value)) {
    const parsed = parseOne(path, raw)
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    probers.set(path, parsed.right)
  }
  return Either.right(probers)
}
