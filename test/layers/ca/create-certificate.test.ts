/**
 * The CreateCertificate logic against a real CA: node impersonation through
 * CA_TRUSTED_NODE_ACCOUNTS, and the refusal classification (status + metric) of each step.
 */
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { makeCertificateAuthority } from "../../../src/layers/ca/authority.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { AuthContext, Authenticator } from "../../../src/services/ca/authenticate.js"
import { createCertificate } from "../../../src/services/ca/ca.js"
import { GrpcCode } from "../../../src/services/ca/errors.js"
import { makeNodeAuthorizer, type PodLocator } from "../../../src/services/ca/identity.js"
import { x509 } from "../../../src/services/ca/x509.js"
import { makeCsr, tempDir } from "./helpers.js"

const NODE_PROXY = "spiffe://cluster.local/ns/mesh-system/sa/node-proxy"
const CART = "spiffe://cluster.local/ns/shop/sa/cart"

/** A node agent authenticated by token, running on node-1 with a cart pod. */
const nodeAgent: Authenticator = {
  name: "Fixed",
  authenticate: () =>
    Effect.succeed({
      authSource: "IDToken",
      identities: [NODE_PROXY],
      orchestrator: { namespace: "mesh-system", serviceAccount: "node-proxy", podName: "np-1", nodeName: "node-1" },
    }),
}
const locator: PodLocator = {
  nodeOfPod: () => Effect.succeed(Option.some("node-1")),
  hasPodOnNode: (node, ns, sa) => Effect.succeed(node === "node-1" && ns === "shop" && sa === "cart"),
}
const ctx: AuthContext = { metadata: () => [], verifiedPeerUris: undefined }

const withCa = <A, E>(
  f: (ca: Effect.Effect.Success<ReturnType<typeof makeCertificateAuthority>>) => Effect.Effect<A, E>,
) =>
  Effect.gen(function* () {
    const dir = yield* Effect.promise(() => tempDir("handler"))
    const ca = yield* makeCertificateAuthority({
      trustDomain: "cluster.local",
      rootCaDir: join(dir, "none"),
      stateDir: dir,
      rsaKeySize: 2048,
      selfSignedTtl: Duration.hours(100),
      rotation: { checkInterval: Duration.zero, gracePeriodPercentile: 20, enableJitter: false },
      policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(2) },
    })
    return yield* f(ca)
  }).pipe(Effect.provide(metricsLayer("test")))

describe("CreateCertificate logic", () => {
  it.scopedLive("lets a trusted node agent obtain the identity of a workload on its node", () =>
    withCa((ca) =>
      Effect.gen(function* () {
        const deps = {
          authenticators: [nodeAgent],
          nodeAuthorizer: makeNodeAuthorizer(
            [{ namespace: "mesh-system", serviceAccount: "node-proxy" }],
            locator,
            "cluster.local",
          ),
          ca,
        }
        const { csrPem } = yield* Effect.promise(() => makeCsr([CART]))
        const chain = yield* createCertificate(
          deps,
          { csr: csrPem, validityDuration: 0, metadata: { ImpersonatedIdentity: CART } },
          ctx,
        )
        const leaf = new x509.X509Certificate(chain[0]!)
        const san = leaf.getExtension(x509.SubjectAlternativeNameExtension)
        expect(san?.names.items.map((n) => n.value)).toEqual([CART])

        // Another workload (not on node-1) is refused with the opaque impersonation message.
        const { csrPem: other } = yield* Effect.promise(() => makeCsr(["spiffe://cluster.local/ns/shop/sa/payments"]))
        const refusal = yield* Effect.flip(
          createCertificate(
            deps,
            {
              csr: other,
              validityDuration: 0,
              metadata: { ImpersonatedIdentity: "spiffe://cluster.local/ns/shop/sa/payments" },
            },
            ctx,
          ),
        )
        expect(refusal).toMatchObject({
          code: GrpcCode.UNAUTHENTICATED,
          reason: "request impersonation authentication failure",
          metric: "authentication_failure",
          // Counted by why (meshca_server_node_authorization_refused_count), never told to the caller.
          nodeRefusal: "not_on_node",
        })

        // Without impersonation metadata the CSR must name the caller itself.
        const mismatch = yield* Effect.flip(
          createCertificate(deps, { csr: csrPem, validityDuration: 0, metadata: {} }, ctx),
        )
        expect(mismatch).toMatchObject({ code: GrpcCode.PERMISSION_DENIED, metric: "id_extraction_err" })
      }),
    ),
  )

  it.scopedLive("classifies each refusal: CSR without identity, oversized TTL", () =>
    withCa((ca) =>
      Effect.gen(function* () {
        const deps = { authenticators: [nodeAgent], nodeAuthorizer: undefined, ca }
        const { csrPem: noSan } = yield* Effect.promise(() => makeCsr([]))
        expect(
          yield* Effect.flip(createCertificate(deps, { csr: noSan, validityDuration: 0, metadata: {} }, ctx)),
        ).toMatchObject({
          code: GrpcCode.INVALID_ARGUMENT,
          reason: "CSR identity error: the CSR carries no identity (no URI subject alternative name)",
          metric: "id_extraction_err",
        })
        const { csrPem } = yield* Effect.promise(() => makeCsr([NODE_PROXY]))
        expect(
          yield* Effect.flip(createCertificate(deps, { csr: csrPem, validityDuration: 3 * 3600, metadata: {} }, ctx)),
        ).toMatchObject({
          code: GrpcCode.INVALID_ARGUMENT,
          reason: "CSR signing error (requested TTL 3h0m0s is greater than the max allowed TTL 2h0m0s)",
          metric: "csr_sign_err",
          errorType: "TTL_ERROR",
        })
        const chain = yield* createCertificate(deps, { csr: csrPem, validityDuration: 2 * 3600, metadata: {} }, ctx)
        const leaf = new x509.X509Certificate(chain[0]!)
        expect(leaf.notAfter.getTime() - leaf.notBefore.getTime()).toBe(2 * 3600 * 1000)
      }),
    ),
  )
})
