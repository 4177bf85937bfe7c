/**
 * A node proxy admin `/config_dump` in the reference's shape (our own content): two ambient
 * pods of `demo` on two nodes, one behind a waypoint, their service, the waypoint's own
 * workload and service, an L4 policy, two identities' certificates (one still initialising) and
 * connections in both directions. `now` fixes the certificate validity windows around it.
 */
export const NODE_A = "node-a"
export const NODE_B = "node-b"

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

export const nodeProxyDump = (now: Date = new Date()) => {
  const t = now.getTime()
  const hour = 3600_000
  const workload = (name: string, ip: string, node: string, extra: Record<string, unknown> = {}) => ({
    uid: `Orchestrator//Pod/demo/${name}`,
    workloadIps: [ip],
    protocol: "HBONE",
    name,
    namespace: "demo",
    serviceAccount: name.split("-")[0],
    workloadName: name.split("-")[0],
    workloadType: "pod",
    canonicalName: name.split("-")[0],
    canonicalRevision: "latest",
    clusterId: "Orchestrator",
    trustDomain: "cluster.local",
    node,
    status: "Healthy",
    hostname: "",
    capacity: 1,
    ...extra,
  })
  return {
    workloads: {
      "10.1.0.11": workload("web-7d9f", "10.1.0.11", NODE_A, {
        waypoint: { destination: "demo/waypoint.demo.svc.cluster.local" },
      }),
      "10.1.0.12": workload("web-8c2a", "10.1.0.12", NODE_B, { status: "Unhealthy" }),
      "10.1.0.20": workload("sleep-5b6c", "10.1.0.20", NODE_A),
      "10.1.0.30": workload("waypoint-6f7d", "10.1.0.30", NODE_B, { protocol: "TCP" }),
    },
    services: [
      {
        name: "web",
        namespace: "demo",
        hostname: "web.demo.svc.cluster.local",
        vips: ["/10.96.0.10"],
        ports: { "80": 8080 },
        waypoint: { destination: "/10.96.0.30" },
        endpoints: {
          "Orchestrator//Pod/demo/web-7d9f": {
            workloadUid: "Orchestrator//Pod/demo/web-7d9f",
            service: "",
            port: { "80": 8080 },
          },
          "Orchestrator//Pod/demo/web-8c2a": {
            workloadUid: "Orchestrator//Pod/demo/web-8c2a",
            service: "",
            port: { "80": 8080 },
          },
        },
        ipFamilies: "IPv4",
      },
      {
        name: "waypoint",
        namespace: "demo",
        hostname: "waypoint.demo.svc.cluster.local",
        vips: ["/10.96.0.30"],
        ports: { "15008": 15008 },
        endpoints: {
          "Orchestrator//Pod/demo/waypoint-6f7d": {
            workloadUid: "Orchestrator//Pod/demo/waypoint-6f7d",
            service: "",
            port: { "15008": 15008 },
          },
        },
        ipFamilies: "IPv4",
      },
    ],
    policies: [
      {
        name: "allow-sleep",
        namespace: "demo",
        scope: "Namespace",
        action: "Allow",
        rules: [[[{ principals: [{ Exact: "cluster.local/ns/demo/sa/sleep" }] }]]],
      },
    ],
    certificates: [
      {
        identity: "spiffe://cluster.local/ns/demo/sa/web",
        state: "Available",
        certChain: [{ pem: "", serialNumber: "255", validFrom: iso(t - hour), expirationTime: iso(t + 23 * hour) }],
        rootCerts: [{ pem: "", serialNumber: "4096", validFrom: iso(t - 2 * hour), expirationTime: iso(t - hour) }],
      },
      { identity: "spiffe://cluster.local/ns/demo/sa/sleep", state: "Initializing", certChain: [], rootCerts: [] },
    ],
    workloadState: {
      "Orchestrator//Pod/demo/web-7d9f": {
        info: { name: "web-7d9f", namespace: "demo", trustDomain: "cluster.local", serviceAccount: "web" },
        connections: {
          inbound: [
            {
              src: "10.1.0.20:41000",
              originalDst: "web.demo.svc.cluster.local",
              actualDst: "10.1.0.11:8080",
              protocol: "HBONE",
            },
          ],
          outbound: [],
        },
      },
      "Orchestrator//Pod/demo/sleep-5b6c": {
        info: { name: "sleep-5b6c", namespace: "demo", trustDomain: "cluster.local", serviceAccount: "sleep" },
        connections: {
          inbound: [],
          outbound: [
            { src: "10.1.0.20:41000", originalDst: "10.96.0.10:80", actualDst: "10.1.0.30:15008", protocol: "HBONE" },
          ],
        },
      },
    },
  }
}
