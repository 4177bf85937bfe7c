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
import { input, resource } from "../../../../fixtures/xds/mesh.js"
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
})
