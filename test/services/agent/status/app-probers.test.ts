/** MESH_ORCH_APP_PROBERS parsing, the status rule, and the localhost rule of /quitquitquit and /drain. */
import { Duration, Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  DEFAULT_PROBE_TIMEOUT,
  parseAppProbers,
  probeStatus,
} from "../../../../src/services/agent/status/app-probers.js"
import { checkLocalPost, isLoopbackAddress } from "../../../../src/services/net/local-request.js"

const error = (text: string) => {
  const result = parseAppProbers(text)
  if (Either.isRight(result)) throw new Error(`expected an error for ${text}`)
  return result.left
}

describe("parseAppProbers", () => {
  it("empty means no rewritten probes", () => {
    expect(Either.getOrThrow(parseAppProbers("")).size).toBe(0)
  })

  it("reads httpGet, tcpSocket and grpc probers with their timeouts", () => {
    const probers = Either.getOrThrow(
      parseAppProbers(
        JSON.stringify({
          "/app-health/web/readyz": {
            httpGet: { path: "ready", port: 8080, scheme: "HTTPS", httpHeaders: [{ name: "X-Probe", value: "1" }] },
            timeoutSeconds: 3,
          },
          "/app-health/web/livez": { tcpSocket: { port: 8081 } },
          "/app-health/rpc/startupz": { grpc: { port: 9000, service: "echo" }, timeoutSeconds: 0 },
          "/app-health/rpc/livez": { grpc: { port: 9000 } },
        }),
      ),
    )
    expect(probers.get("/app-health/web/readyz")).toEqual({
      _tag: "HttpGet",
      path: "/ready",
      port: 8080,
      host: undefined,
      scheme: "HTTPS",
      headers: [{ name: "X-Probe", value: "1" }],
      timeout: Duration.seconds(3),
    })
    expect(probers.get("/app-health/web/livez")).toEqual({
      _tag: "TcpSocket",
      port: 8081,
      host: undefined,
      timeout: DEFAULT_PROBE_TIMEOUT,
    })
    expect(probers.get("/app-health/rpc/startupz")).toEqual({
      _tag: "Grpc",
      port: 9000,
      service: "echo",
      timeout: DEFAULT_PROBE_TIMEOUT,
    })
    expect(probers.get("/app-health/rpc/livez")).toMatchObject({ service: "" })
  })

  it("defaults httpGet to path / and scheme HTTP", () => {
    const probers = Either.getOrThrow(parseAppProbers('{"/app-health/a/livez":{"httpGet":{"port":80}}}'))
    expect(probers.get("/app-health/a/livez")).toMatchObject({ path: "/", scheme: "HTTP", headers: [] })
  })

  it("refuses bad JSON and a non-object", () => {
    expect(error("{")).toMatch(/invalid JSON/)
    expect(error("[]")).toMatch(/JSON object/)
  })

  it("reads the lifecycle hooks' paths, /app-lifecycle/<container>/prestopz|poststartz", () => {
    const probers = Either.getOrThrow(
      parseAppProbers(
        JSON.stringify({
          "/app-lifecycle/web/prestopz": { httpGet: { path: "/drain", port: 8080 } },
          "/app-lifecycle/web/poststartz": { tcpSocket: { port: 8080 } },
        }),
      ),
    )
    expect([...probers.keys()].sort()).toEqual(["/app-lifecycle/web/poststartz", "/app-lifecycle/web/prestopz"])
  })

  it("refuses paths outside /app-health/<container>/livez|readyz|startupz and /app-lifecycle/<container>/prestopz|poststartz", () => {
    for (const path of [
      "/healthz",
      "/app-health/a/ready",
      "/app-health/a/b/readyz",
      "/app-health//livez",
      "/app-lifecycle/a/readyz",
      "/app-health/a/prestopz",
    ]) {
      expect(error(JSON.stringify({ [path]: { tcpSocket: { port: 1 } } }))).toContain(path)
    }
  })

  it("refuses zero or several probe kinds", () => {
    expect(error('{"/app-health/a/livez":{}}')).toMatch(/exactly one/)
    expect(error('{"/app-health/a/livez":{"tcpSocket":{"port":1},"grpc":{"port":2}}}')).toMatch(/tcpSocket, grpc/)
    expect(error('{"/app-health/a/livez":"x"}')).toMatch(/expected an object/)
    expect(error('{"/app-health/a/livez":{"grpc":3}}')).toMatch(/grpc must be an object/)
  })

  it("refuses named, non-integer and out-of-range ports", () => {
    expect(error('{"/app-health/a/livez":{"httpGet":{"port":"http"}}}')).toMatch(/port must be an integer/)
    expect(error('{"/app-health/a/livez":{"tcpSocket":{"port":1.5}}}')).toMatch(/port/)
    expect(error('{"/app-health/a/livez":{"grpc":{"port":70000}}}')).toMatch(/port/)
    expect(error('{"/app-health/a/livez":{"grpc":{}}}')).toMatch(/port/)
  })

  it("refuses bad scheme, headers, timeout and field types", () => {
    expect(error('{"/app-health/a/livez":{"httpGet":{"port":1,"scheme":"ftp"}}}')).toMatch(/scheme/)
    expect(error('{"/app-health/a/livez":{"httpGet":{"port":1,"httpHeaders":{}}}}')).toMatch(/httpHeaders/)
    expect(error('{"/app-health/a/livez":{"httpGet":{"port":1,"httpHeaders":[{"name":"x"}]}}}')).toMatch(/httpHeaders/)
    expect(error('{"/app-health/a/livez":{"httpGet":{"port":1,"path":3}}}')).toMatch(/path must be a string/)
    expect(error('{"/app-health/a/livez":{"tcpSocket":{"port":1},"timeoutSeconds":-1}}')).toMatch(/timeoutSeconds/)
    expect(error('{"/app-health/a/livez":{"grpc":{"port":1,"service":5}}}')).toMatch(/service/)
  })
})

describe("probeStatus", () => {
  it("2xx and 3xx are success; other answers keep the application's status", () => {
    expect(probeStatus(200)).toBe(200)
    expect(probeStatus(204)).toBe(200)
    expect(probeStatus(302)).toBe(200)
    expect(probeStatus(399)).toBe(200)
    expect(probeStatus(404)).toBe(404)
    expect(probeStatus(500)).toBe(500)
    expect(probeStatus(199)).toBe(199)
  })
})

describe("localhost rule", () => {
  it("accepts loopback peers only", () => {
    for (const a of ["127.0.0.1", "127.3.4.5", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"]) {
      expect(isLoopbackAddress(a), a).toBe(true)
    }
    for (const a of [
      undefined,
      "",
      "192.0.2.2",
      "10.127.0.1",
      "::ffff:10.0.0.1",
      "fd00::2",
      "128.0.0.1",
      "127.0.0.256",
    ]) {
      expect(isLoopbackAddress(a), String(a)).toBe(false)
    }
  })

  it("403 for a remote peer before 405 for a wrong method", () => {
    expect(checkLocalPost("192.0.2.2", "GET")).toMatchObject({ ok: false, status: 403 })
    expect(checkLocalPost("192.0.2.2", "POST")).toMatchObject({ ok: false, status: 403 })
    expect(checkLocalPost("127.0.0.1", "GET")).toMatchObject({ ok: false, status: 405 })
    expect(checkLocalPost("::1", "post")).toEqual({ ok: true })
  })
})
