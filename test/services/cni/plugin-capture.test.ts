/**
 * The pod's capture settings and the rule set they become: the reference plugin's defaults,
 * the annotations (and their upstream spelling), the proxy's user and environment, and the
 * same rules `mesh-agent mesh-iptables` builds from the equivalent flags.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Either } from "effect"
import {
  applyOptionsOf,
  type CaptureSettings,
  captureSettingsOf,
  iptablesConfigOf,
} from "../../../src/services/cni/plugin-capture.js"
import { podFacts } from "../../../src/services/cni/plugin-pod.js"
import { buildRules, renderRestore } from "../../../src/services/iptables/builder.js"
import { type MeshIptablesSettings, toIptablesConfig } from "../../../src/services/iptables/settings.js"
import { injectedPod, proxyContainer } from "./plugin-fixtures.js"

const settingsOf = (pod: ReturnType<typeof injectedPod>): CaptureSettings =>
  Either.getOrThrow(captureSettingsOf(podFacts(pod)))

/** A pod with none of the capture annotations (only the status one). */
const bare = (options: Parameters<typeof injectedPod>[0] = {}) => {
  const pod = injectedPod(options)
  const annotations = Object.fromEntries(
    Object.entries(pod.metadata.annotations!).filter(
      ([key]) => !key.startsWith("traffic.") && !key.includes("interception"),
    ),
  )
  return { ...pod, metadata: { ...pod.metadata, annotations: { ...annotations, ...options.annotations } } }
}

describe("captureSettingsOf", () => {
  it("without annotations: the reference plugin's defaults", () => {
    expect(settingsOf(bare())).toEqual({
      interceptionMode: "REDIRECT",
      proxyUid: "1337",
      proxyGid: "1337",
      includeOutboundIPRanges: "*",
      excludeOutboundIPRanges: "",
      includeInboundPorts: "*",
      excludeInboundPorts: "15020,15021,15090",
      includeOutboundPorts: "",
      excludeOutboundPorts: "15020",
      excludeInterfaces: "",
      rerouteVirtualInterfaces: "",
      dnsCapture: false,
      dualStack: false,
      dropInvalid: false,
    })
  })

  it("annotations feed every setting; the proxy's ports are always excluded inbound", () => {
    const settings = settingsOf(
      bare({
        annotations: {
          "sidecar.mesh.io/interceptionMode": "TPROXY",
          "traffic.sidecar.mesh.io/includeOutboundIPRanges": "10.0.0.0/8,fd00::/8",
          "traffic.sidecar.mesh.io/excludeOutboundIPRanges": "10.96.0.1/32",
          "traffic.sidecar.mesh.io/includeInboundPorts": "8080,9090",
          "traffic.sidecar.mesh.io/excludeInboundPorts": "9090,15021",
          "traffic.sidecar.mesh.io/includeOutboundPorts": "5432",
          "traffic.sidecar.mesh.io/excludeOutboundPorts": "3306",
          "traffic.sidecar.mesh.io/excludeInterfaces": "eth1",
          "mesh.io/reroute-virtual-interfaces": "tap0",
          "traffic.sidecar.mesh.io/kubevirtInterfaces": "ignored0",
        },
      }),
    )
    expect(settings).toMatchObject({
      interceptionMode: "TPROXY",
      includeOutboundIPRanges: "10.0.0.0/8,fd00::/8",
      excludeOutboundIPRanges: "10.96.0.1/32",
      includeInboundPorts: "8080,9090",
      excludeInboundPorts: "9090,15021,15020,15090",
      includeOutboundPorts: "5432",
      excludeOutboundPorts: "3306",
      excludeInterfaces: "eth1",
      rerouteVirtualInterfaces: "tap0",
    })
  })

  it("the deprecated kubevirtInterfaces is read when reroute-virtual-interfaces is absent; istio.io spellings too", () => {
    const settings = settingsOf(
      bare({
        annotations: {
          "traffic.sidecar.istio.io/kubevirtInterfaces": "tap1",
          "traffic.sidecar.istio.io/excludeOutboundPorts": "6379",
        },
      }),
    )
    expect(settings.rerouteVirtualInterfaces).toBe("tap1")
    expect(settings.excludeOutboundPorts).toBe("6379")
  })

  it("uid and gid come from the proxy's securityContext; 0 or absent means 1337", () => {
    const custom = bare({ containers: [proxyContainer({ securityContext: { runAsUser: 2000, runAsGroup: 3000 } })] })
    expect(settingsOf(custom)).toMatchObject({ proxyUid: "2000", proxyGid: "3000" })
    const root = bare({ containers: [proxyContainer({ securityContext: { runAsUser: 0 } })] })
    expect(settingsOf(root)).toMatchObject({ proxyUid: "1337", proxyGid: "1337" })
  })

  it("DNS capture, dual stack and invalid-packet drop come from the proxy's environment", () => {
    const env = [
      { name: "ISTIO_META_DNS_CAPTURE", value: "true" },
      { name: "MESH_DUAL_STACK", value: "1" },
      { name: "INVALID_DROP", value: "T" },
    ]
    expect(settingsOf(bare({ containers: [proxyContainer({ env })] }))).toMatchObject({
      dnsCapture: true,
      dualStack: true,
      dropInvalid: true,
    })
  })

  it("invalid values are error 101 listing each bad annotation", () => {
    const result = captureSettingsOf(
      podFacts(
        bare({
          annotations: {
            "traffic.sidecar.mesh.io/includeOutboundIPRanges": "10.0.0.0/33",
            "traffic.sidecar.mesh.io/excludeOutboundPorts": "http",
            "traffic.sidecar.mesh.io/excludeInterfaces": "a/b",
          },
        }),
      ),
    )
    expect(Either.isLeft(result) && result.left.code).toBe(101)
    const details = Either.isLeft(result) ? (result.left.details ?? "") : ""
    expect(details).toContain("includeOutboundIPRanges")
    expect(details).toContain("excludeOutboundPorts")
    expect(details).toContain("excludeInterfaces")
  })
})

