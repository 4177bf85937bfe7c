/**
 * A change of the ambient input (pods, namespaces, waypoints) reaches only the node proxy's
 * workload API: the push request names its two types, so sidecars and gateways are not pushed;
 * merged with other changes, the restriction widens or goes.
 */
import { describe, expect, it } from "vitest"
import type { AmbientInput } from "../../../../src/services/ambient/input.js"
import { emptyPushContextInput, type PushContextInput } from "../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { makePushRequest, mergePushRequest } from "../../../../src/services/xds/push/push-request.js"
import { diffInputs } from "../../../../src/services/xds/push/updates.js"

const ambient = (): AmbientInput => ({
  settings: { clusterId: "c", autoAllowWaypointPolicy: false, systemNamespace: "mesh-system" },
  pods: [],
  namespaceLabels: new Map(),
  gateways: [],
  gatewayClasses: [],
  workloadEntries: [],
})

describe("ambient input changes", () => {
  const before: PushContextInput = { ...emptyPushContextInput, ambient: ambient() }

  it("a new ambient input alone is a push of the workload API types only", () => {
    const request = diffInputs(before, { ...before, ambient: ambient() }, 0)!
    expect(request.full).toBe(true)
    expect([...request.configsUpdated]).toEqual(["Pod//ambient"])
    expect([...(request.onlyTypes ?? [])]).toEqual([TypeUrl.Address, TypeUrl.Authorization])
  })

  it("the same ambient input is no change; with another change it is an unrestricted full push", () => {
    expect(diffInputs(before, { ...before }, 0)).toBeUndefined()
    const withService = diffInputs(
      before,
      {
        ...before,
        ambient: ambient(),
        services: [
          {
            hostname: "a.ns.svc.cluster.local",
            namespace: "ns",
            ports: [],
            addresses: [],
            autoAllocatedAddresses: [],
            resolution: "STATIC",
            location: "MESH_INTERNAL",
            exportTo: [],
            labels: {},
            registry: "Orchestrator",
            clusterId: "c",
          },
        ],
      },
      0,
    )!
    expect(withService.full).toBe(true)
    expect(withService.onlyTypes).toBeUndefined()
    expect([...withService.configsUpdated].sort()).toEqual(["Pod//ambient", "ServiceEntry/ns/a.ns.svc.cluster.local"])
  })

  it("merging keeps EDS for an endpoint-only request and drops the restriction for another full push", () => {
    const pods = diffInputs(before, { ...before, ambient: ambient() }, 0)!
    const endpoints = makePushRequest({ full: false, reason: "endpoint", start: 0 })
    expect([...(mergePushRequest(pods, endpoints).onlyTypes ?? [])].sort()).toEqual(
      [TypeUrl.Address, TypeUrl.Authorization, TypeUrl.Endpoint].sort(),
    )
    expect(mergePushRequest(endpoints, pods).full).toBe(true)
    const config = makePushRequest({ full: true, reason: "config", start: 0 })
    expect(mergePushRequest(pods, config).onlyTypes).toBeUndefined()
    expect(mergePushRequest(pods, pods).onlyTypes?.size).toBe(2)
  })
})
