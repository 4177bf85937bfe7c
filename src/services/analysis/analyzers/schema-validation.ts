/**
 * `schema.ValidationAnalyzer.<Kind>`: one analyzer per mesh kind reporting the schema validation
 * findings of its resources (SchemaValidationError, MSH0106), as the reference runs schema
 * validation as analyzers that `--analyzer` selects. The validation itself runs while reading
 * (read-documents.ts keeps each resource's findings in `schemaIssues`): it needs the whole
 * document, and it decides whether the resource is analyzed at all.
 */
import { allKinds, apiKindOf, isMeshKind } from "../../config-model/kinds.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { message } from "../snapshot.js"

/** The validation analyzer of each mesh kind, by the reference's name, sorted by kind. */
export const schemaValidationAnalyzers: ReadonlyArray<Analyzer> = allKinds()
  .filter(isMeshKind)
  .map((info) => ({ group: info.group, kind: apiKindOf(info) }))
  .sort((a, b) => a.kind.localeCompare(b.kind))
  .map(({ group, kind }) => ({
    name: `schema.ValidationAnalyzer.${kind}`,
    description: `Runs schema validation as an analyzer on '${kind}' resources`,
    types: [MessageTypes.SchemaValidationError],
    run: (snapshot) =>
      snapshot
        .ofKind(kind, group)
        .flatMap((entry) =>
          (entry.schemaIssues ?? []).map((issue) =>
            message(MessageTypes.SchemaValidationError, entry, issue.text, issue.path),
          ),
        ),
  }))