const FLAGS: MeshIptablesSettings = {
  captureAllDns: false,
  cleanupOnly: false,
  cniMode: false,
  dropInvalid: false,
  dryRun: false,
  dualStack: false,
  envoyPort: "15001",
  forceApply: false,
  inboundCapturePort: "15006",
  inboundTunnelPort: "15008",
  iptablesProbePort: 15002,
  iptablesTraceLogging: false,
  meshExcludeInterfaces: "",
  meshInboundInterceptionMode: "",
  meshInboundPorts: "",
  meshInboundTproxyMark: "1337",
  meshInboundTproxyRouteTable: "133",
  meshLocalExcludePorts: "",
  meshLocalOutboundPortsExclude: "",
  meshOutboundPorts: "",
  meshServiceCidr: "",
  meshServiceExcludeCidr: "",
  orchVirtInterfaces: "",
  networkNamespace: "",
  probeTimeout: Duration.seconds(5),
  proxyGid: "",
  proxyUid: "",
  reconcile: false,
  redirectDns: false,
  runValidation: false,
  skipRuleApply: false,
}
const ENV = {
  ownerGroupsInclude: "*",
  ownerGroupsExclude: "",
  hostIpv4LoopbackCidr: "127.0.0.1/32",
  dryRunFilePath: "",
  instanceIp: "",
}
const FACTS = { dnsServersV4: [], dnsServersV6: [], defaultProxyUid: "1337" }

describe("the rule set", () => {
  it("equals mesh-iptables' for the equivalent flags (REDIRECT, defaults)", () => {
    const fromPod = iptablesConfigOf(settingsOf(injectedPod()), ["10.1.0.5"])
    const fromFlags = toIptablesConfig(
      {
        ...FLAGS,
        proxyUid: "1337",
        proxyGid: "1337",
        meshInboundInterceptionMode: "REDIRECT",
        meshServiceCidr: "*",
        meshInboundPorts: "*",
        meshLocalExcludePorts: "15020,15021,15090",
        meshLocalOutboundPortsExclude: "15020",
      },
      ENV,
      FACTS,
    )
    expect(renderRestore(buildRules(fromPod).v4)).toBe(renderRestore(buildRules(fromFlags).v4))
    expect(renderRestore(buildRules(fromPod).v4)).toContain("-A MESH_OUTPUT -j MESH_REDIRECT")
  })

  it("equals mesh-iptables' with TPROXY, DNS capture (all port 53) and dual stack", () => {
    const pod = injectedPod({
      annotations: { "sidecar.mesh.io/interceptionMode": "TPROXY", "traffic.sidecar.mesh.io/excludeOutboundPorts": "" },
      containers: [
        proxyContainer({
          securityContext: { runAsUser: 0, runAsGroup: 1337 },
          env: [
            { name: "MESH_META_DNS_CAPTURE", value: "true" },
            { name: "MESH_DUAL_STACK", value: "true" },
          ],
        }),
      ],
    })
    const fromPod = buildRules(iptablesConfigOf(settingsOf(pod), ["10.1.0.5"]))
    const fromFlags = buildRules(
      toIptablesConfig(
        {
          ...FLAGS,
          proxyUid: "1337",
          proxyGid: "1337",
          meshInboundInterceptionMode: "TPROXY",
          meshServiceCidr: "*",
          meshInboundPorts: "*",
          meshLocalExcludePorts: "15020,15021,15090",
          redirectDns: true,
          captureAllDns: true,
          dualStack: true,
        },
        ENV,
        FACTS,
      ),
    )
    expect(fromPod.ipv6).toBe(true)
    expect(renderRestore(fromPod.v4)).toBe(renderRestore(fromFlags.v4))
    expect(renderRestore(fromPod.v6)).toBe(renderRestore(fromFlags.v6))
    expect(renderRestore(fromPod.v4)).toContain("--dport 53 -j REDIRECT --to-ports 15053")
  })

  it("IPv6 rules follow an IPv6 pod address; apply options enter the sandbox's namespace path", () => {
    expect(iptablesConfigOf(settingsOf(injectedPod()), ["fd00::5"]).enableIpv6).toBe(true)
    expect(iptablesConfigOf(settingsOf(injectedPod()), ["10.0.0.5", "fd00::5"]).enableIpv6).toBe(false)
    const options = applyOptionsOf(iptablesConfigOf(settingsOf(injectedPod()), []), "/var/run/netns/cni-1")
    expect(options).toMatchObject({ networkNamespace: "/var/run/netns/cni-1", cniMode: true, reconcile: true })
  })
})
