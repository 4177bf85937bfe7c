/** Per kind: specs the schema accepts and specs it refuses, with the problems expected. */
import { expect } from "vitest"
export type Case = readonly [title: string, spec: unknown, expected: ReadonlyArray<string>]

export interface KindTable {
  readonly valid: ReadonlyArray<unknown>
  readonly invalid: ReadonlyArray<Case>
  readonly name?: string
}

const http80 = { number: 80, name: "http", protocol: "HTTP" }
const dest = (host: string, subset?: string) => ({ destination: { host, ...(subset ? { subset } : {}) } })

export const TABLES: Record<string, KindTable> = {
  ServiceEntry: {
    valid: [
      { hosts: ["api.example.com"], ports: [http80], resolution: "DNS" },
      { hosts: ["*.example.com"], ports: [http80], location: "MESH_EXTERNAL", resolution: "NONE" },
      {
        hosts: ["db.internal"],
        addresses: ["10.0.0.0/24"],
        ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
        resolution: "STATIC",
        endpoints: [{ address: "10.0.0.5", ports: { tcp: 15432 }, labels: { version: "v1" } }],
      },
      { hosts: ["vm.internal"], ports: [http80], resolution: "STATIC", workloadSelector: { labels: { app: "vm" } } },
      {
        hosts: ["api.example.com"],
        ports: [http80],
        resolution: "DNS",
        endpoints: [{ address: "us.api.example.com" }],
      },
      { hosts: ["a.example.com"], exportTo: ["."], subjectAltNames: ["spiffe://cluster.local/ns/a/sa/b"] },
    ],
    invalid: [
      ["no hosts", { hosts: [] }, ["spec.hosts: service entry must have at least one host"]],
      ["full wildcard host", { hosts: ["*"] }, ["spec.hosts[0]: invalid host *"]],
      [
        "bad host label",
        { hosts: ["bad_host.com"] },
        ['spec.hosts[0]: domain name "bad_host.com" invalid (label "bad_host" invalid)'],
      ],
      [
        "port range and protocol",
        { hosts: ["a.com"], ports: [{ number: 70000, name: "http", protocol: "HTTPX" }] },
        [
          "spec.ports[0].number: port number 70000 must be in the range 1..65535",
          "spec.ports[0].protocol: unsupported protocol: HTTPX (supported: TCP, UDP, GRPC, GRPC-Web, HTTP, HTTP_PROXY, HTTP2, HTTPS, TLS, Mongo, Redis, MySQL, HBONE)",
        ],
      ],
      [
        "duplicate port names and numbers",
        { hosts: ["a.com"], ports: [http80, { number: 80, name: "http", protocol: "HTTP" }] },
        [
          'spec.ports[1].name: service entry port name "http" already defined',
          "spec.ports[1].number: service entry port 80 already defined",
        ],
      ],
      [
        "bad port name",
        { hosts: ["a.com"], ports: [{ number: 80, name: "HTTP_PORT" }] },
        ["spec.ports[0].name: invalid port name: HTTP_PORT"],
      ],
      [
        "selector and endpoints together",
        {
          hosts: ["a.com"],
          ports: [http80],
          resolution: "STATIC",
          workloadSelector: { labels: { app: "a" } },
          endpoints: [{ address: "1.1.1.1" }],
        },
        ["spec: only one of WorkloadSelector or Endpoints is allowed in Service Entry"],
      ],
      [
        "bad address",
        { hosts: ["a.com"], addresses: ["300.0.0.1", "10.0.0.0/33"] },
        ["spec.addresses[0]: 300.0.0.1 is not a valid IP", 'spec.addresses[1]: "10.0.0.0/33" is not a valid CIDR'],
      ],
      [
        "CIDR with DNS resolution",
        { hosts: ["a.com"], addresses: ["10.0.0.0/8"], resolution: "DNS" },
        ["spec.addresses: CIDR addresses are allowed only for NONE/STATIC resolution types"],
      ],
      [
        "endpoints with NONE",
        { hosts: ["a.com"], endpoints: [{ address: "1.1.1.1" }] },
        ["spec.endpoints: no endpoints should be provided for resolution type none"],
      ],
      [
        "STATIC without endpoints",
        { hosts: ["a.com"], resolution: "STATIC" },
        ["spec.endpoints: endpoints must be provided if service entry discovery mode is static"],
      ],
      [
        "STATIC endpoint not an IP, undefined endpoint port",
        {
          hosts: ["a.com"],
          ports: [http80],
          resolution: "STATIC",
          endpoints: [{ address: "host.example.com", ports: { grpc: 9000 } }],
        },
        [
          'spec.endpoints[0].address: endpoint address "host.example.com" is not a valid IP address',
          "spec.endpoints[0].ports.grpc: endpoint port 9000 is not defined by the service entry",
        ],
      ],
      [
        "DNS wildcard without endpoints",
        { hosts: ["*.example.com"], resolution: "DNS" },
        ["spec.hosts[0]: hosts must be FQDN if no endpoints are provided for resolution mode DNS"],
      ],
      [
        "DNS_ROUND_ROBIN with two endpoints",
        { hosts: ["a.com"], resolution: "DNS_ROUND_ROBIN", endpoints: [{ address: "b.com" }, { address: "c.com" }] },
        ["spec.endpoints: there must only be 0 or 1 endpoint for resolution mode DNS_ROUND_ROBIN"],
      ],
      [
        "unknown resolution",
        { hosts: ["a.com"], resolution: "MAGIC" },
        ['spec.resolution: unknown value "MAGIC"; expected one of NONE, STATIC, DNS, DNS_ROUND_ROBIN, DYNAMIC_DNS'],
      ],
      [
        "unknown location",
        { hosts: ["a.com"], location: "INSIDE" },
        ['spec.location: unknown value "INSIDE"; expected one of MESH_EXTERNAL, MESH_INTERNAL'],
      ],
      [
        "multiple hosts with TCP",
        { hosts: ["a.com", "b.com"], ports: [{ number: 5432, name: "tcp", protocol: "TCP" }], resolution: "DNS" },
        ["spec.ports[0].protocol: multiple hosts provided with non-HTTP, non-TLS ports"],
      ],
      [
        "exportTo mix",
        { hosts: ["a.com"], exportTo: ["*", "ns1"] },
        ["spec.exportTo: cannot have both public (*) and non-public exportTo values for a resource"],
      ],
      [
        "selector wildcard",
        { hosts: ["a.com"], workloadSelector: { labels: { app: "*" } } },
        ['spec.workloadSelector.labels.app: wildcard is not supported in selector: "app=*"'],
      ],
    ],
  },
  WorkloadEntry: {
    valid: [
      {
        address: "10.1.2.3",
        ports: { http: 8080 },
        labels: { app: "vm" },
        serviceAccount: "vm-sa",
        network: "n1",
        weight: 10,
      },
      { address: "vm.example.com" },
      { network: "remote" },
    ],
    invalid: [
      ["no address", {}, ["spec.address: address is required"]],
      [
        "bad port",
        { address: "10.1.2.3", ports: { http: 0 } },
        ["spec.ports.http: port number 0 must be in the range 1..65535"],
      ],
      [
        "unix with ports",
        { address: "unix:///var/run/a.sock", ports: { http: 80 } },
        ["spec.ports: unix endpoint unix:///var/run/a.sock must not include ports"],
      ],
      [
        "bad label",
        { address: "10.1.2.3", labels: { "bad key!": "x" } },
        ['spec.labels["bad key!"]: invalid label key: "bad key!"'],
      ],
    ],
  },
  WorkloadGroup: {
    valid: [
      {
        metadata: { labels: { app: "vm" } },
        template: { serviceAccount: "vm", ports: { http: 8080 } },
        probe: { httpGet: { port: 8080, path: "/ready" }, periodSeconds: 5 },
      },
    ],
    invalid: [
      ["no template", {}, ["spec.template: is required"]],
      [
        "probe port and negatives",
        { template: {}, probe: { tcpSocket: { port: 0 }, periodSeconds: -1 } },
        [
          "spec.probe.periodSeconds: periodSeconds must be non-negative",
          "spec.probe.tcpSocket.port: port number 0 must be in the range 1..65535",
        ],
      ],
      [
        "probe with two methods",
        { template: {}, probe: { tcpSocket: { port: 80 }, exec: { command: ["true"] } } },
        ["spec.probe: only one health check method may be set, found tcpSocket, exec"],
      ],
    ],
  },
  DestinationRule: {
    valid: [
      {
        host: "reviews.ns.svc.cluster.local",
        subsets: [
          { name: "v1", labels: { version: "v1" } },
          { name: "v2", labels: { version: "v2" } },
        ],
      },
      {
        host: "*.example.com",
        trafficPolicy: {
          loadBalancer: { consistentHash: { httpCookie: { name: "user", ttl: "0s" }, maglev: { tableSize: 65537 } } },
          connectionPool: {
            tcp: { maxConnections: 10, connectTimeout: "30ms", tcpKeepalive: { time: "7200s", interval: "75s" } },
            http: { http2MaxRequests: 1000, idleTimeout: "1h" },
          },
          outlierDetection: { consecutive5xxErrors: 7, interval: "5m", baseEjectionTime: "15m" },
          tls: { mode: "SIMPLE", sni: "example.com" },
          portLevelSettings: [{ port: { number: 80 }, loadBalancer: { simple: "LEAST_REQUEST" } }],
        },
      },
      {
        host: "ratings",
        workloadSelector: { matchLabels: { app: "ratings" } },
        exportTo: ["."],
        trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } },
      },
    ],
    invalid: [
      [
        "duplicate subset names",
        { host: "r", subsets: [{ name: "v1" }, { name: "v1" }] },
        ["spec.subsets[1].name: duplicate subset names: v1"],
      ],
      [
        "bad subset name",
        { host: "r", subsets: [{ name: "V1" }] },
        ["spec.subsets[0].name: subset name is invalid: V1"],
      ],
      ["bad host", { host: "a..b" }, ['spec.host: domain name "a..b" invalid (label "" invalid)']],
      [
        "empty traffic policy",
        { host: "r", trafficPolicy: {} },
        ["spec.trafficPolicy: traffic policy must have at least one field"],
      ],
      [
        "durations",
        { host: "r", trafficPolicy: { outlierDetection: { interval: "0.1ms", baseEjectionTime: "5 minutes" } } },
        [
          "spec.trafficPolicy.outlierDetection.interval: duration must be greater than 1ms",
          'spec.trafficPolicy.outlierDetection.baseEjectionTime: invalid duration "5 minutes" (expected a duration such as "1s", "0.5s" or "100ms")',
        ],
      ],
      [
        "percent range",
        { host: "r", trafficPolicy: { outlierDetection: { maxEjectionPercent: 120 } } },
        ["spec.trafficPolicy.outlierDetection.maxEjectionPercent: percentage 120 is not in range 0..100"],
      ],
      [
        "mutual TLS without certificates",
        { host: "r", trafficPolicy: { tls: { mode: "MUTUAL" } } },
        [
          "spec.trafficPolicy.tls.clientCertificate: client certificate required for mutual tls",
          "spec.trafficPolicy.tls.privateKey: private key required for mutual tls",
        ],
      ],
      [
        "maglev table size",
        {
          host: "r",
          trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 100 } } } },
        },
        [
          "spec.trafficPolicy.loadBalancer.consistentHash.maglev.tableSize: tableSize must be a prime number for maglev",
        ],
      ],
      [
        "simple and consistentHash",
        { host: "r", trafficPolicy: { loadBalancer: { simple: "RANDOM", consistentHash: { useSourceIp: true } } } },
        ["spec.trafficPolicy.loadBalancer: only one of simple or consistentHash may be set"],
      ],
      [
        "negative connections",
        { host: "r", trafficPolicy: { connectionPool: { tcp: { maxConnections: -1 } } } },
        ["spec.trafficPolicy.connectionPool.tcp.maxConnections: maxConnections must be non-negative"],
      ],
      [
        "selector with exportTo",
        { host: "r", workloadSelector: { matchLabels: { app: "r" } }, exportTo: ["*"] },
        ["spec.exportTo: destination rule with workload selector cannot have exportTo beyond current namespace"],
      ],
      [
        "locality weights",
        {
          host: "r",
          trafficPolicy: {
            loadBalancer: { localityLbSetting: { distribute: [{ from: "us/*", to: { "us/a/*": 60, "us/b/*": 30 } }] } },
          },
        },
        ["spec.trafficPolicy.loadBalancer.localityLbSetting.distribute[0].to: total weight 90 != 100"],
      ],
    ],
  },
  VirtualService: {
    valid: [
      {
        hosts: ["reviews"],
        http: [
          {
            match: [{ headers: { "end-user": { exact: "jason" } }, uri: { prefix: "/api" } }],
            route: [dest("reviews", "v2")],
          },
          {
            route: [
              { ...dest("reviews", "v1"), weight: 75 },
              { ...dest("reviews", "v3"), weight: 25 },
            ],
            timeout: "0.5s",
            retries: { attempts: 3, perTryTimeout: "2s", retryOn: "gateway-error,connect-failure,503" },
          },
        ],
      },
      {
        hosts: ["ratings"],
        http: [
          {
            fault: {
              delay: { fixedDelay: "7s", percentage: { value: 0.1 } },
              abort: { httpStatus: 400, percentage: { value: 10 } },
            },
            route: [dest("ratings", "v1")],
          },
        ],
      },
      {
        hosts: ["*.example.com"],
        gateways: ["ns/gw", "mesh"],
        http: [{ redirect: { uri: "/v1/bookRatings", authority: "newratings.default.svc.cluster.local" } }],
      },
      {
        hosts: ["*.bookinfo.com"],
        gateways: ["bookinfo-gw"],
        tls: [
          { match: [{ port: 443, sniHosts: ["login.bookinfo.com"] }], route: [dest("login.prod.svc.cluster.local")] },
        ],
        tcp: [{ match: [{ port: 27017 }], route: [dest("mongo.backup.svc.cluster.local")] }],
      },
      { hosts: ["a"], http: [{ directResponse: { status: 503, body: { string: "unavailable" } } }] },
      {
        hosts: ["a"],
        http: [
          {
            match: [
              {
                uri: { regex: "(?i)^/API/(?P<version>v[0-9]+)/.*" },
                authority: { regex: "\\Aapi\\.example\\.com\\z" },
              },
            ],
            route: [dest("a")],
          },
        ],
      },
      { http: [{ route: [dest("reviews")] }] },
      { hosts: ["a"], http: [{ match: [{ uri: { prefix: "" } }], route: [dest("a")] }] },
    ],
    invalid: [
      ["nothing to route", { hosts: ["a"] }, ["spec: http, tcp or tls must be provided in virtual service"]],
      [
        "weights that do not sum to 100",
        {
          hosts: ["a"],
          http: [
            {
              route: [
                { ...dest("a", "v1"), weight: 50 },
                { ...dest("a", "v2"), weight: 40 },
              ],
            },
          ],
        },
        ["spec.http[0].route: total destination weight 90 != 100"],
      ],
      [
        "all weights zero",
        { hosts: ["a"], tcp: [{ route: [dest("a", "v1"), dest("a", "v2")] }] },
        ["spec.tcp[0].route: total destination weight = 0"],
      ],
      [
        "negative weight",
        { hosts: ["a"], http: [{ route: [{ ...dest("a"), weight: -10 }] }] },
        ["spec.http[0].route[0].weight: weight -10 < 0"],
      ],
      [
        "bad regex",
        { hosts: ["a"], http: [{ match: [{ uri: { regex: "a(" } }], route: [dest("a")] }] },
        ['spec.http[0].match[0].uri.regex: invalid regex "a(": Unterminated group'],
      ],
      [
        "RE2-incompatible regex",
        { hosts: ["a"], http: [{ match: [{ headers: { x: { regex: "(?=a)b" } } }], route: [dest("a")] }] },
        [
          'spec.http[0].match[0].headers.x.regex: invalid regex "(?=a)b": backreferences and lookaround are not supported (RE2 syntax)',
        ],
      ],
      [
        "two string match kinds",
        { hosts: ["a"], http: [{ match: [{ uri: { exact: "/a", prefix: "/b" } }], route: [dest("a")] }] },
        ["spec.http[0].match[0].uri: only one of exact, prefix or regex may be set, found exact and prefix"],
      ],
      [
        "route and redirect",
        { hosts: ["a"], http: [{ route: [dest("a")], redirect: { uri: "/b" } }] },
        ["spec.http[0].redirect: HTTP route cannot contain both route and redirect"],
      ],
      [
        "no action",
        { hosts: ["a"], http: [{ timeout: "1s" }] },
        ["spec.http[0]: HTTP route, redirect, direct_response or delegate is required"],
      ],
      [
        "bad timeout",
        { hosts: ["a"], http: [{ route: [dest("a")], timeout: "10" }] },
        ['spec.http[0].timeout: invalid duration "10" (expected a duration such as "1s", "0.5s" or "100ms")'],
      ],
      [
        "fault percentage and status",
        {
          hosts: ["a"],
          http: [{ route: [dest("a")], fault: { abort: { httpStatus: 700, percentage: { value: 101 } } } }],
        },
        [
          "spec.http[0].fault.abort.percentage.value: percentage 101 is neither 0.0, nor in range [0.0001, 100.0]",
          "spec.http[0].fault.abort.httpStatus: HTTP status 700 is not in range 200-599",
        ],
      ],
      [
        "empty fault",
        { hosts: ["a"], http: [{ route: [dest("a")], fault: {} }] },
        ["spec.http[0].fault: HTTP fault injection must have an abort and/or a delay"],
      ],
      [
        "retry policy",
        { hosts: ["a"], http: [{ route: [dest("a")], retries: { attempts: 0, retryOn: "sometimes" } }] },
        [
          "spec.http[0].retries: http retry policy configured when attempts are set to 0 (disabled)",
          'spec.http[0].retries.retryOn: "sometimes" is not a valid retryOn policy',
        ],
      ],
      [
        "wildcard destination",
        { hosts: ["a"], http: [{ route: [dest("*")] }] },
        ["spec.http[0].route[0].destination.host: invalid destination host *"],
      ],
      [
        "destination port out of range",
        { hosts: ["a"], http: [{ route: [{ destination: { host: "a", port: { number: 0 } } }] }] },
        ["spec.http[0].route[0].destination.port.number: port number 0 must be in the range 1..65535"],
      ],
      [
        "mesh wildcard host",
        { hosts: ["*"], http: [{ route: [dest("a")] }] },
        ["spec.hosts[0]: wildcard host * is not allowed for virtual services bound to the mesh gateway"],
      ],
      [
        "duplicate hosts",
        { hosts: ["a.example.com", "*.example.com"], http: [{ route: [dest("a")] }] },
        ["spec.hosts[1]: duplicate hosts in virtual service: a.example.com & *.example.com"],
      ],
      [
        "bad gateway name",
        { hosts: ["a"], gateways: ["ns/Bad_Gw"], http: [{ route: [dest("a")] }] },
        ['spec.gateways[0]: invalid value for gateway name: "Bad_Gw"'],
      ],
      [
        "TLS route without SNI",
        { hosts: ["a"], gateways: ["gw"], tls: [{ match: [{ sniHosts: [] }], route: [dest("a")] }] },
        ["spec.tls[0].match[0].sniHosts: TLS match must have at least one SNI host"],
      ],
      [
        "delegate with gateways",
        { gateways: ["gw"], http: [{ route: [dest("a")] }] },
        ["spec.gateways: delegate virtual service must have no gateways specified"],
      ],
      [
        "CORS method",
        { hosts: ["a"], http: [{ route: [dest("a")], corsPolicy: { allowMethods: ["FETCH"] } }] },
        ['spec.http[0].corsPolicy.allowMethods[0]: "FETCH" is not a supported HTTP method'],
      ],
      [
        "header operations",
        { hosts: ["a"], http: [{ route: [dest("a")], headers: { response: { set: { host: "x" } } } }] },
        ['spec.http[0].headers.response.set.host: invalid header "host": cannot set Host header'],
      ],
      [
        "redirect code",
        { hosts: ["a"], http: [{ redirect: { uri: "/b", redirectCode: 200 } }] },
        ["spec.http[0].redirect.redirectCode: 200 is not a valid redirect code, must be 3xx"],
      ],
    ],
  },
  Gateway: {
    name: "ingress",
    valid: [
      {
        selector: { app: "ingressgateway" },
        servers: [
          {
            port: { number: 80, name: "http", protocol: "HTTP" },
            hosts: ["bookinfo.example.com", "ns/*.example.com"],
            tls: { httpsRedirect: true },
          },
          {
            port: { number: 443, name: "https", protocol: "HTTPS" },
            hosts: ["*"],
            tls: { mode: "SIMPLE", credentialName: "bookinfo-cert" },
          },
          {
            port: { number: 15443, name: "tls", protocol: "TLS" },
            hosts: ["*.local"],
            tls: { mode: "AUTO_PASSTHROUGH" },
          },
        ],
      },
    ],
    invalid: [
      ["no servers", { servers: [] }, ["spec.servers: gateway must have at least one server"]],
      [
        "server without hosts",
        { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: [] }] },
        ["spec.servers[0].hosts: server config must contain at least one host"],
      ],
      [
        "bad protocol and port",
        { servers: [{ port: { number: 0, name: "x", protocol: "SMTP" }, hosts: ["a.com"] }] },
        [
          'spec.servers[0].port.protocol: invalid protocol "SMTP", supported protocols are HTTP, HTTP2, GRPC, GRPC-WEB, MONGO, REDIS, MYSQL, TCP',
          "spec.servers[0].port.number: port number 0 must be in the range 1..65535",
        ],
      ],
      [
        "HTTPS without TLS",
        { servers: [{ port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["a.com"] }] },
        ["spec.servers[0].tls: server must have TLS settings for HTTPS/TLS protocols"],
      ],
      [
        "SIMPLE without certificate",
        {
          servers: [
            { port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["a.com"], tls: { mode: "SIMPLE" } },
          ],
        },
        [
          "spec.servers[0].tls.serverCertificate: SIMPLE TLS requires a server certificate",
          "spec.servers[0].tls.privateKey: SIMPLE TLS requires a private key",
        ],
      ],
      [
        "duplicate port names",
        {
          servers: [
            { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["a.com"] },
            { port: { number: 8080, name: "http", protocol: "HTTP" }, hosts: ["b.com"] },
          ],
        },
        ["spec.servers[1].port.name: port names in servers must be unique: duplicate name http"],
      ],
      [
        "bad namespace in host",
        { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["Bad_NS/a.com"] }] },
        ['spec.servers[0].hosts[0]: invalid namespace value "Bad_NS" in gateway'],
      ],
    ],
  },
  Sidecar: {
    valid: [
      { egress: [{ hosts: ["./*", "mesh-system/*"] }] },
      {
        workloadSelector: { labels: { app: "ratings" } },
        ingress: [{ port: { number: 9080, protocol: "HTTP", name: "http" }, defaultEndpoint: "127.0.0.1:8080" }],
        egress: [
          { port: { number: 9080, protocol: "HTTP", name: "egresshttp" }, hosts: ["prod-us1/*"] },
          { hosts: ["mesh-system/*"] },
        ],
        outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
      },
    ],
    invalid: [
      ["empty", {}, ["spec: sidecar: empty configuration provided"]],
      [
        "host without namespace",
        { egress: [{ hosts: ["reviews"] }] },
        ["spec.egress[0].hosts[0]: host must be of form namespace/dnsName"],
      ],
      [
        "catch-all not last",
        { egress: [{ hosts: ["./*"] }, { port: { number: 80, protocol: "HTTP", name: "http" }, hosts: ["./*"] }] },
        ["spec.egress[0]: sidecar: the egress listener with empty port should be the last listener in the list"],
      ],
      [
        "bad default endpoint",
        { ingress: [{ port: { number: 80, protocol: "HTTP", name: "http" }, defaultEndpoint: "10.0.0.1:8080" }] },
        [
          "spec.ingress[0].defaultEndpoint: sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset",
        ],
      ],
      [
        "duplicate ingress ports",
        {
          ingress: [
            { port: { number: 80, protocol: "HTTP", name: "a" } },
            { port: { number: 80, protocol: "HTTP", name: "b" } },
          ],
        },
        ["spec.ingress[1].port.number: sidecar: ports on IP bound listeners must be unique"],
      ],
      [
        "egress proxy needs ALLOW_ANY",
        {
          outboundTrafficPolicy: {
            mode: "REGISTRY_ONLY",
            egressProxy: { host: "proxy.example.com", port: { number: 3128 } },
          },
        },
        [
          "spec.outboundTrafficPolicy.egressProxy: sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode",
        ],
      ],
    ],
  },
  EnvoyFilter: {
    valid: [
      {
        workloadSelector: { labels: { app: "reviews" } },
        configPatches: [
          {
            applyTo: "HTTP_FILTER",
            match: {
              context: "SIDECAR_INBOUND",
              proxy: { proxyVersion: "^1\\.2.*" },
              listener: {
                portNumber: 8080,
                filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } },
              },
            },
            patch: {
              operation: "INSERT_BEFORE",
              value: {
                name: "envoy.lua",
                typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua" },
              },
            },
          },
          {
            applyTo: "CLUSTER",
            match: { cluster: { service: "reviews.ns.svc.cluster.local" } },
            patch: { operation: "REMOVE" },
          },
        ],
        priority: 10,
      },
    ],
    invalid: [
      [
        "missing patch",
        { configPatches: [{ applyTo: "CLUSTER" }] },
        ["spec.configPatches[0].patch: Envoy filter: missing patch"],
      ],
      [
        "missing applyTo and value",
        { configPatches: [{ patch: { operation: "MERGE" } }] },
        [
          "spec.configPatches[0].applyTo: Envoy filter: missing applyTo",
          "spec.configPatches[0].patch.value: Envoy filter: missing patch value for non-remove operation",
        ],
      ],
      [
        "bad proxy version regex",
        {
          configPatches: [
            { applyTo: "CLUSTER", match: { proxy: { proxyVersion: "1.(" } }, patch: { operation: "REMOVE" } },
          ],
        },
        [
          'spec.configPatches[0].match.proxy.proxyVersion: Envoy filter: invalid regex for proxy version, invalid regex "1.(": Unterminated group',
        ],
      ],
      [
        "listener patch with cluster match",
        { configPatches: [{ applyTo: "LISTENER", match: { cluster: { name: "x" } }, patch: { operation: "REMOVE" } }] },
        [
          "spec.configPatches[0].match: Envoy filter: applyTo for listener class objects cannot have non listener match",
        ],
      ],
      [
        "unknown enum",
        { configPatches: [{ applyTo: "SOCKET", patch: { operation: "REMOVE" } }] },
        [
          'spec.configPatches[0].applyTo: unknown value "SOCKET"; expected one of INVALID, LISTENER, FILTER_CHAIN, NETWORK_FILTER, HTTP_FILTER, ROUTE_CONFIGURATION, VIRTUAL_HOST, HTTP_ROUTE, CLUSTER, EXTENSION_CONFIG, BOOTSTRAP, LISTENER_FILTER',
        ],
      ],
    ],
  },
  ProxyConfig: {
    valid: [
      {
        selector: { matchLabels: { app: "a" } },
        concurrency: 0,
        environmentVariables: { FOO: "bar" },
        image: { imageType: "distroless" },
      },
    ],
    invalid: [
      [
        "negative concurrency",
        { concurrency: -1 },
        ["spec.concurrency: concurrency must be greater than or equal to 0"],
      ],
      ["wrong type", { concurrency: "two" }, ['spec.concurrency: expected a number, got "two"']],
    ],
  },
  PeerAuthentication: {
    valid: [
      { mtls: { mode: "STRICT" } },
      {
        selector: { matchLabels: { app: "a" } },
        mtls: { mode: "PERMISSIVE" },
        portLevelMtls: { "8080": { mode: "DISABLE" } },
      },
    ],
    invalid: [
      [
        "port level mTLS without selector",
        { portLevelMtls: { "8080": { mode: "DISABLE" } } },
        ["spec.portLevelMtls: mesh/namespace peer authentication cannot have port level mTLS"],
      ],
      [
        "bad port key",
        { selector: { matchLabels: { app: "a" } }, portLevelMtls: { "0": { mode: "DISABLE" } } },
        ['spec.portLevelMtls["0"]: port must be in range 1..65535'],
      ],
      [
        "unknown mode",
        { mtls: { mode: "ON" } },
        ['spec.mtls.mode: unknown value "ON"; expected one of UNSET, DISABLE, PERMISSIVE, STRICT'],
      ],
    ],
  },
  RequestAuthentication: {
    valid: [
      {
        selector: { matchLabels: { app: "a" } },
        jwtRules: [
          {
            issuer: "https://accounts.example.com",
            jwksUri: "https://accounts.example.com/jwks",
            fromHeaders: [{ name: "x-jwt", prefix: "Bearer " }],
            outputClaimToHeaders: [{ header: "x-sub", claim: "sub" }],
            timeout: "5s",
          },
        ],
      },
    ],
    invalid: [
      ["empty issuer", { jwtRules: [{ issuer: "" }] }, ["spec.jwtRules[0].issuer: issuer must be set"]],
      [
        "bad jwks uri and jwks",
        { jwtRules: [{ issuer: "i", jwksUri: "ftp://x/jwks", jwks: "{not json" }] },
        [
          'spec.jwtRules[0].jwksUri: invalid jwksUri "ftp://x/jwks": scheme must be http or https',
          "spec.jwtRules[0]: only one of jwks or jwksUri can be set, found jwksUri and jwks",
          expect.stringMatching(/^spec\.jwtRules\[0\]\.jwks: jwks parse error: /) as unknown as string,
        ],
      ],
      [
        "selector and targetRef",
        { selector: { matchLabels: { a: "b" } }, targetRef: { kind: "Service", name: "s" } },
        ["spec: only one of targetRefs or workloadSelector can be set"],
      ],
      [
        "bad targetRef",
        { targetRef: { kind: "Deployment", name: "d", namespace: "other" } },
        [
          "spec.targetRef.namespace: targetRef namespace must not be set; cross namespace referencing is not supported",
          "spec.targetRef.kind: targetRef must be to one of Service, ServiceEntry or gateway Gateway but was /Deployment",
        ],
      ],
    ],
  },
  AuthorizationPolicy: {
    valid: [
      {},
      { action: "DENY", rules: [{}] },
      {
        selector: { matchLabels: { app: "httpbin" } },
        action: "ALLOW",
        rules: [
          {
            from: [{ source: { principals: ["cluster.local/ns/default/sa/sleep"], ipBlocks: ["10.0.0.0/8"] } }],
            to: [{ operation: { methods: ["GET"], paths: ["/info*", "/api/{*}/items"], ports: ["8080"] } }],
            when: [
              { key: "request.auth.claims[iss]", values: ["https://accounts.google.com"] },
              { key: "source.ip", notValues: ["10.1.2.3"] },
            ],
          },
        ],
      },
      { action: "CUSTOM", provider: { name: "ext-authz" }, rules: [{ to: [{ operation: { paths: ["/admin"] } }] }] },
    ],
    invalid: [
      [
        "DENY without rules",
        { action: "DENY" },
        [
          "spec.rules: DENY action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request",
        ],
      ],
      ["empty from", { rules: [{ from: [] }] }, ["spec.rules[0].from: `from` must not be empty, found at rule 0"]],
      [
        "empty source",
        { rules: [{ from: [{ source: {} }] }] },
        ["spec.rules[0].from[0].source: `from.source` must not be empty, found at rule 0"],
      ],
      [
        "bad IP and port",
        { rules: [{ from: [{ source: { ipBlocks: ["10.0.0.300"] } }], to: [{ operation: { ports: ["http"] } }] }] },
        [
          "spec.rules[0].from[0].source.ipBlocks[0]: invalid IP address or CIDR range: 10.0.0.300",
          "spec.rules[0].to[0].operation.ports[0]: invalid port: http",
        ],
      ],
      [
        "unknown condition key",
        { rules: [{ when: [{ key: "request.colour", values: ["red"] }] }] },
        ["spec.rules[0].when[0].key: unknown attribute (request.colour)"],
      ],
      [
        "condition without values",
        { rules: [{ when: [{ key: "source.ip" }] }] },
        ["spec.rules[0].when[0]: at least one of `values` or `notValues` must be set for key source.ip"],
      ],
      [
        "provider without CUSTOM",
        { action: "ALLOW", provider: { name: "x" } },
        ["spec.provider: `provider` must not be with non CUSTOM action, found ALLOW"],
      ],
      [
        "empty values",
        { rules: [{ to: [{ operation: { methods: [""] } }] }] },
        ["spec.rules[0].to[0].operation.methods[0]: empty value not allowed, found in methods"],
      ],
    ],
  },
  Telemetry: {
    valid: [
      {
        tracing: [
          {
            providers: [{ name: "zipkin" }],
            randomSamplingPercentage: 10,
            customTags: { env: { literal: { value: "prod" } } },
          },
        ],
      },
      {
        selector: { matchLabels: { app: "a" } },
        metrics: [
          {
            providers: [{ name: "prometheus" }],
            overrides: [
              {
                match: { metric: "REQUEST_COUNT", mode: "CLIENT" },
                tagOverrides: { request_host: { operation: "REMOVE" } },
              },
            ],
          },
        ],
        accessLogging: [{ providers: [{ name: "envoy" }], filter: { expression: "response.code >= 400" } }],
      },
    ],
    invalid: [
      [
        "sampling out of range",
        { tracing: [{ randomSamplingPercentage: 101 }] },
        ["spec.tracing[0].randomSamplingPercentage: randomSamplingPercentage must be in range [0.0, 100.0]"],
      ],
      [
        "empty provider name",
        { accessLogging: [{ providers: [{ name: "" }] }] },
        ["spec.accessLogging[0].providers[0].name: providers.name may not be empty"],
      ],
      [
        "UPSERT without value",
        { metrics: [{ overrides: [{ tagOverrides: { x: { operation: "UPSERT" } } }] }] },
        ["spec.metrics[0].overrides[0].tagOverrides.x.value: tagOverrides.value must be set when operation is UPSERT"],
      ],
      [
        "unknown metric",
        { metrics: [{ overrides: [{ match: { metric: "LATENCY" } }] }] },
        [
          expect.stringMatching(
            /^spec\.metrics\[0\]\.overrides\[0\]\.match\.metric: unknown value "LATENCY"; expected one of ALL_METRICS, REQUEST_COUNT, /,
          ) as unknown as string,
        ],
      ],
    ],
  },
  WasmPlugin: {
    valid: [
      {
        selector: { matchLabels: { app: "a" } },
        url: "oci://ghcr.io/example/filter:1.0",
        phase: "AUTHN",
        pluginConfig: { key: "value" },
        vmConfig: { env: [{ name: "POD_NAME", valueFrom: "HOST" }] },
      },
      {
        url: "https://example.com/filter.wasm",
        sha256: "a".repeat(64),
        match: [{ mode: "SERVER", ports: [{ number: 8080 }] }],
      },
      { url: "file:///opt/filters/filter.wasm" },
    ],
    invalid: [
      ["no url", { url: "" }, ["spec.url: url field needs to be set"]],
      ["unsupported scheme", { url: "ftp://example.com/f.wasm" }, ["spec.url: url contains unsupported scheme: ftp"]],
      ["bad sha", { url: "oci://a/b", sha256: "abc" }, ["spec.sha256: sha256 field must be 64 characters long"]],
      [
        "duplicate env",
        { url: "oci://a/b", vmConfig: { env: [{ name: "A" }, { name: "A" }] } },
        ["spec.vmConfig.env[1].name: duplicate env"],
      ],
      [
        "value with HOST",
        { url: "oci://a/b", vmConfig: { env: [{ name: "A", valueFrom: "HOST", value: "x" }] } },
        ["spec.vmConfig.env[0].value: value may only be set when valueFrom is INLINE"],
      ],
      [
        "match port",
        { url: "oci://a/b", match: [{ ports: [{ number: 0 }] }] },
        ["spec.match[0].ports[0].number: spec.Match[0].Ports[0] is out of range: 0"],
      ],
    ],
  },
}
