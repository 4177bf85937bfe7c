/**
 * EnvoyFilter patch operations: relative operations without a priority (MSH0151, or MSH0155 when
 * the filter is tied to a proxy version), and REPLACE, ADD or REMOVE on a target that does not
 * support them (MSH0152, MSH0153, MSH0154).
 */
import type { Analyzer } from "../analyzer.js"
import { type MessageType, MessageTypes } from "../message-types.js"
import { arr, type Entry, type FieldPath, type Message, message, num, rec, type Snapshot, str } from "../snapshot.js"

interface Patch {
  readonly filter: Entry
  readonly applyTo: string
  readonly operation: string
  readonly proxyVersion: string
  readonly path: FieldPath
}

const patches = (snapshot: Snapshot): ReadonlyArray<Patch> =>
  snapshot.ofKind("EnvoyFilter").flatMap((filter) =>
    arr(filter.body.configPatches).map((p, i) => {
      const patch = rec(p)
      return {
        filter,
        applyTo: str(patch.applyTo),
        operation: str(rec(patch.patch).operation),
        proxyVersion: str(rec(rec(patch.match).proxy).proxyVersion),
        path: ["spec", "configPatches", i, "patch", "operation"],
      }
    }),
  )

const RELATIVE = new Set(["INSERT_BEFORE", "INSERT_AFTER", "REPLACE"])
const FILTERS = new Set(["HTTP_FILTER", "NETWORK_FILTER"])

const relative =
  (withProxyVersion: boolean, type: MessageType) =>
  (snapshot: Snapshot): ReadonlyArray<Message> =>
    patches(snapshot)
      .filter(
        (p) =>
          RELATIVE.has(p.operation) &&
          (num(p.filter.body.priority) ?? 0) === 0 &&
          (p.proxyVersion !== "") === withProxyVersion,
      )
      .map((p) =>
        message(
          type,
          p.filter,
          withProxyVersion
            ? `This EnvoyFilter does not have a priority and has a relative patch operation (${p.operation}) and proxy version set which can cause the EnvoyFilter not to be applied during an upgrade. Using the INSERT_FIRST or ADD option or setting the priority may help in ensuring the EnvoyFilter is applied correctly.`
            : `This EnvoyFilter does not have a priority and has a relative patch operation set which can cause the EnvoyFilter not to be applied. Using the INSERT_FIRST or ADD option or setting the priority may help in ensuring the EnvoyFilter is applied correctly.`,
          p.path,
        ),
      )

const misused =
  (operation: string, allowed: (applyTo: string) => boolean, type: MessageType, why: string) =>
  (snapshot: Snapshot): ReadonlyArray<Message> =>
    patches(snapshot)
      .filter((p) => p.operation === operation && p.applyTo !== "" && !allowed(p.applyTo))
      .map((p) =>
        message(
          type,
          p.filter,
          `The ${operation} operation is used incorrectly with applyTo ${p.applyTo}: ${why}`,
          p.path,
        ),
      )

export const envoyFilterAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "envoyfilter.RelativeOperationAnalyzer",
    description: "Checks relative patch operations have a priority",
    types: [MessageTypes.EnvoyFilterUsesRelativeOperation],
    run: relative(false, MessageTypes.EnvoyFilterUsesRelativeOperation),
  },
  {
    name: "envoyfilter.RelativeOperationWithProxyVersionAnalyzer",
    description: "Checks relative patch operations tied to a proxy version have a priority",
    types: [MessageTypes.EnvoyFilterUsesRelativeOperationWithProxyVersion],
    run: relative(true, MessageTypes.EnvoyFilterUsesRelativeOperationWithProxyVersion),
  },
  {
    name: "envoyfilter.ReplaceOperationAnalyzer",
    description: "Checks REPLACE is only applied to filters",
    types: [MessageTypes.EnvoyFilterUsesReplaceOperationIncorrectly],
    run: misused(
      "REPLACE",
      (a) => FILTERS.has(a),
      MessageTypes.EnvoyFilterUsesReplaceOperationIncorrectly,
      "REPLACE only applies to HTTP_FILTER and NETWORK_FILTER; the patch is ignored.",
    ),
  },
  {
    name: "envoyfilter.AddOperationAnalyzer",
    description: "Checks ADD is not applied to a route configuration or a route",
    types: [MessageTypes.EnvoyFilterUsesAddOperationIncorrectly],
    run: misused(
      "ADD",
      (a) => a !== "ROUTE_CONFIGURATION" && a !== "HTTP_ROUTE",
      MessageTypes.EnvoyFilterUsesAddOperationIncorrectly,
      "ADD does not apply to ROUTE_CONFIGURATION or HTTP_ROUTE; the patch is ignored.",
    ),
  },
  {
    name: "envoyfilter.RemoveOperationAnalyzer",
    description: "Checks REMOVE is not applied to a route configuration or a route",
    types: [MessageTypes.EnvoyFilterUsesRemoveOperationIncorrectly],
    run: misused(
      "REMOVE",
      (a) => a !== "ROUTE_CONFIGURATION" && a !== "HTTP_ROUTE",
      MessageTypes.EnvoyFilterUsesRemoveOperationIncorrectly,
      "REMOVE does not apply to ROUTE_CONFIGURATION or HTTP_ROUTE; the patch is ignored.",
    ),
  },
]
