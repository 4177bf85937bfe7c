/**
 * Debug requests on the ADS stream: which type URLs they are, the page they name, who may read
 * it, and the status a failed page ends the stream with.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  debugAccess,
  debugTypeUrl,
  isDebugType,
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
          },
          system,
        ),
      ),
    ).toBe(true)
  })

  it("refuses other namespaces, naming the caller, and unauthenticated TLS callers", () => {
    const denied = debugAccess({ identities: ["spiffe://cluster.local/ns/shop/sa/web"], secure: true }, system)
    expect(Either.getLeft(denied)).toEqual(
      expect.objectContaining({
        value: {
          code: "PERMISSION_DENIED",
          message:
            "debug information is only given to identities of namespace mesh-system; the caller is spiffe://cluster.local/ns/shop/sa/web (namespace shop)",
        },
      }),
    )
    expect(Either.getLeft(debugAccess({ identities: [], secure: true }, system))).toEqual(
      expect.objectContaining({ value: expect.objectContaining({ code: "UNAUTHENTICATED" }) }),
    )
  })

  it("trusts the plaintext listener, unless it authenticated someone of another namespace", () => {
    expect(Either.isRight(debugAccess({ identities: [], secure: false }, system))).toBe(true)
    expect(
      Either.isLeft(debugAccess({ identities: ["spiffe://cluster.local/ns/shop/sa/web"], secure: false }, system)),
    ).toBe(true)
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
