/** Analysis messages per orchestrator object, and the status patch that writes or clears them. */
import { describe, expect, it } from "vitest"
import { desiredMessages, objectOfFile, statusPatch } from "../../../src/services/analysis/analysis-status.js"
import type { ValidationIssue } from "../../../src/services/config-model/resource.js"

const issue = (file: string, path: string, message: string): ValidationIssue => ({
  file,
  documentIndex: 0,
  path,
  message,
})
const warning = (kind: string, namespace: string, name: string, path: string, message: string): ValidationIssue => ({
  file: "",
  documentIndex: 0,
  kind,
  namespace,
  name,
  path,
  message,
})
const reviews = { group: "networking.mesh.io", kind: "VirtualService", namespace: "default", name: "reviews" }

describe("analysis status", () => {
  it("reads the object of a pseudo-file, upstream groups included; files of a directory are none", () => {
    expect(objectOfFile("orchestrator:networking.mesh.io/VirtualService/default/reviews")).toEqual({
      group: "networking.mesh.io",
      kind: "VirtualService",
      namespace: "default",
      name: "reviews",
    })
    expect(objectOfFile("orchestrator:~networking.istio.io/Gateway/ns/gw")?.group).toBe("networking.istio.io")
    expect(objectOfFile("/etc/mesh/routing.yaml")).toBeUndefined()
  })

  it("turns validation issues into errors and analyzer findings into warnings, per object", () => {
    const file = "orchestrator:networking.mesh.io/VirtualService/default/reviews"
    const desired = desiredMessages(
      [issue(file, "spec.http[0].route[0].weight", "must be at most 100"), issue("dir/a.yaml", "", "bad")],
      [
        warning(
          "VirtualService",
          "default",
          "reviews",
          "spec.http[0].route[0].destination.subset",
          "referenced host+subset not found",
        ),
      ],
    )
    expect(desired.size).toBe(1)
    expect(desired.get({ ...reviews, group: "networking.istio.io" }).map((m) => m.level)).toEqual(["Warning"])
    expect(desired.get({ ...reviews, name: "other" })).toEqual([])
    expect(desired.get(reviews)).toEqual([
      {
        level: "Error",
        type: { code: "MSH0106", name: "SchemaValidationError" },
        documentationUrl: "https://mesh.io/latest/docs/reference/config/analysis/msh0106/?ref=status-controller",
        description: "Schema validation error: spec.http[0].route[0].weight: must be at most 100",
      },
      {
        level: "Warning",
        type: { code: "MSH0101", name: "ReferencedResourceNotFound" },
        documentationUrl: "https://mesh.io/latest/docs/reference/config/analysis/msh0101/?ref=status-controller",
        description: "spec.http[0].route[0].destination.subset: referenced host+subset not found",
      },
    ])
  })

  it("patches only a change, and clears fixed messages", () => {
    const messages = desiredMessages([issue("orchestrator:g/K/n/x", "", "broken")], []).get({
      group: "g",
      kind: "K",
      namespace: "n",
      name: "x",
    })
    expect(statusPatch(undefined, [])).toBeUndefined()
    expect(statusPatch(undefined, messages)).toEqual({ status: { validationMessages: messages } })
    expect(statusPatch(JSON.parse(JSON.stringify(messages)), messages)).toBeUndefined()
    expect(statusPatch(messages, [])).toEqual({ status: { validationMessages: null } })
  })
})
