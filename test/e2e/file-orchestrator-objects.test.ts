/**
 * File mode with orchestrator objects: a `v1 Service` and a `discovery.k8s.io/v1 EndpointSlice`
 * in `--configDir` of the built mesh-discovery (Mock registry, no cluster) are served to an ADS
 * client as the orchestrator registry would serve them: the outbound cluster of the service's
 * port and the slice's ready addresses as its endpoints (the not-ready one left out). Editing the
 * slice moves the endpoints. A `networking.k8s.io/v1` Ingress of the mesh's IngressClass in the
 * same directory reaches a router of the ingress gateway as an HTTP listener on port 80 whose
 * route sends the Ingress's host and path to that service.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { discoveryArgs } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"

const CLUSTER = "outbound|9080||ratings.demo.svc.cluster.local"

const service = `apiVersion: v1
kind: Service
metadata:
  name: ratings
  namespace: demo
spec:
  clusterIP: 10.96.0.50
  selector:
    app: ratings
  ports:
  - name: http
    port: 9080
    targetPort: 8080
`

const slice = (addresses: ReadonlyArray<string>) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ratings-abc
  namespace: demo
  labels:
    kubernetes.io/service-name: ratings
addressType: IPv4
ports:
- name: http
  port: 8080
  protocol: TCP
endpoints:
${addresses.map((a) => `- addresses: ["${a}"]\n  conditions: { ready: true }\n`).join("")}- addresses: ["10.1.0.99"]
  conditions: { ready: false }
`

const ingress = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: mesh
spec:
  controller: mesh.io/ingress-controller
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ratings
  namespace: demo
spec:
  ingressClassName: mesh
  rules:
  - host: ratings.example.com
    http:
      paths:
      - path: /api
        pathType: Prefix
        backend:
          service:
            name: ratings
            port:
              name: http
`

let dir: string
let daemon: Daemon
let ads: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "file-orchestrator-"))
  writeFileSync(join(dir, "ratings.yaml"), `${service}---\n${slice(["10.1.0.5", "10.1.0.6"])}`)
  writeFileSync(join(dir, "ingress.yaml"), ingress)
  daemon = startDaemon("mesh-discovery", discoveryArgs(dir), { PILOT_DEBOUNCE_AFTER: "10ms", PILOT_DEBOUNCE_MAX: "1s" })
  ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1] as string
  await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
})

/** The endpoint addresses of CLUSTER an ADS client holds once `done` accepts them. */
const endpointsWhen = (done: (addresses: ReadonlyArray<string>) => boolean) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const client = yield* makeAdsClient({
          address: ads,
          mode: "sotw",
          node: {
            id: "sidecar~10.1.0.7~client.demo~demo.svc.cluster.local",
            metadata: plainToStruct({ NAMESPACE: "demo" }),
          },
        })
        yield* client.subscribe(TypeUrl.Cluster)
        yield* client.subscribe(TypeUrl.Endpoint, [CLUSTER])
        const addressesOf = (snapshot: Parameters<Parameters<typeof client.waitFor>[0]>[0]) => {
          const cla = snapshot.types.get(TypeUrl.Endpoint)?.resources.get(CLUSTER)?.resource as
            | {
                endpoints?: Array<{
                  lb_endpoints?: Array<{
                    endpoint?: { address?: { socket_address?: { address?: string; port_value?: number } } }
                  }>
                }>
              }
            | undefined
          return (cla?.endpoints ?? [])
            .flatMap((l) => l.lb_endpoints ?? [])
            .map(
              (e) =>
                `${e.endpoint?.address?.socket_address?.address}:${e.endpoint?.address?.socket_address?.port_value}`,
            )
            .sort()
        }
        const snapshot = yield* client.waitFor(
          (s) => s.types.get(TypeUrl.Cluster)?.resources.has(CLUSTER) === true && done(addressesOf(s)),
          "20 seconds",
        )
        return addressesOf(snapshot)
      }),
    ),
  )

describe("Service and EndpointSlice documents in --configDir (file mode)", () => {
  it("serves the service's cluster and the slice's ready endpoints", async () => {
    const addresses = await endpointsWhen((a) => a.length > 0)
    expect(addresses).toEqual(["10.1.0.5:8080", "10.1.0.6:8080"])
  }, 40_000)

  it("follows an edit of the slice", async () => {
    writeFileSync(join(dir, "ratings.yaml"), `${service}---\n${slice(["10.1.0.8"])}`)
    const addresses = await endpointsWhen((a) => a.length === 1)
    expect(addresses).toEqual(["10.1.0.8:8080"])
  }, 40_000)
})

interface RouteConfig {
  readonly virtual_hosts?: ReadonlyArray<{
    readonly domains?: ReadonlyArray<string>
    readonly routes?: ReadonlyArray<{
      readonly match?: { readonly prefix?: string; readonly path?: string; readonly path_separated_prefix?: string }
      readonly route?: { readonly cluster?: string }
    }>
  }>
}

describe("Ingress documents in --configDir (file mode)", () => {
  it("reach the ingress gateway's router as a listener on 80 and a route to the backend", async () => {
    const { listeners, route } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const client = yield* makeAdsClient({
            address: ads,
            mode: "sotw",
            node: {
              id: "router~10.1.0.9~mesh-ingressgateway-abc.mesh-system~mesh-system.svc.cluster.local",
              metadata: plainToStruct({ NAMESPACE: "mesh-system", LABELS: { mesh: "ingressgateway" } }),
            },
          })
          yield* client.subscribe(TypeUrl.Listener)
          yield* client.subscribe(TypeUrl.Route, ["http.80"])
          const snapshot = yield* client.waitFor(
            (s) =>
              (s.types.get(TypeUrl.Listener)?.resources.size ?? 0) > 0 &&
              ((s.types.get(TypeUrl.Route)?.resources.get("http.80")?.resource as RouteConfig | undefined)
                ?.virtual_hosts?.length ?? 0) > 0,
            "20 seconds",
          )
          return {
            listeners: [...(snapshot.types.get(TypeUrl.Listener)?.resources.keys() ?? [])],
            route: snapshot.types.get(TypeUrl.Route)?.resources.get("http.80")?.resource as RouteConfig,
          }
        }),
      ),
    )
    expect(listeners).toContain("0.0.0.0_80")
    const host = route.virtual_hosts?.find((v) => v.domains?.includes("ratings.example.com"))
    expect(host, JSON.stringify(route)).toBeDefined()
    const api = host?.routes?.find((r) => r.route?.cluster === CLUSTER)
    expect(api, JSON.stringify(host)).toBeDefined()
    expect(api?.match?.prefix ?? api?.match?.path_separated_prefix).toBe("/api")
  }, 40_000)
})
