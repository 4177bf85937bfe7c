/**
 * Application probe rewriting: with mutual TLS the kubelet's plain probes would be rejected, so
 * each httpGet, tcpSocket or grpc liveness/readiness/startup probe of an application container
 * is pointed at the agent's status port, path `/app-health/<container>/livez|readyz|startupz`
 * (an httpGet there, whatever the original kind), and the original probe is handed to the agent
 * in `MESH_ORCH_APP_PROBERS` — JSON keyed by that path, in the form
 * services/agent/status/app-probers.ts parses. Named ports are resolved from the container's
 * ports (the agent needs numbers); a probe whose port name is unknown is left as it was.
 */
import { asObject, asObjects, isObject, type Obj, stringAt } from "./json.js"

const PROBES = [
  ["readinessProbe", "readyz"],
  ["livenessProbe", "livez"],
  ["startupProbe", "startupz"],
] as const

export const appProberPath = (container: string, kind: "readyz" | "livez" | "startupz"): string =>
  `/app-health/${container}/${kind}`

export interface RewrittenProbes {
  /** The application containers with their probes pointed at the agent. */
  readonly containers: ReadonlyArray<Obj>
  /** MESH_ORCH_APP_PROBERS entries: path → original probe action (named ports resolved) and timeout. */
  readonly probers: Readonly<Record<string, Obj>>
  readonly warnings: ReadonlyArray<string>
}

/** A port number, or the number of a named port of the container; undefined when unresolvable. */
const resolvePort = (port: unknown, container: Obj): number | undefined => {
  const number =
    typeof port === "number"
      ? port
      : typeof port !== "string"
        ? undefined
        : /^\d+$/.test(port)
          ? Number(port)
          : asObjects(container.ports).find((p) => p.name === port)?.containerPort
  return typeof number === "number" && Number.isInteger(number) && number >= 1 && number <= 65535 ? number : undefined
}

/** The original action for the agent, or why it cannot be taken over. */
const proberOf = (probe: Obj, container: Obj): { prober?: Obj; problem?: string } | undefined => {
  const timeout = typeof probe.timeoutSeconds === "number" ? { timeoutSeconds: probe.timeoutSeconds } : {}
  for (const kind of ["httpGet", "tcpSocket", "grpc"] as const) {
    const action = probe[kind]
    if (!isObject(action)) continue
    const port = resolvePort(action.port, container)
    if (port === undefined) return { problem: `port ${JSON.stringify(action.port)} is not a port of the container` }
    return { prober: { [kind]: { ...action, port }, ...timeout } }
  }
  return undefined
}

/** The probe the kubelet runs after rewriting: an HTTP GET on the agent, the probe's timing kept. */
const agentProbe = (probe: Obj, path: string, statusPort: number): Obj => {
  const out: Obj = {}
  // The action is replaced where it stood, so the probe reads as the user wrote it.
  for (const [key, value] of Object.entries(probe)) {
    if (key === "httpGet" && isObject(value)) {
      // The agent speaks HTTPS to the application itself; the kubelet reaches the agent in HTTP.
      const scheme = value.scheme === "HTTPS" ? { scheme: "HTTP" } : {}
      out.httpGet = { ...value, path, port: statusPort, ...scheme }
    } else if (key === "tcpSocket" || key === "grpc") {
      out.httpGet = { path, port: statusPort }
    } else out[key] = value
  }
  return out
}

export const rewriteAppProbes = (containers: ReadonlyArray<Obj>, statusPort: number): RewrittenProbes => {
  const probers: Record<string, Obj> = {}
  const warnings: Array<string> = []
  const rewritten = containers.map((container) => {
    const name = stringAt(container.name) ?? ""
    const out: Obj = { ...container }
    for (const [field, kind] of PROBES) {
      const probe = container[field]
      if (!isObject(probe)) continue
      const taken = proberOf(asObject(probe), container)
      if (taken === undefined) continue
      if (taken.prober === undefined) {
        warnings.push(`container ${name} ${field} not rewritten: ${taken.problem}`)
        continue
      }
      const path = appProberPath(name, kind)
      probers[path] = taken.prober
      out[field] = agentProbe(probe, path, statusPort)
    }
    return out
  })
  return { containers: rewritten, probers, warnings }
}
