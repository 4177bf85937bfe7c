/**
 * Served versions and deprecation warnings: every kind accepts the versions the reference serves
 * for it, refuses the ones it does not, and versions the reference marks deprecated are valid
 * with a warning.
 */
import { describe, expect, it } from "vitest"
import { allKinds, deprecationWarningOf, lookupKind } from "../../../src/services/config-model/kinds.js"
import {
  deprecatedVersionWarning,
  documentVersionWarnings,
} from "../../../src/services/config-model/version-warnings.js"
import { doc, parse } from "./helpers.js"

const GRANT_V1ALPHA2 =
  "The v1alpha2 version of ReferenceGrant has been deprecated and will be removed in a future release of the API. Please upgrade to v1beta1."

const grant = (version: string, name = "allow-routes") => `apiVersion: gateway.networking.k8s.io/${version}
kind: ReferenceGrant
metadata: {name: ${name}, namespace: backend}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: frontend}]
  to: [{group: "", kind: Service}]
`

describe("served versions", () => {
  it.each([
    ["networking.istio.io", "VirtualService", ["v1", "v1beta1", "v1alpha3"]],
    ["networking.istio.io", "WorkloadGroup", ["v1", "v1beta1", "v1alpha3"]],
    ["security.istio.io", "AuthorizationPolicy", ["v1", "v1beta1"]],
    ["security.istio.io", "PeerAuthentication", ["v1", "v1beta1"]],
    ["security.istio.io", "RequestAuthentication", ["v1", "v1beta1"]],
    ["telemetry.istio.io", "Telemetry", ["v1", "v1alpha1"]],
    ["extensions.istio.io", "WasmPlugin", ["v1alpha1"]],
  ])("%s %s is accepted at %j", (group, kind, versions) => {
    const info = lookupKind(group, kind)
    expect(info).toBeDefined()
    for (const version of versions) expect(info?.versions).toContain(version)
  })

  it("reads Telemetry and WasmPlugin at v1alpha1, normalised to v1", () => {
    const telemetry = parse(
      doc("Telemetry", { tracing: [{ randomSamplingPercentage: 5 }] }, { apiVersion: "telemetry.istio.io/v1alpha1" }),
    )
    const wasm = parse(
      doc("WasmPlugin", { url: "oci://ghcr.io/x/y:1" }, { apiVersion: "extensions.istio.io/v1alpha1" }),
    )
    for (const result of [telemetry, wasm]) {
      expect(result.issues).toEqual([])
      expect(result.resources[0]?.version).toBe("v1")
    }
  })

  it("refuses a security kind at a version the reference never served", () => {
    const result = parse(
      doc("PeerAuthentication", { mtls: { mode: "STRICT" } }, { apiVersion: "security.istio.io/v1alpha3" }),
    )
    expect(result.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'apiVersion: unsupported version "v1alpha3" for PeerAuthentication; accepted: v1, v1beta1',
    ])
  })

  it("marks deprecated only versions the kind accepts", () => {
    for (const info of allKinds()) {
      for (const version of Object.keys(info.deprecatedVersions ?? {})) expect(info.versions).toContain(version)
    }
  })
})

describe("deprecation warnings", () => {
  it("gives the CRD's warning for a deprecated version and none for a current one", () => {
    expect(deprecatedVersionWarning("gateway.networking.k8s.io/v1alpha2", "ReferenceGrant")).toBe(GRANT_V1ALPHA2)
    expect(deprecatedVersionWarning("gateway.networking.k8s.io/v1alpha2", "GRPCRoute")).toMatch(
      /^The v1alpha2 version of GRPCRoute has been deprecated .* Please upgrade to v1\.$/,
    )
    expect(deprecatedVersionWarning("gateway.networking.k8s.io/v1beta1", "ReferenceGrant")).toBeUndefined()
    expect(deprecatedVersionWarning("telemetry.istio.io/v1alpha1", "Telemetry")).toBeUndefined()
    expect(deprecatedVersionWarning("v1", "Namespace")).toBeUndefined()
    expect(deprecatedVersionWarning("example.com/v1alpha2", "ReferenceGrant")).toBeUndefined()
    const info = lookupKind("gateway.networking.k8s.io", "ReferenceGrant")
    expect(info !== undefined && deprecationWarningOf(info, "v1beta1")).toBeFalsy()
  })

  it("a deprecated version is valid: the parser reports no problem", () => {
    expect(parse(grant("v1alpha2")).issues).toEqual([])
  })

  it("locates each warning at its document, counting empty documents, and at each List item", () => {
    const list = `apiVersion: v1
kind: List
items:
- {apiVersion: gateway.networking.k8s.io/v1beta1, kind: ReferenceGrant, metadata: {name: a}}
- {apiVersion: gateway.networking.k8s.io/v1alpha2, kind: ReferenceGrant, metadata: {name: b, namespace: ns}}
`
    const text = `${grant("v1beta1", "current")}---\n# nothing here\n---\n${grant("v1alpha2")}---\n${list}`
    expect(documentVersionWarnings("f.yaml", text)).toEqual([
      {
        file: "f.yaml",
        documentIndex: 2,
        kind: "ReferenceGrant",
        namespace: "backend",
        name: "allow-routes",
        path: "apiVersion",
        message: GRANT_V1ALPHA2,
      },
      {
        file: "f.yaml",
        documentIndex: 3,
        kind: "ReferenceGrant",
        namespace: "ns",
        name: "b",
        path: "items[1]",
        message: GRANT_V1ALPHA2,
      },
    ])
  })

  it("reads texts js-yaml leaves to the yaml library, and gives nothing for unreadable documents", () => {
    const anchored = `apiVersion: gateway.networking.k8s.io/v1alpha2
kind: ReferenceGrant
metadata: {name: anchored, namespace: backend}
spec:
  from: [&f {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: frontend}, *f]
  to: [{group: "", kind: Service}]
`
    expect(documentVersionWarnings("a.yaml", anchored).map((w) => w.name)).toEqual(["anchored"])
    expect(
      documentVersionWarnings("b.yaml", `${grant("v1alpha2")}---\nkind: [unclosed\n`).map((w) => w.documentIndex),
    ).toEqual([0])
  })
})
