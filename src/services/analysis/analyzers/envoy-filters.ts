/**
 * EnvoyFilter patch operations, one analyzer as in the reference (envoyfilter.EnvoyPatchAnalyzer):
 * ADD or REMOVE on ROUTE_CONFIGURATION/HTTP_ROUTE is ignored (MSH0153/MSH0154); REPLACE outside
 * HTTP_FILTER, NETWORK_FILTER and VIRTUAL_HOST is invalid (MSH0152). A relative operation
 * (INSERT_BEFORE, INSERT_AFTER, and REMOVE or REPLACE where they apply) in a filter without a
 * priority may not be applied (MSH0151), or not during an upgrade (MSH0155) when an earlier
 * patch matching a proxy version patched the same filter instance. The instance is the patch
 * value's `name`, else the listener match's filter name; patches with a proxy version are
 * remembered across filters in the order they are analyzed. A patch without `patch` ends its
 * filter's checks. The wording is the reference's, typos included, so output compares equal.
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, num, rec, type Snapshot, str } from "../snapshot.js"

const ROUTE_LEVEL = new Set(["ROUTE_CONFIGURATION", "HTTP_ROUTE"])
const REPLACEABLE = new Set(["HTTP_FILTER", "NETWORK_FILTER", "VIRTUAL_HOST"])

const TEXT = {
  relative:
    "This EnvoyFilter does not have a priority and has a relative patch operation set which can cause the EnvoyFilter not to be applied. Using the INSERT_FIRST of ADD option or setting the priority may help in ensuring the EnvoyFilter is applied correctly.",
  relativeWithProxyVersion:
    "This EnvoyFilter does not have a priority and has a relative patch operation (NSTERT_BEFORE/AFTER, REPLACE, MERGE, DELETE) and proxyVersion set which can cause the EnvoyFilter not to be applied during an upgrade. Using the INSERT_FIRST or ADD option or setting the priority may help in ensuring the EnvoyFilter is applied correctly.",
  replace: "The REPLACE operation is only valid for HTTP_FILTER and NETWORK_FILTER.",
  add: "The ADD operation will be ignored when applyTo is set to ROUTE_CONFIGURATION, or HTTP_ROUTE.",
  remove: "The REMOVE operation will be ignored when applyTo is set to ROUTE_CONFIGURATION, or HTTP_ROUTE.",
} as const

/** The filter instance a patch touches, as a comparable key ("" when it names none). */
const instanceOf = (patch: Readonly<Record<string, unknown>>): string => {
  const value = rec(rec(patch.patch).value)
  if (Object.keys(value).length === 0) return ""
  if (value.name !== undefined) return `value:${JSON.stringify(value.name)}`
  const filterChain = rec(rec(patch.match).listener).filterChain
  return filterChain === undefined ? "" : `filter:${str(rec(rec(filterChain).filter).name)}`
}

const analyzePatches = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  const versioned = new Set<string>()
  const check = (filter: Entry) => {
    const priority = num(filter.body.priority) ?? 0
    arr(filter.body.configPatches).every((p, i) => {
      const patch = rec(p)
      if (patch.patch === undefined || patch.patch === null) return false
      const at = ["spec", "configPatches", i, "patch", "value"]
      const instance = instanceOf(patch)
      const relative = () => {
        if (priority !== 0) return
        out.push(
          versioned.has(instance)
            ? message(
                MessageTypes.EnvoyFilterUsesRelativeOperationWithProxyVersion,
                filter,
                TEXT.relativeWithProxyVersion,
                at,
              )
            : message(MessageTypes.EnvoyFilterUsesRelativeOperation, filter, TEXT.relative, at),
        )
      }
      const applyTo = str(patch.applyTo)
      switch (str(rec(patch.patch).operation)) {
        case "ADD":
          if (ROUTE_LEVEL.has(applyTo))
            out.push(message(MessageTypes.EnvoyFilterUsesAddOperationIncorrectly, filter, TEXT.add, at))
          break
        case "REMOVE":
          if (ROUTE_LEVEL.has(applyTo))
            out.push(message(MessageTypes.EnvoyFilterUsesRemoveOperationIncorrectly, filter, TEXT.remove, at))
          else relative()
          break
        case "REPLACE":
          if (!REPLACEABLE.has(applyTo))
            out.push(message(MessageTypes.EnvoyFilterUsesReplaceOperationIncorrectly, filter, TEXT.replace, at))
          else relative()
          break
        case "INSERT_BEFORE":
        case "INSERT_AFTER":
          relative()
          break
      }
      if (str(rec(rec(patch.match).proxy).proxyVersion) !== "") versioned.add(instance)
      return true
    })
  }
  for (const filter of snapshot.ofKind("EnvoyFilter")) check(filter)
  return out
}

export const envoyFilterAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "envoyfilter.EnvoyPatchAnalyzer",
    description: "Checks an envoyFilters patch operations",
    types: [
      MessageTypes.EnvoyFilterUsesRelativeOperation,
      MessageTypes.EnvoyFilterUsesRelativeOperationWithProxyVersion,
      MessageTypes.EnvoyFilterUsesReplaceOperationIncorrectly,
      MessageTypes.EnvoyFilterUsesAddOperationIncorrectly,
      MessageTypes.EnvoyFilterUsesRemoveOperationIncorrectly,
    ],
    run: analyzePatches,
  },
]
