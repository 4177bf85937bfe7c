/**
 * Prints docs/analyzers.md: the reference's analyzers with their counterparts and codes, this
 * mesh's analyzers and every message code, from the analyzer registry.
 *
 *   npm run build && node dist/scripts/gen-analyzer-docs.mjs > docs/analyzers.md
 */
import { renderAnalyzerDocs } from "../src/services/analysis/analyzer-docs.js"
import { DEFAULT_ANALYZERS, OPT_IN_ANALYZERS } from "../src/services/analysis/analyzers/index.js"

process.stdout.write(renderAnalyzerDocs(DEFAULT_ANALYZERS, OPT_IN_ANALYZERS))
