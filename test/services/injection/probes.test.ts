/**
 * Probe rewriting: the probes point at the agent and MESH_ORCH_APP_PROBERS, parsed by the agent's
 * own parser (services/agent/status/app-probers.ts), gives back the original probes.
 */
import { Duration, Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseAppProbers } from "../../../src/services/agent/status/app-probers.js"
import { defaultInjectionConfig } from "../../../src/services/injection/config.js"
import type { Json } from "../../../src/services/injection/contract.js"
import { injectPod } from "../../../src/services/injection/inject.js"
import { rewriteAppProbes } from "../../../src/services/injection/probes.js"
import { defaultInjectionValues } from "../../../src/services/injection/values.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/index.js"

const web = {
  name: "web",
  image: "web",
  ports: [
    { name: "http", containerPort: 8080 },
    { name: "grpc", containerPort: 9090 },
  ],
  readinessProbe: {
    httpGet: { path: "healthz", port: "http", scheme: "HTTPS", httpHeaders: [{ name: "X-A", value: "1" }] },
    timeoutSeconds: 4,
    periodSeconds: 7,
  },
  livenessProbe: { tcpSocket: { port: "http", host: "127.0.0.1" }, failureThreshold: 5 },
  startupProbe: { grpc: { port: 9090, service: "startup" } },
}

describe("rewriteAppProbes", () => {
  const { containers, probers, warnings } = rewriteAppProbes([web], 15020)
  const rewritten = containers[0] as Record<string, Record<string, unknown>>

  it("points every probe at the agent status port, keeping its timing", () => {
    expect(rewritten.readinessProbe).toEqual({
      httpGet: {
        path: "/app-health/web/readyz",
        port: 15020,
        scheme: "HTTP",
        httpHeaders: [{ name: "X-A", value: "1" }],
      },
      timeoutSeconds: 4,
      periodSeconds: 7,
    })
    expect(rewritten.livenessProbe).toEqual({
      httpGet: { path: "/app-health/web/livez", port: 15020 },
      failureThreshold: 5,
    })
    expect(rewritten.startupProbe).toEqual({ httpGet: { path: "/app-health/web/startupz", port: 15020 } })
    expect(warnings).toEqual([])
  })

  it("writes MESH_ORCH_APP_PROBERS that the agent parses back into the original probes", () => {
    const parsed = Either.getOrThrow(parseAppProbers(JSON.stringify(probers)))
    expect(parsed.get("/app-health/web/readyz")).toEqual({
      _tag: "HttpGet",
      path: "/healthz",
      port: 8080,
      host: undefined,
      scheme: "HTTPS",
      headers: [{ name: "X-A", value: "1" }],
      timeout: Duration.seconds(4),
    })
    expect(parsed.get("/app-health/web/livez")).toEqual({
      _tag: "TcpSocket",
      port: 8080,
      host: "127.0.0.1",
      timeout: Duration.seconds(1),
    })
    expect(parsed.get("/app-health/web/startupz")).toEqual({
      _tag: "Grpc",
      port: 9090,
      service: "startup",
      timeout: Duration.seconds(1),
    })
  })

  it("leaves exec probes and unresolvable ports alone", () => {
    const result = rewriteAppProbes(
      [
        { name: "a", livenessProbe: { exec: { command: ["true"] } } },
        { name: "b", readinessProbe: { httpGet: { port: "nope" } }, livenessProbe: { tcpSocket: { port: 0 } } },
      ],
      15020,
    )
    expect(result.containers[0]).toEqual({ name: "a", livenessProbe: { exec: { command: ["true"] } } })
    expect(result.containers[1]).toEqual({
      name: "b",
      readinessProbe: { httpGet: { port: "nope" } },
      livenessProbe: { tcpSocket: { port: 0 } },
    })
    expect(result.probers).toEqual({})
    expect(result.warnings).toHaveLength(2)
  })
})

describe("probe rewriting in injectPod", () => {
  const inject = (annotations: Record<string, string>, values: Json = defaultInjectionValues) =>
    injectPod({
      pod: { metadata: { name: "p", annotations }, spec: { containers: [web, { name: "side", image: "s" }] } },
      namespace: { name: "apps", labels: { "mesh-injection": "enabled" } },
      config: defaultInjectionConfig,
      values,
      meshConfig: JSON.parse(JSON.stringify(defaultMeshConfig())),
      revision: "",
    })
  const podOf = (outcome: ReturnType<typeof injectPod>) => {
    if (outcome._tag !== "Injected") throw new Error(JSON.stringify(outcome))
    return outcome.pod as { spec: { containers: Array<Record<string, unknown>> } }
  }
  const proxyEnv = (outcome: ReturnType<typeof injectPod>, name: string) => {
    const proxy = podOf(outcome).spec.containers.find((c) => c.name === "mesh-proxy") as {
      env: Array<{ name: string; value?: string }>
    }
    return proxy.env.find((e) => e.name === name)?.value
  }

  it("the env the injector writes parses in the agent, one entry per rewritten probe", () => {
    const env = proxyEnv(inject({}), "MESH_ORCH_APP_PROBERS")
    const parsed = Either.getOrThrow(parseAppProbers(env ?? ""))
    expect([...parsed.keys()].sort()).toEqual([
      "/app-health/web/livez",
      "/app-health/web/readyz",
      "/app-health/web/startupz",
    ])
    const app = podOf(inject({})).spec.containers[0] as { readinessProbe: { httpGet: { port: number } } }
    expect(app.readinessProbe.httpGet.port).toBe(15020)
  })

  it("the annotation (either spelling) and the values switch it off", () => {
    for (const annotations of [
      { "sidecar.mesh.io/rewriteAppHTTPProbers": "false" },
      { "sidecar.istio.io/rewriteAppHTTPProbers": "false" },
    ]) {
      expect(proxyEnv(inject(annotations), "MESH_ORCH_APP_PROBERS")).toBeUndefined()
      expect(podOf(inject(annotations)).spec.containers[0]?.readinessProbe).toEqual(web.readinessProbe)
    }
    const off = { ...defaultInjectionValues, sidecarInjectorWebhook: { rewriteAppHTTPProbe: false } }
    expect(proxyEnv(inject({}, off), "MESH_ORCH_APP_PROBERS")).toBeUndefined()
    // The annotation wins over the values.
    expect(
      proxyEnv(inject({ "sidecar.mesh.io/rewriteAppHTTPProbers": "true" }, off), "MESH_ORCH_APP_PROBERS"),
    ).toBeDefined()
  })
})
