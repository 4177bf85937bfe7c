/**
 * SDS over ADS for gateways: the credentials a router may read, by the names its listeners ask
 * for, as Secret resources the xDS codec accepts.
 */
import { describe, expect, it } from "vitest"
import type { Credential } from "../../../../../src/services/credentials/credential.js"
import {
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateCredentials } from "../../../../../src/services/xds/proxygen/credentials/index.js"
import { generateGatewayListeners } from "../../../../../src/services/xds/proxygen/gateway/index.js"
import { generateForProxy } from "../../../../../src/services/xds/proxygen/generate.js"
import { proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { destinationRule, input, resource, service } from "../../../../fixtures/xds/mesh.js"
import { expectConformant } from "../../../../support/proxygen/check.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const credential = (namespace: string, name: string, parts: Partial<Credential>): Credential => ({
  namespace,
  name,
  ...parts,
})

const WEB = credential("mesh-system", "web", { certificateChain: "CHAIN", privateKey: "KEY", caCertificates: "CA" })
const WEB_CA = credential("mesh-system", "web-cacert", { caCertificates: "OTHER-CA" })
const FOREIGN = credential("shop", "shop-cert", { certificateChain: "SHOP", privateKey: "SHOPKEY" })
const SECRETS = credential("shop", "secrets", { certificateChain: "S", privateKey: "K" })

const httpsGateway = (credentialName: string, mode = "SIMPLE") =>
  resource(
    "Gateway",
    "ingress",
    {
      selector: { app: "ingressgateway" },
      servers: [
        {
          port: { number: 443, name: "https", protocol: "HTTPS" },
          hosts: ["*"],
          tls: { mode, credentialName },
        },
      ],
    },
    "mesh-system",
  )

const router = proxyView("router~10.0.0.9~ingress-1.mesh-system~mesh-system.svc.cluster.local", {
  LABELS: { app: "ingressgateway" },
  NAMESPACE: "mesh-system",
})!

const pushOf = (gateways: ReadonlyArray<ReturnType<typeof httpsGateway>>, credentials: ReadonlyArray<Credential>) =>
  makePushContext(
    {
      ...input({ services: [], endpoints: [], virtualServices: [], destinationRules: [] }),
      proxyConfig: { ...emptyProxyConfigInput, gateways, credentials },
    },
    defaultPushContextOptions,
  )

const built = (generated: ReturnType<typeof generateCredentials>) => generated.resources.map((r) => r.build() as J)

