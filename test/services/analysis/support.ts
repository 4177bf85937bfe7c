/** Runs one analyzer (by name, or one of its parts) over YAML documents, as `meshctl analyze` reads them. */
import { findAnalyzer } from "../../../src/services/analysis/analyzer.js"
import { ALL_ANALYZERS } from "../../../src/services/analysis/analyzers/index.js"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import { type Message, makeSnapshot } from "../../../src/services/analysis/snapshot.js"

export const analyze = (name: string, ...documents: ReadonlyArray<string>): ReadonlyArray<Message> =>
  analyzeWith(name, {}, ...documents)

/** As `analyze`, with the snapshot's mesh config and revision. */
export const analyzeWith = (
  name: string,
  options: Parameters<typeof makeSnapshot>[1],
  ...documents: ReadonlyArray<string>
): ReadonlyArray<Message> => {
  const analyzer = findAnalyzer(ALL_ANALYZERS, name)
  if (analyzer === undefined) throw new Error(`no analyzer ${name}`)
  const read = readDocuments("test.yaml", documents.join("---\n"), "default")
  // Schema findings kept for the validation analyzers are fixture errors too, unless under test.
  const schemaIssues = name.startsWith("schema.") ? [] : read.entries.flatMap((e) => e.schemaIssues ?? [])
  if (read.unreadable.length > 0 || read.messages.length > 0 || schemaIssues.length > 0)
    throw new Error(
      `bad fixture: ${[...read.unreadable, ...read.messages.map((m) => m.text), ...schemaIssues.map((i) => i.text)].join("; ")}`,
    )
  const messages = analyzer.run(makeSnapshot(read.entries, options))
  for (const m of messages)
    if (!analyzer.types.includes(m.type)) throw new Error(`${name} emitted undeclared ${m.type.code}`)
  return messages
}

/** `CODE kind/ns/name` per message, for compact assertions. */
export const summary = (messages: ReadonlyArray<Message>): ReadonlyArray<string> =>
  messages.map((m) => `${m.type.code} ${m.resource?.kind}/${m.resource?.namespace}/${m.resource?.name}`)

export const ns = (name: string, labels = "{}") =>
  `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${name}, labels: ${labels}}\n`
export const pod = (name: string, labels: string, extra = "", namespace = "default") =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}, labels: ${labels}${extra}}\nspec: {containers: [{name: app, image: app:1}]}\n`
export const service = (name: string, selector: string, ports: string, namespace = "default", type = "ClusterIP") =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec: {type: ${type}, selector: ${selector}, ports: ${ports}}\n`
export const deployment = (name: string, labels: string, annotations = "{}") =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}, namespace: default}\nspec:\n  selector: {matchLabels: ${labels}}\n  template:\n    metadata: {labels: ${labels}, annotations: ${annotations}}\n    spec: {containers: [{name: app, image: app:1}]}\n`
export const mesh = (
  kind: string,
  name: string,
  spec: string,
  namespace = "default",
  group = "networking.mesh.io/v1",
) => `apiVersion: ${group}\nkind: ${kind}\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec: ${spec}\n`
