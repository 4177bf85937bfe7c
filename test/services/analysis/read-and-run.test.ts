/** Reading files into entries with their lines, and one run's suppression, scope and thresholds. */
import { describe, expect, it } from "@effect/vitest"
import { DEFAULT_ANALYZERS } from "../../../src/services/analysis/analyzers/index.js"
import { messageOrigin } from "../../../src/services/analysis/output.js"
import { documentSpans, readDocuments } from "../../../src/services/analysis/read-documents.js"
import { parseSuppression, runAnalysis, type Suppression } from "../../../src/services/analysis/run.js"
import { makeSnapshot } from "../../../src/services/analysis/snapshot.js"

const TEXT = `# leading comment
---
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---

apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports:
  - name: web
    port: 80
`

describe("readDocuments", () => {
  it("numbers documents as the reader does and finds each one's first line", () => {
    expect(documentSpans(TEXT).map((s) => s.line)).toEqual([3, 8])
    const read = readDocuments("f.yaml", TEXT, "team")
    expect(read.entries.map((e) => `${e.kind} ${e.namespace}/${e.name} ${e.origin?.line}`)).toEqual([
      "Namespace /apps 3",
      "Service team/web 8",
    ])
  })

  it("places a message on its field's line", () => {
    const read = readDocuments("f.yaml", TEXT, "team")
    const result = runAnalysis(makeSnapshot(read.entries), [], {
      analyzers: DEFAULT_ANALYZERS.filter((a) => a.name === "service.PortNameAnalyzer"),
      suppressions: [],
      outputThreshold: "Info",
    })
    expect(result.messages.map(messageOrigin)).toEqual(["f.yaml:13"])
  })

  it("reports unknown mesh kinds as unreadable, keeps other orchestrator kinds", () => {
    const read = readDocuments(
      "f.yaml",
      "apiVersion: networking.mesh.io/v1\nkind: Nope\nmetadata: {name: x}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
      "default",
    )
    expect(read.unreadable).toHaveLength(1)
    expect(read.entries.map((e) => `${e.group}/${e.kind}`)).toEqual(["apps/Deployment"])
  })
})

describe("runAnalysis", () => {
  const read = readDocuments("f.yaml", TEXT, "team")
  const run = (suppressions: ReadonlyArray<Suppression>, namespace?: string) =>
    runAnalysis(makeSnapshot(read.entries), [], {
      analyzers: DEFAULT_ANALYZERS,
      suppressions,
      outputThreshold: "Info",
      ...(namespace !== undefined ? { namespace } : {}),
    }).messages.map((m) => m.type.code)

  it("finds the namespace and port findings; suppression and scope remove them", () => {
    expect(run([])).toEqual(["MSH0102", "MSH0118"])
    expect(run([parseSuppression("MSH0118=Service web.*") as Suppression])).toEqual(["MSH0102"])
    expect(run([parseSuppression("MSH0118=Service other.team") as Suppression])).toEqual(["MSH0102", "MSH0118"])
    expect(run([], "elsewhere")).toEqual(["MSH0102"])
    expect(parseSuppression("MSH0118")).toContain("invalid --suppress")
  })
})