describe("gateway credentials over SDS", () => {
  it("serves the certificate and key of a Secret in the router's namespace, by the name its listener asks for", () => {
    const push = pushOf([httpsGateway("web")], [WEB, FOREIGN])
    // The listener asks for the name this generator serves.
    const listener = generateGatewayListeners(push, router).resources[0]!.build() as J
    const sdsName =
      listener.filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0]
        .name
    expect(sdsName).toBe("kubernetes://web")
    const out = generateCredentials(push, router, [sdsName])
    expect(out.warnings).toEqual([])
    const [secret] = built(out)
    expect(secret.name).toBe("kubernetes://web")
    expect(Buffer.from(secret.tls_certificate.certificate_chain.inline_bytes).toString()).toBe("CHAIN")
    expect(Buffer.from(secret.tls_certificate.private_key.inline_bytes).toString()).toBe("KEY")
    expectConformant(TypeUrl.Secret, [secret])
  })

  it("a MUTUAL server's CA bundle: the `<name>-cacert` Secret first, else the Secret's own ca.crt", () => {
    const withSeparate = built(
      generateCredentials(pushOf([httpsGateway("web", "MUTUAL")], [WEB, WEB_CA]), router, ["kubernetes://web-cacert"]),
    )
    expect(Buffer.from(withSeparate[0].validation_context.trusted_ca.inline_bytes).toString()).toBe("OTHER-CA")
    const ownCa = built(
      generateCredentials(pushOf([httpsGateway("web", "MUTUAL")], [WEB]), router, ["kubernetes://web-cacert"]),
    )
    expect(Buffer.from(ownCa[0].validation_context.trusted_ca.inline_bytes).toString()).toBe("CA")
    expectConformant(TypeUrl.Secret, ownCa)
  })

  it("refuses Secrets of other namespaces unless the router's own Gateway names exactly that credential", () => {
    const push = pushOf([httpsGateway("kubernetes-gateway://shop/shop-cert")], [WEB, FOREIGN, SECRETS])
    const granted = generateCredentials(push, router, ["kubernetes-gateway://shop/shop-cert"])
    expect(built(granted).map((s) => s.name)).toEqual(["kubernetes-gateway://shop/shop-cert"])
    const refused = generateCredentials(push, router, [
      "kubernetes-gateway://shop/secrets",
      "kubernetes://shop/secrets",
    ])
    expect(refused.resources).toEqual([])
    expect(refused.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining("kubernetes-gateway://shop/secrets refused"),
      expect.stringContaining("kubernetes://shop/secrets refused"),
    ])
    // A sidecar elsewhere cannot read the gateway's Secret either.
    const sidecar = proxyView("sidecar~10.0.0.5~app-1.shop~shop.svc.cluster.local", { NAMESPACE: "shop" })!
    expect(generateCredentials(push, sidecar, ["kubernetes://mesh-system/web"]).resources).toEqual([])
  })

  it("names without a Secret, or of Secrets without the part asked for, get no resource and a notice", () => {
    const push = pushOf([httpsGateway("missing")], [credential("mesh-system", "ca-only", { caCertificates: "CA" })])
    const out = generateCredentials(push, router, ["kubernetes://missing", "kubernetes://ca-only", "default", "ROOTCA"])
    expect(out.resources).toEqual([])
    expect(out.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining("no Secret mesh-system/missing"),
      expect.stringContaining("has no certificate and key"),
    ])
  })

  it("through the proxy generator: SDS is served to routers by name, keyed by the Secret's content", () => {
    const before = generateForProxy(pushOf([httpsGateway("web")], [WEB]), TypeUrl.Secret, {
      proxy: router,
      names: ["kubernetes://web"],
      wildcard: false,
    })
    const rotated = generateForProxy(
      pushOf([httpsGateway("web")], [{ ...WEB, certificateChain: "NEW-CHAIN" }]),
      TypeUrl.Secret,
      { proxy: router, names: ["kubernetes://web"], wildcard: false },
    )
    expect(before.resources.map((r) => r.name)).toEqual(["kubernetes://web"])
    expect(rotated.resources[0]!.key).not.toBe(before.resources[0]!.key)
  })

  describe("configmap:// CA bundles (BackendTLSPolicy caCertificateRefs)", () => {
    const BUNDLE = credential("backend", "ca-bundle", { caCertificates: "CM-CA", crl: "CM-CRL", source: "ConfigMap" })
    // A Secret of the same name must not stand in for the ConfigMap (nor the ConfigMap for it).
    const SAME_NAME_SECRET = credential("backend", "ca-bundle", { caCertificates: "SECRET-CA" })
    const sidecar = proxyView("sidecar~10.0.0.5~app-1.shop~shop.svc.cluster.local", { NAMESPACE: "shop" })!
    const API = "api.backend.svc.cluster.local"
    const pushWithRule = (credentials: ReadonlyArray<Credential>) =>
      makePushContext(
        {
          ...input({
            services: [service(API, [443], "backend")],
            destinationRules: [
              destinationRule(
                "api-tls",
                {
                  host: API,
                  trafficPolicy: { tls: { mode: "SIMPLE", credentialName: "configmap://backend/ca-bundle" } },
                },
                "backend",
              ),
            ],
          }),
          proxyConfig: { ...emptyProxyConfigInput, credentials },
        },
        defaultPushContextOptions,
      )

    it("serves the name the DestinationRule's cluster asks for, to a proxy of another namespace, from the ConfigMap", () => {
      const push = pushWithRule([SAME_NAME_SECRET, BUNDLE])
      const clusters = generateForProxy(push, TypeUrl.Cluster, { proxy: sidecar, names: [], wildcard: true })
      const cluster = clusters.resources.map((r) => r.build() as J).find((c) => c.name.includes(API))!
      const sdsName =
        cluster.transport_socket.typed_config.common_tls_context.combined_validation_context
          .validation_context_sds_secret_config.name
      expect(sdsName).toBe("configmap://backend/ca-bundle-cacert")
      const out = generateCredentials(push, sidecar, [sdsName])
      expect(out.warnings).toEqual([])
      const [secret] = built(out)
      expect(secret.name).toBe(sdsName)
      expect(Buffer.from(secret.validation_context.trusted_ca.inline_bytes).toString()).toBe("CM-CA")
      expect(Buffer.from(secret.validation_context.crl.inline_bytes).toString()).toBe("CM-CRL")
      expect(secret.tls_certificate).toBeUndefined()
      expectConformant(TypeUrl.Secret, [secret])
    })

    it("the bare configmap:// name is the CA bundle too; a Secret of that name is not read for it", () => {
      const out = generateCredentials(pushWithRule([BUNDLE]), sidecar, ["configmap://backend/ca-bundle"])
      expect(Buffer.from(built(out)[0].validation_context.trusted_ca.inline_bytes).toString()).toBe("CM-CA")
      const secretOnly = generateCredentials(pushWithRule([SAME_NAME_SECRET]), sidecar, [
        "configmap://backend/ca-bundle-cacert",
      ])
      expect(secretOnly.resources).toEqual([])
      expect(secretOnly.warnings.map((w) => w.message)).toEqual([
        expect.stringContaining("no ConfigMap backend/ca-bundle with a CA certificate"),
      ])
      // Nor does a kubernetes:// name reach the ConfigMap.
      expect(
        generateCredentials(pushWithRule([BUNDLE]), sidecar, ["kubernetes://backend/ca-bundle-cacert"]).resources,
      ).toEqual([])
    })

    it("refuses ConfigMap names without exactly a namespace and a name", () => {
      const out = generateCredentials(pushWithRule([BUNDLE]), sidecar, [
        "configmap://ca-bundle",
        "configmap://backend/ca-bundle/x",
        "configmap:///ca-bundle",
      ])
      expect(out.resources).toEqual([])
      expect(out.warnings).toHaveLength(3)
      for (const w of out.warnings) expect(w.message).toContain("a ConfigMap is named configmap://<namespace>/<name>")
    })

    it("a changed ConfigMap is a different resource (so it is pushed)", () => {
      const ask = (bundle: Credential) =>
        generateForProxy(pushWithRule([bundle]), TypeUrl.Secret, {
          proxy: sidecar,
          names: ["configmap://backend/ca-bundle-cacert"],
          wildcard: false,
        }).resources[0]!.key
      expect(ask({ ...BUNDLE, caCertificates: "ROTATED" })).not.toBe(ask(BUNDLE))
    })
  })
})
