/**
 * Gateway-API CRDs installed at a bundle version below what the control plane needs (MSH0176):
 * the control plane does not watch such a kind, so its resources are not processed. The
 * version is the CRD's `gateway.networking.k8s.io/bundle-version` annotation (a pre-release
 * suffix ignored); a CRD without it, or with an unparseable one, is not judged.
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { type Message, message, type Snapshot } from "../snapshot.js"

export const BUNDLE_VERSION_ANNOTATION = "gateway.networking.k8s.io/bundle-version"

/** The minimum bundle version per CRD name (the reference's table). */
export const MINIMUM_CRD_VERSIONS: ReadonlyMap<string, readonly [number, number, number]> = new Map([
  ["grpcroutes.gateway.networking.k8s.io", [1, 1, 0]],
  ["backendtlspolicies.gateway.networking.k8s.io", [1, 4, 0]],
  ["tlsroutes.gateway.networking.k8s.io", [1, 5, 0]],
  ["tcproutes.gateway.networking.k8s.io", [1, 6, 0]],
])

/**
 * `v1.2.3-rc.1` → [1, 2, 3] and its normal form `1.2.3-rc.1` (a missing minor or patch is 0);
 * undefined when not a version.
 */
export const parseVersion = (
  text: string,
): { readonly parts: readonly [number, number, number]; readonly normal: string } | undefined => {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(text.trim())
  if (m === null) return undefined
  const parts = [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] as const
  return { parts, normal: `${parts.join(".")}${m[4] ?? ""}` }
}

const below = (a: readonly [number, number, number], b: readonly [number, number, number]): boolean =>
  a[0] !== b[0] ? a[0] < b[0] : a[1] !== b[1] ? a[1] < b[1] : a[2] < b[2]

const crdVersions = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const crd of snapshot.ofKind("CustomResourceDefinition")) {
    const minimum = MINIMUM_CRD_VERSIONS.get(crd.name)
    const annotation = crd.annotations[BUNDLE_VERSION_ANNOTATION]
    if (minimum === undefined || annotation === undefined) continue
    const installed = parseVersion(annotation)
    if (installed === undefined || !below(installed.parts, minimum)) continue
    out.push(
      message(
        MessageTypes.GatewayAPICRDVersionBelowMinimum,
        crd,
        `Gateway API CRD "${crd.name}" is at version "${installed.normal}" but the mesh requires at least "${minimum.join(".")}"; resources of this kind will not be processed. Upgrade the Gateway API CRDs to satisfy the minimum version.`,
        ["metadata", "annotations", BUNDLE_VERSION_ANNOTATION],
      ),
    )
  }
  return out
}

export const gatewayApiCrdAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "k8sgateway.CRDVersionAnalyzer",
    description: "Checks Gateway API CRDs are at the minimum version required by this mesh version",
    types: [MessageTypes.GatewayAPICRDVersionBelowMinimum],
    run: crdVersions,
  },
]
