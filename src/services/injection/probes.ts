/**
 * Application probe rewriting: with mutual TLS the kubelet's plain probes would be rejected, so
 * each httpGet, tcpSocket or grpc liveness/readiness/startup probe of an application container
 * is pointed at the agent's status port, path `/app-health/<container>/livez|readyz|startupz`
 * (an httpGet there, whatever the original kind), and the original probe is handed to the agent
 * in `MESH_ORCH_APP_PROBERS` — JSON keyed by that path, in the form
 * services/agent/status/app-probers.ts parses. Named ports are resolved from the container's
 * ports (the agent needs numbers); a probe whose port name is unknown is left as it was. The
 * postStart/preStop hooks' httpGet and tcpSocket actions go the same way, under
 * `/app-lifecycle/<container>/poststartz|prestopz` (an exec hook runs in the container itself).
 * A probe already on the agent's status port (a re-injected pod) is neither rewritten nor taken
 * over: the agent would probe itself.
 */
import { asObjects, isObject, type Obj, stringAt } from "../orchestrator/json.js"

const PROBES = [
  ["readinessProbe", "readyz"],
  ["livenessProbe", "livez"],
  ["startupProbe", "startupz"],
] as const

const HOOKS = [
  ["preStop", "prestopz"],
  ["postStart", "poststartz"],
] as const

export const appProberPath = (container: string, kind: "readyz" | "livez" | "startupz"): string =>
  `/app-health/${container}/${kind}`

export const appLifecyclePath = (container: string, kind: "prestopz" | "poststartz"): string =>
  `/app-lifecycle/${container}/${kind}`

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

type Taken = { readonly prober?: Obj; readonly problem?: string; readonly onAgent?: true }

/** The original action for the agent, or why it cannot be taken over; hooks have no grpc or timeout. */
const proberOf = (probe: Obj, container: Obj, statusPort: number, hook: boolean): Taken | undefined => {
  const timeout = !hook && typeof probe.timeoutSeconds === "number" ? { timeoutSeconds: probe.timeoutSeconds } : {}
  for (const kind of hook ? (["httpGet", "tcpSocket"] as const) : (["httpGet", "tcpSocket", "grpc"] as const)) {
    const action = probe[kind]
    if (!isObject(action)) continue
    const port = resolvePort(action.port, container)
    if (port === undefined) return { problem: `port ${JSON.stringify(action.port)} is not a port of the container` }
    if (port === statusPort && typeof action.port === "number") return { onAgent: true }
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
  const rewrite = (container: Obj, field: string, action: unknown, path: string, hook: boolean): Obj | undefined => {
    if (!isObject(action)) return undefined
    const taken = proberOf(action, container, statusPort, hook)
    if (taken === undefined || taken.onAgent === true) return undefined
    if (taken.prober === undefined) {
      warnings.push(`container ${stringAt(container.name) ?? ""} ${field} not rewritten: ${taken.problem}`)
      return undefined
    }
    probers[path] = taken.prober
    return agentProbe(action, path, statusPort)
  }
  const rewritten = containers.map((container) => {
    const name = stringAt(container.name) ?? ""
    const out: Obj = { ...container }
    for (const [field, kind] of PROBES) {
      const probe = rewrite(container, field, container[field], appProberPath(name, kind), false)
      if (probe !== undefined) out[field] = probe
    }
    if (isObject(container.lifecycle)) {
      const lifecycle: Obj = { ...container.lifecycle }
      for (const [hook, kind] of HOOKS) {
        const handler = rewrite(container, `lifecycle.${hook}`, lifecycle[hook], appLifecyclePath(name, kind), true)
        if (handler !== undefined) lifecycle[hook] = handler
      }
      out.lifecycle = lifecycle
    }
    return out
  })
  return { containers: rewritten, probers, warnings }
}
