/**
 * Debug requests on the ADS stream: which type URLs they are, the page they name, who may read
 * it, and the status a failed page ends the stream with.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  debugAccess,
  debugTypeProblem,
  debugTypeUrl,
  isDebugType,
  isLoopbackPeer,
  MAX_DEBUG_TYPE_URL_LENGTH,
  pageStatusCode,
  parseDebugRequest,
} from "../../../../src/services/xds/protocol/debug-type.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

const page = (typeUrl: string, names: ReadonlyArray<string> = []) =>
  Either.map(parseDebugRequest(typeUrl, names), (r) => ({ path: r.path, query: Object.fromEntries(r.query) }))

describe("debug type URLs", () => {
  it("are the mesh.io and istio.io debug prefixes, never an xDS resource type", () => {
    expect(isDebugType("mesh.io/debug/syncz")).toBe(true)
    expect(isDebugType("istio.io/debug")).toBe(true)
    expect(isDebugType(TypeUrl.Cluster)).toBe(false)
    expect(isDebugType(undefined)).toBe(false)
    expect(debugTypeUrl("/config_dump")).toBe("mesh.io/debug/config_dump")
  })

  it("name their page in the type URL, its query there or in the first resource name", () => {
    expect(page("mesh.io/debug/syncz")).toEqual(Either.right({ path: "syncz", query: {} }))
    expect(page("mesh.io/debug/config_dump?proxyID=a")).toEqual(
      Either.right({ path: "config_dump", query: { proxyID: "a" } }),
    )
    expect(page("mesh.io/debug/config_dump", ["proxyID=b~1"])).toEqual(
      Either.right({ path: "config_dump", query: { proxyID: "b~1" } }),
    )
    expect(page("istio.io/debug/config_dump", ["?proxyID=c"])).toEqual(
      Either.right({ path: "config_dump", query: { proxyID: "c" } }),
    )
  })

  it("with the bare prefix, take the path from the first resource name", () => {
    expect(page("istio.io/debug", ["config_dump?proxyID=x"])).toEqual(
      Either.right({ path: "config_dump", query: { proxyID: "x" } }),
    )
    expect(page("mesh.io/debug", ["/debug/adsz"])).toEqual(Either.right({ path: "adsz", query: {} }))
  })

  it("refuse a request naming no page or a path that is no page name", () => {
    expect(Either.getLeft(parseDebugRequest("mesh.io/debug", []))._tag).toBe("Some")
    expect(Either.getLeft(parseDebugRequest("mesh.io/debug/../secrets", []))).toEqual(
      expect.objectContaining({ value: "invalid debug path ../secrets" }),
    )
    expect(Either.isLeft(parseDebugRequest("mesh.io/debugger", []))).toBe(true)
  })
})

describe("debug access", () => {
  const system = "mesh-system"
  it("lets a system-namespace identity read over TLS", () => {
    expect(
      Either.isRight(
        debugAccess(
          {
            identities: ["spiffe://cluster.local/ns/default/sa/x", "spiffe://cluster.local/ns/mesh-system/sa/meshctl"],
            secure: true,
            loopback: false,
          },
          system,
        ),
      ),
    ).toBe(true)
  })

  it("refuses other namespaces, naming the caller, and unauthenticated TLS callers", () => {
    const denied = debugAccess(
      { identities: ["spiffe://cluster.local/ns/shop/sa/web"], secure: true, loopback: true },
      system,
    )
    expect(Either.getLeft(denied)).toEqual(
      expect.objectContaining({
        value: {
          code: "PERMISSION_DENIED",
          message:
            "debug information is only given to identities of namespace mesh-system; the caller is spiffe://cluster.local/ns/shop/sa/web (namespace shop)",
        },
      }),
    )
    expect(Either.getLeft(debugAccess({ identities: [], secure: true, loopback: true }, system))).toEqual(
      expect.objectContaining({ value: expect.objectContaining({ code: "UNAUTHENTICATED" }) }),
    )
  })

  it("answers the plaintext listener's loopback callers, unless it authenticated someone of another namespace", () => {
    expect(Either.isRight(debugAccess({ identities: [], secure: false, loopback: true }, system))).toBe(true)
    expect(
      Either.isLeft(
        debugAccess({ identities: ["spiffe://cluster.local/ns/shop/sa/web"], secure: false, loopback: true }, system),
      ),
    ).toBe(true)
  })

  it("refuses the plaintext listener's callers on other hosts unless the setting opens it to them", () => {
    const remote = { identities: [], secure: false, loopback: false }
    expect(Either.getLeft(debugAccess(remote, system))).toEqual(
      expect.objectContaining({
        value: {
          code: "PERMISSION_DENIED",
          message:
            "debug requests on the plaintext xDS port are answered to loopback callers only: ask on this host, or on the TLS port with a client certificate or token of namespace mesh-system (MESH_XDS_PLAINTEXT_DEBUG_REMOTE=true answers every caller)",
        },
      }),
    )
    expect(Either.isRight(debugAccess(remote, system, true))).toBe(true)
    // An identity the plaintext guard verified is judged by its namespace, wherever it calls from.
    const authenticated = { identities: ["spiffe://cluster.local/ns/mesh-system/sa/meshctl"], secure: false }
    expect(Either.isRight(debugAccess({ ...authenticated, loopback: false }, system))).toBe(true)
    // The TLS port wants an identity whatever the setting says.
    expect(Either.isLeft(debugAccess({ identities: [], secure: true, loopback: true }, system, true))).toBe(true)
  })

  it("tells loopback peers as grpc-js names them", () => {
    for (const peer of ["127.0.0.1:5000", "127.8.9.10:1", "::1:43210", "::ffff:127.0.0.1:80", "[::1]:5000"])
      expect(isLoopbackPeer(peer), peer).toBe(true)
    for (const peer of [
      "192.0.2.2:5000",
      "10.0.0.1:1",
      "fd00::2:443",
      "::ffff:10.1.2.3:80",
      "[fd00::2]:1",
      "unknown",
      "::",
    ])
      expect(isLoopbackPeer(peer), peer).toBe(false)
  })

  it("refuses type URLs over the bound before parsing them", () => {
    expect(debugTypeProblem(`mesh.io/debug/config_dump?proxyID=${"x".repeat(1024)}`)).toBeUndefined()
    expect(debugTypeProblem(`mesh.io/debug/${"p".repeat(1024 * 1024)}`)).toBe(
      `debug type URL is ${1024 * 1024 + 14} characters long; at most ${MAX_DEBUG_TYPE_URL_LENGTH} are accepted`,
    )
  })

  it("maps a failed page's HTTP status to a gRPC status", () => {
    expect([404, 400, 403, 500].map(pageStatusCode)).toEqual([
      "NOT_FOUND",
      "INVALID_ARGUMENT",
      "PERMISSION_DENIED",
      "INTERNAL",
    ])
  })
})
