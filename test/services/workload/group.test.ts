import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseConfigDocuments } from "../../../src/services/config-model/parse.js"
import {
  missingGroupInputs,
  parseKeyValues,
  parsePorts,
  renderWorkloadGroup,
  workloadGroup,
} from "../../../src/services/workload/group.js"

const input = {
  name: "vm-app",
  namespace: "apps",
  labels: { app: "vm-app", version: "v2" },
  annotations: { owner: "team-a" },
  ports: { http: 8080, grpc: 9090 },
  serviceAccount: "vm-sa",
  network: "net-1",
  locality: "eu/west/a",
  weight: 5,
}

describe("workload group create", () => {
  it("parses k=v lists and name=port lists", () => {
    expect(parseKeyValues("--labels", ["a=b", "c=d=e"])).toEqual(Either.right({ a: "b", c: "d=e" }))
    expect(parsePorts(["http=80"])).toEqual(Either.right({ http: 80 }))
  })

  it("names the flag and the item in errors", () => {
    expect(parseKeyValues("--labels", ["novalue"])).toEqual(Either.left('--labels: expected key=value, got "novalue"'))
    expect(parseKeyValues("--annotations", ["=v"])).toEqual(Either.left('--annotations: expected key=value, got "=v"'))
    expect(Either.getLeft(parsePorts(["http=eighty"]))._tag).toBe("Some")
    expect(Either.getOrElse(Either.flip(parsePorts(["http=0"])), () => "")).toMatch(/--ports: port of "http"/)
    expect(Either.isLeft(parsePorts(["http=65536"]))).toBe(true)
    expect(Either.isLeft(parsePorts(["8080"]))).toBe(true)
  })

  it("renders a WorkloadGroup the project's own validation accepts, with every field", () => {
    const text = renderWorkloadGroup(workloadGroup(input))
    const parsed = parseConfigDocuments("group.yaml", text)
    expect(parsed.issues).toEqual([])
    expect(parsed.resources).toHaveLength(1)
    const group = parsed.resources[0]!
    expect(group.kind).toBe("WorkloadGroup")
    expect(group.meta).toMatchObject({ name: "vm-app", namespace: "apps" })
    expect(group.spec).toEqual({
      metadata: { labels: input.labels, annotations: input.annotations },
      template: { ports: input.ports, serviceAccount: "vm-sa", network: "net-1", locality: "eu/west/a", weight: 5 },
    })
  })

  it("leaves empty fields out", () => {
    const group = workloadGroup({
      ...input,
      labels: {},
      annotations: {},
      ports: {},
      network: "",
      locality: "",
      weight: 0,
    })
    expect(group.spec).toEqual({ metadata: {}, template: { serviceAccount: "vm-sa" } })
    expect(parseConfigDocuments("g.yaml", renderWorkloadGroup(group)).issues).toEqual([])
  })

  it("asks for the name, then the namespace", () => {
    expect(missingGroupInputs({ name: "", namespace: "ns" })).toMatch(/--name/)
    expect(missingGroupInputs({ name: "g", namespace: "" })).toMatch(/--namespace\/-n/)
    expect(missingGroupInputs({ name: "g", namespace: "ns" })).toBeUndefined()
  })
})
