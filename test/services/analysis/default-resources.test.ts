/**
 * The default ingress objects of a files-only analysis (issue 35 group 2): what is added, when,
 * and that a Gateway on the default ingress then finds its workload and has its ports checked.
 */
import { describe, expect, it } from "@effect/vitest"
import { DEFAULT_ANALYZERS } from "../../../src/services/analysis/analyzers/index.js"
import { defaultIngressDocuments } from "../../../src/services/analysis/default-resources.js"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import { runAnalysis } from "../../../src/services/analysis/run.js"
import { makeSnapshot } from "../../../src/services/analysis/snapshot.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { mesh } from "./support.js"

const gateway = (port: number) =>
  mesh(
    "Gateway",
    "gw",
    `{selector: {mesh: ingressgateway}, servers: [{port: {number: ${port}, name: p, protocol: HTTP}, hosts: ['*']}]}`,
  )

const analyzeWithDefaults = (config = defaultMeshConfig(), ...documents: ReadonlyArray<string>) => {
  const defaults = readDocuments("internal-ingress", defaultIngressDocuments(config, "mesh-system"), "default")
  const files = readDocuments("f.yaml", documents.join("---\n"), "default")
  return runAnalysis(makeSnapshot([...defaults.entries, ...files.entries]), [], {
    analyzers: DEFAULT_ANALYZERS,
    suppressions: [],
    outputThreshold: "Info",
  }).messages.map((m) => `${m.type.code} ${m.resource?.kind}/${m.resource?.namespace}/${m.resource?.name}`)
}

describe("default ingress resources", () => {
  it("are the ingress Service (four ports) and one Pod in the mesh namespace, named by ingressService", () => {
    const read = readDocuments("internal-ingress", defaultIngressDocuments(defaultMeshConfig(), "mesh-system"), "x")
    expect(read.messages).toEqual([])
    expect(read.entries.map((e) => `${e.kind} ${e.namespace}/${e.name}`)).toEqual([
      "Pod mesh-system/mesh-ingressgateway-dummypod",
      "Service mesh-system/mesh-ingressgateway",
    ])
    expect(read.entries[0]?.labels).toEqual({ mesh: "ingressgateway" })
    const ports = (read.entries[1]!.body.spec as { ports: Array<{ port: number; name: string }> }).ports
    expect(ports.map((p) => `${p.name}:${p.port}`)).toEqual(["http2:80", "https:443", "tcp:31400", "tls:15443"])
    const renamed = readDocuments(
      "internal-ingress",
      defaultIngressDocuments({ ...defaultMeshConfig(), ingressService: "edge" }, "ops"),
      "x",
    )
    expect(renamed.entries.map((e) => `${e.namespace}/${e.name}`)).toEqual(["ops/edge-dummypod", "ops/edge"])
  })

  it("are not added when the ingress controller is off", () => {
    expect(defaultIngressDocuments({ ...defaultMeshConfig(), ingressControllerMode: "OFF" }, "mesh-system")).toBe("")
  })

  it("raise no finding of their own", () => {
    expect(analyzeWithDefaults()).toEqual([])
  })

  it("satisfy a Gateway on the default ingress; its ports are checked against the default Service", () => {
    expect(analyzeWithDefaults(defaultMeshConfig(), gateway(80))).toEqual([])
    expect(analyzeWithDefaults(defaultMeshConfig(), gateway(8080))).toEqual(["MSH0162 Gateway/default/gw"])
    expect(analyzeWithDefaults({ ...defaultMeshConfig(), ingressControllerMode: "OFF" }, gateway(80))).toEqual([
      "MSH0101 Gateway/default/gw",
    ])
  })
})
