/**
 * A sidecar config dump built from the proxy generators' test resources
 * (test/support/proxygen/fixtures.ts), wrapped the way the proxy's admin `/config_dump` wraps
 * them, with SDS secrets carrying real certificates made by openssl.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { opensslServerCert } from "../../support/openssl.js"
import {
  edsCluster,
  endpoints,
  httpListener,
  passthroughCluster,
  REVIEWS,
  reviews,
  routes9080,
  tcpListener,
  virtualInbound,
  virtualOutbound,
} from "../../support/proxygen/fixtures.js"

const ADMIN = "type.googleapis.com/envoy.admin.v3."
const VERSION = "2026-11-26T20:00:00Z/7"
const UPDATED = "2026-11-26T20:00:00.000Z"

export const MYSQL = "outbound|3306||mysql.default.svc.cluster.local"
export const INBOUND = "inbound|8080||"

export interface DumpFixture {
  readonly dump: Record<string, unknown>
  readonly certPem: string
  readonly caPem: string
  readonly dir: string
}

/** The serial of a PEM certificate as openssl prints it (hex), for checking our decimal one. */
export const opensslSerialHex = (dir: string, pem: string): string => {
  const file = join(dir, `serial-${Math.random().toString(36).slice(2)}.pem`)
  writeFileSync(file, pem)
  return execFileSync("openssl", ["x509", "-noout", "-serial", "-in", file], { encoding: "utf8" })
    .trim()
    .replace(/^serial=/, "")
}

const withRule = (cluster: Record<string, unknown>, rule: string, namespace: string) => ({
  ...cluster,
  metadata: {
    filter_metadata: {
      istio: { config: `/apis/networking.istio.io/v1alpha3/namespaces/${namespace}/destination-rule/${rule}` },
    },
  },
})

export const buildDumpFixture = (): DumpFixture => {
  const dir = mkdtempSync(join(tmpdir(), "pc-dump-"))
  const certs = opensslServerCert(dir, "workload", "URI:spiffe://cluster.local/ns/default/sa/sleep")
  const b64 = (text: string) => Buffer.from(text).toString("base64")
  const clusters = [
    withRule(edsCluster(reviews("v1")), "reviews", "default"),
    withRule(edsCluster(reviews("v3")), "reviews", "default"),
    edsCluster(reviews("")),
    edsCluster(MYSQL),
    { name: INBOUND, type: "ORIGINAL_DST", connect_timeout: { seconds: "10", nanos: 0 } },
    passthroughCluster,
  ]
  const dump = {
    configs: [
      {
        "@type": `${ADMIN}BootstrapConfigDump`,
        bootstrap: {
          node: {
            id: "sidecar~10.1.0.7~sleep-5d8f.default~default.svc.cluster.local",
            cluster: "sleep.default",
            metadata: { NAMESPACE: "default", ISTIO_VERSION: "1.24.0" },
            user_agent_name: "envoy",
          },
          static_resources: { clusters: [{ name: "agent", type: "STATIC" }] },
        },
        last_updated: UPDATED,
      },
      {
        "@type": `${ADMIN}ClustersConfigDump`,
        version_info: VERSION,
        static_clusters: [
          {
            cluster: { "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", name: "agent", type: "STATIC" },
            last_updated: UPDATED,
          },
        ],
        dynamic_active_clusters: clusters.map((cluster) => ({
          version_info: VERSION,
          cluster: { "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", ...cluster },
          last_updated: UPDATED,
        })),
      },
      {
        "@type": `${ADMIN}ListenersConfigDump`,
        version_info: VERSION,
        dynamic_listeners: [
          httpListener,
          tcpListener,
          virtualOutbound("PassthroughCluster"),
          virtualInbound("PERMISSIVE"),
        ].map((listener) => ({
          name: listener.name,
          active_state: { version_info: VERSION, listener, last_updated: UPDATED },
        })),
      },
      {
        "@type": `${ADMIN}RoutesConfigDump`,
        dynamic_route_configs: [{ version_info: VERSION, route_config: routes9080, last_updated: UPDATED }],
      },
      {
        "@type": `${ADMIN}EndpointsConfigDump`,
        dynamic_endpoint_configs: [
          endpoints(reviews("v1"), "10.1.0.11", 9080),
          endpoints(reviews("v3"), "10.1.0.13", 9080),
          endpoints(MYSQL, "10.1.0.20", 3306),
        ].map((endpoint_config) => ({ version_info: VERSION, endpoint_config, last_updated: UPDATED })),
      },
      {
        "@type": `${ADMIN}SecretsConfigDump`,
        dynamic_active_secrets: [
          {
            name: "default",
            version_info: VERSION,
            last_updated: UPDATED,
            secret: {
              "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
              name: "default",
              tls_certificate: {
                certificate_chain: { inline_bytes: b64(certs.certPem) },
                private_key: { inline_bytes: b64("[redacted]") },
              },
            },
          },
          {
            name: "ROOTCA",
            version_info: VERSION,
            last_updated: UPDATED,
            secret: {
              "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
              name: "ROOTCA",
              validation_context: { trusted_ca: { inline_bytes: b64(certs.caPem) } },
            },
          },
        ],
      },
    ],
  }
  return { dump, certPem: certs.certPem, caPem: certs.caPem, dir }
}

export { REVIEWS }
