import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { afterEach, describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../src/layers/xds/protos.js"
import type { ProtoObject } from "../../../src/services/xds/cache/resource-spec.js"
import { anyType } from "../../../src/services/xds/conformance/reflect.js"
import { structToPlain } from "../../../src/services/xds/protocol/messages.js"
import { envoyRoot } from "./check.js"
import { outboundHttp } from "./evaluator.js"
import {
  edsCluster,
  endpoints,
  httpListener,
  passthroughCluster,
  reviews,
  routes9080,
  tcpListener,
  virtualOutbound,
} from "./fixtures.js"
import { type StandInProxy, StandInType, startStandInProxy } from "./stand-in-proxy.js"

interface Request {
  readonly type_url: string
  readonly resource_names: ReadonlyArray<string>
  readonly response_nonce: string
  readonly version_info: string
  readonly node?: { readonly id: string; readonly metadata?: unknown }
  readonly error_detail?: { readonly code: number; readonly message: string } | null
}

const encode = (typeUrl: string, r: ProtoObject) => {
  const type = anyType(envoyRoot(), typeUrl)!
  return { type_url: typeUrl, value: Buffer.from(type.encode(type.fromObject(r)).finish()) }
}

const nameOf = (r: ProtoObject) => String(r.name ?? r.cluster_name)

/**
 * A tiny SotW ADS server: it answers a subscription (or a change of its names) with the named
 * resources it holds (all of them for wildcard types), and records every request.
 */
const tinyAds = async (config: Readonly<Record<string, ReadonlyArray<ProtoObject>>>) => {
  const requests: Array<Request> = []
  const waiters = new Set<() => void>()
  /** Resolves once `predicate` holds over the requests received (checked on each). */
  const waitFor = (predicate: (requests: ReadonlyArray<Request>) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!predicate(requests)) return
        waiters.delete(check)
        resolve()
      }
      waiters.add(check)
      check()
    })
  const server = new grpc.Server()
  let nonce = 0
  server.addService(loadXdsProtos().ads, {
    StreamAggregatedResources: (call: grpc.ServerDuplexStream<Partial<Request>, object>) => {
      const sent = new Map<string, string>()
      call.on("data", (raw: Partial<Request>) => {
        // Decoding leaves empty fields out.
        const req: Request = {
          ...raw,
          type_url: raw.type_url ?? "",
          resource_names: raw.resource_names ?? [],
          response_nonce: raw.response_nonce ?? "",
          version_info: raw.version_info ?? "",
        }
        requests.push(req)
        for (const w of [...waiters]) w()
        const names = [...req.resource_names].sort().join(",")
        if (sent.get(req.type_url) === names && req.response_nonce !== "") return
        sent.set(req.type_url, names)
        const wildcard = req.type_url === StandInType.cluster || req.type_url === StandInType.listener
        const held = (config[req.type_url] ?? []).filter((r) => wildcard || req.resource_names.includes(nameOf(r)))
        call.write({
          version_info: "v1",
          type_url: req.type_url,
          nonce: String(++nonce),
          resources: held.map((r) => encode(req.type_url, r)),
        })
      })
      call.on("end", () => call.end())
      call.on("error", () => undefined)
    },
    DeltaAggregatedResources: (call: grpc.ServerDuplexStream<object, object>) => call.end(),
  })
  const socket = join(mkdtempSync(join(tmpdir(), "stand-in-")), "XDS")
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  )
  return { address: `unix://${socket}`, requests, waitFor, close: () => server.forceShutdown() }
}

const cleanup: Array<() => void> = []
afterEach(() => {
  for (const c of cleanup.splice(0)) c()
})

const start = async (config: Readonly<Record<string, ReadonlyArray<ProtoObject>>>) => {
  const server = await tinyAds(config)
  const proxy = startStandInProxy({
    address: server.address,
    node: {
      id: "sidecar~10.1.0.5~productpage-v1.default~default.svc.cluster.local",
      metadata: { NAMESPACE: "default" },
    },
  })
  cleanup.push(() => proxy.close(), server.close)
  return { server, proxy }
}

const holdsAll = (p: StandInProxy) =>
  p.names(StandInType.cluster).length === 3 &&
  p.names(StandInType.endpoint).length === 2 &&
  p.names(StandInType.listener).length === 3 &&
  p.names(StandInType.route).length === 1

describe("stand-in proxy", () => {
  const good = {
    [StandInType.cluster]: [edsCluster(reviews("v1")), edsCluster(reviews("v3")), passthroughCluster],
    [StandInType.endpoint]: [endpoints(reviews("v1"), "10.1.0.1", 9080), endpoints(reviews("v3"), "10.1.0.3", 9080)],
    [StandInType.listener]: [httpListener, tcpListener, virtualOutbound("PassthroughCluster")],
    [StandInType.route]: [routes9080],
  }

  it("subscribes as the proxy does, ACKs conformant config and holds it", async () => {
    const { server, proxy } = await start(good)
    await proxy.waitFor(holdsAll)
    await server.waitFor((requests) => requests.filter((r) => r.response_nonce !== "").length >= 4)
    expect(proxy.nacks).toEqual([])
    const first = server.requests[0]!
    expect(first.type_url).toBe(StandInType.cluster)
    expect(first.node?.id).toMatch(/^sidecar~/)
    expect(structToPlain(first.node?.metadata)).toEqual({ NAMESPACE: "default" })
    // Endpoints of the EDS clusters only, routes the listeners name: never wildcards.
    const subscriptions = server.requests.filter((r) => r.response_nonce === "")
    expect(subscriptions.map((r) => [r.type_url, [...r.resource_names].sort()])).toEqual([
      [StandInType.cluster, []],
      [StandInType.endpoint, [reviews("v1"), reviews("v3")]],
      [StandInType.listener, []],
      [StandInType.route, ["9080"]],
    ])
    expect(server.requests.every((r) => r.error_detail === undefined || r.error_detail === null)).toBe(true)
    // What it holds is what the evaluator reads.
    expect(
      outboundHttp({
        listeners: proxy.resources(StandInType.listener),
        routes: proxy.resources(StandInType.route),
        port: 9080,
        host: "reviews",
        path: "/",
      }),
    ).toMatchObject({ kind: "route", weightedClusters: [{ weight: 90 }, { weight: 10 }] })
  })

  it("NACKs a response with a non-conformant resource, naming it, and keeps nothing of it", async () => {
    const bad = { ...edsCluster(""), lb_policy: 77 }
    const { server, proxy } = await start({ ...good, [StandInType.cluster]: [passthroughCluster, bad] })
    await proxy.waitFor((p) => p.nacks.length > 0)
    const nack = proxy.nacks[0]!
    expect(nack.typeUrl).toBe(StandInType.cluster)
    expect(nack.message).toContain(": name: (validate.rules).string.min_len = 1")
    expect(nack.message).toContain("lb_policy: (validate.rules).enum.defined_only")
    await server.waitFor((requests) => requests.some((r) => r.error_detail?.message === nack.message))
    const sent = server.requests.find((r) => r.error_detail !== undefined && r.error_detail !== null)!
    expect(sent).toMatchObject({ type_url: StandInType.cluster, version_info: "", response_nonce: nack.nonce })
    expect(sent.error_detail?.code).toBe(grpc.status.INVALID_ARGUMENT)
    expect(proxy.resources(StandInType.cluster)).toEqual([])
  })
})
