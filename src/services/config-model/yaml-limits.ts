/**
 * Bounds on what one config file may cost to read, so that a single file (hostile or a mistake)
 * cannot stall or exhaust the control plane:
 *
 * - Size: MAX_CONFIG_FILE_BYTES per file. The orchestrator stores one object in at most 1.5 MiB
 *   and accepts requests of at most 3 MiB; 4 MiB holds any object it would accept, or a
 *   `kubectl get -o yaml` List of a few hundred, and still parses in well under a second. A
 *   larger file is almost surely not hand-written config (a dump, a binary, a log).
 * - Alias expansion: anchors and aliases let a few KB stand for millions of nodes ("billion
 *   laughs"). The nodes aliases add, over a whole file, are bounded by MAX_ALIAS_EXPANSION_NODES,
 *   counted on the parsed tree before anything is expanded.
 * - Nesting: collections inside collections, at most MAX_NESTING_DEPTH deep, and nodes, at most
 *   MAX_DOCUMENT_NODES per document, checked while the text is tokenised, before a document is
 *   built (see bounded-yaml.ts), by every reader of YAML or JSON a caller or a config controls.
 */
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, type Node } from "yaml"

/** Largest config file read (bytes). */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024

/**
 * Most nodes that aliases may add to one file once expanded. Reuse by aliases is rare in mesh
 * config and small (a shared retry policy, a header block): 100,000 nodes is some thousands of
 * routes, while an expansion to a million routes is refused in milliseconds.
 */
export const MAX_ALIAS_EXPANSION_NODES = 100_000

/**
 * Deepest nesting of collections read (a scalar inside N collections is at depth N). The
 * orchestrator's API server accepts far more, 10,000 levels, in JSON and in YAML (Go's
 * encoding/json `maxNestingDepth`, apimachinery's `pkg/util/json` `maxDepth`, and go-yaml's
 * `max_flow_level`/`max_indents`); that is a guard against stack exhaustion, not a size any
 * resource has. Mesh resources nest about 10 deep, an EnvoyFilter patching a whole listener
 * about 20; js-yaml, our fast reader, defaults its own `maxDepth` to 100. At 100 every reader
 * (js-yaml, the `yaml` library, Schema decoding, validators that recurse) stays far from the
 * stack's end, and a refused document costs a few hundred bytes of reading.
 */
export const MAX_NESTING_DEPTH = 100

/**
 * Most nodes (scalars, collections, aliases) one document may have. A document is parsed in one
 * piece (files are parsed a batch of documents at a time, yielding between batches), so this
 * bounds the longest stretch the event loop is held and the memory of one document's tree: the
 * `yaml` library costs ~10 µs and ~1 KB per node. The same figure as the alias bound: a few
 * hundred resources in one `kind: List` document (~100-300 nodes each) fit.
 */
export const MAX_DOCUMENT_NODES = 100_000

/** The message for a document nested deeper than `limit`. */
export const nestingProblem = (limit: number = MAX_NESTING_DEPTH): string =>
  `YAML nested more than ${limit} levels deep (collections inside collections), over the limit of ${limit}: document not read`

/** The message for a document with more than `limit` nodes. */
export const nodesProblem = (limit: number = MAX_DOCUMENT_NODES): string =>
  `YAML document has more than ${limit} nodes, over the limit of ${limit} nodes in one document: document not read (split it into smaller documents)`

const formatBytes = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MiB` : `${bytes} bytes`

/** Why a file of `size` bytes is not read, or `undefined` when it is within the limit. */
export const oversizedFileProblem = (size: number): string | undefined =>
  size > MAX_CONFIG_FILE_BYTES
    ? `file is ${formatBytes(size)} (${size} bytes), over the limit of ${formatBytes(MAX_CONFIG_FILE_BYTES)} for one config file: split it into smaller files`
    : undefined

/**
 * The number of nodes the aliases of `document` add when expanded (expanded size minus written
 * size), or Infinity for an alias that contains itself. Linear in the size of the written tree:
 * the expanded size of every anchored node is computed once. Anchors are resolved in document
 * order, as the `yaml` library resolves them (an alias names the last anchor defined before it).
 */
export const aliasExpansion = (document: Document.Parsed): number => {
  const anchors = new Map<string, Node>()
  const expanded = new Map<Node, number>()
  const open = new Set<Node>()
  let written = 0
  const size = (node: unknown): number => {
    if (node === null || node === undefined) return 0
    if (isAlias(node)) {
      written += 1
      const target = anchors.get(node.source)
      if (target === undefined) return 1
      if (open.has(target)) return Number.POSITIVE_INFINITY
      return expanded.get(target) ?? 1
    }
    if (isPair(node)) return size(node.key) + size(node.value)
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return 0
    written += 1
    if (node.anchor !== undefined) anchors.set(node.anchor, node)
    let total = 1
    if (isMap(node) || isSeq(node)) {
      open.add(node)
      for (const item of node.items) total += size(item)
      open.delete(node)
    }
    expanded.set(node, total)
    return total
  }
  const total = size(document.contents)
  return total - written
}
