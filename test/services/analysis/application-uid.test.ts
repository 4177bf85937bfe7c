/** applicationUID.Analyzer (MSH0144): application containers must not run as the proxy's UID. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, summary } from "./support.js"

const NAME = "applicationUID.Analyzer"
const pod = (name: string, spec: string, labels = "{}") =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: default, labels: ${labels}}\nspec: ${spec}\n`
const deployment = (name: string, spec: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}, namespace: default}\nspec:\n  selector: {matchLabels: {app: ${name}}}\n  template:\n    metadata: {labels: {app: ${name}}}\n    spec: ${spec}\n`

describe("applicationUID.Analyzer", () => {
  it("reports pods and deployments running as 1337 at pod or container level", () => {
    const found = analyze(
      NAME,
      pod("pod-level", "{securityContext: {runAsUser: 1337}, containers: [{name: app, image: a}]}"),
      pod("container-level", "{containers: [{name: app, image: a, securityContext: {runAsUser: 1337}}]}"),
      deployment("d", "{securityContext: {runAsUser: 1337}, containers: [{name: app, image: a}]}"),
    )
    expect(summary(found)).toEqual([
      "MSH0144 Pod/default/pod-level",
      "MSH0144 Pod/default/container-level",
      "MSH0144 Deployment/default/d",
    ])
    expect(found[0]?.text).toBe("User ID (UID) 1337 is reserved for the sidecar proxy.")
  })

  it("leaves the proxy container, other users and the mesh's own objects alone", () => {
    expect(
      analyze(
        NAME,
        pod(
          "proxy",
          "{containers: [{name: app, image: a}, {name: mesh-proxy, image: p, securityContext: {runAsUser: 1337}}]}",
        ),
        pod("other-user", "{securityContext: {runAsUser: 1000}, containers: [{name: app, image: a}]}"),
        pod(
          "gateway",
          "{securityContext: {runAsUser: 1337}, containers: [{name: app, image: a}]}",
          "{mesh: ingressgateway}",
        ),
      ),
    ).toEqual([])
  })
})
