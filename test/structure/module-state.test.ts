/**
 * No state in module scope under src/services (docs/architecture.md, "Effect conventions"): memo
 * tables belong to the instance they serve — a PushContext (`push.local(slot)`), its input memo
 * (`push.memo.local(slot)`), a ResourceCache (`cache.local(slot)`) — so two servers in one process
 * share nothing and a push's memos go with it. What is left in module scope is listed below, each
 * with why it is not state; a new entry needs the same.
 */
import { describe, expect, it } from "vitest"
import { type ModuleState, scanModuleState, scanTree } from "./module-state-scan.js"

/**
 * `file#name` → why it may stay. Reasons fall into three kinds:
 * - an empty collection behind a read-only type: an immutable "nothing" shared as a default;
 * - a memo over immutable constants of the program (Schema ASTs, protobuf descriptors, the kind
 *   table, OID literals): a pure function of its key, bounded by what the code declares, the
 *   same for every server;
 * - a table filled once while the module loads and never changed after.
 */
const ALLOWED: ReadonlyMap<string, string> = new Map([
  // Empty values of read-only types (every field is a ReadonlyMap/ReadonlySet).
  ["src/services/agent/xds-proxy/xds-proxy.ts#emptyDeltaVersions", "empty, read-only type"],
  ["src/services/ca/trust-bundle-watchers.ts#noWatchers", "empty, read-only type"],
  ["src/services/config-store/snapshot.ts#EMPTY_KIND", "empty, read-only type"],
  ["src/services/config-store/snapshot.ts#ConfigSnapshot.empty", "empty snapshot, read-only fields"],
  ["src/services/logging/log-throttle.ts#emptyThrottle", "empty, read-only type"],
  ["src/services/registry/auto-allocate.ts#emptyAllocation", "empty, read-only type"],
  ["src/services/registry/registry.ts#RegistrySnapshot.empty", "empty snapshot, read-only fields"],
  ["src/services/xds-client/client.ts#emptySnapshot", "empty, read-only type"],
  ["src/services/xds/protocol/delta.ts#emptyDeltaState", "empty, read-only type"],
  ["src/services/xds/protocol/sotw.ts#emptySotwState", "empty, read-only type"],
  ["src/services/xds/model/jwks-input.ts#proxyFetchedJwks", "empty, read-only type"],
  ["src/services/xds/proxygen/routes/destinations.ts#NONE", "empty, read-only type"],
  // Memos over the program's immutable constants.
  ["src/services/ca/der.ts#oidCache", "OIDs of literals in the CA's code: a few dozen, constant"],
  ["src/services/config-model/fast-decode.ts#suspended", "keyed by the kinds' Schema ASTs (constant)"],
  ["src/services/config-model/fast-decode.ts#literalInfo", "keyed by the kinds' Schema ASTs (constant)"],
  ["src/services/config-model/fast-decode.ts#unsupported", "keyed by the kinds' Schema ASTs (constant)"],
  ["src/services/config-model/issues.ts#stripped", "keyed by the kinds' Schema ASTs (constant)"],
  ["src/services/config-model/issues.ts#decoders", "keyed by the kinds' Schemas (constant)"],
  ["src/services/install/crds.ts#specSchemas", "keyed by kind name: one structural schema per kind of the table"],
  [
    "src/services/install/structural-validation.ts#compiled",
    "regexes of the `pattern`s in the kinds' structural schemas (constant)",
  ],
  ["src/services/xds/conformance/pgv.ts#rulesCache", "keyed by protobuf descriptor fields (loaded once, immutable)"],
  // The proto types EnvoyFilter patches are written against: a protobufjs Root filled on demand
  // from the proto files on disk (constant, the same for every server), with the lookups of its
  // names; what it remembers of names that are not types is bounded (MAX_REMEMBERED_MISSES).
  ["src/services/xds/proxygen/envoy-filter/proto-types.ts#loader", "lazily parsed constant proto files"],
  ["src/services/xds/proxygen/envoy-filter/proto-types.ts#codecRoot", "lazily parsed constant proto files"],
  ["src/services/xds/proxygen/envoy-filter/proto-types.ts#codecTypes", "lookups in codecRoot, misses bounded"],
  ["src/services/xds/proxygen/envoy-filter/proto-types.ts#fieldIndex", "keyed by the Root's immutable types"],
  // Pure memos over immutable values, reading nothing else; entries go with their keys.
  [
    "src/services/config-store/snapshot.ts#sortedCache",
    "the sorted list of an immutable snapshot map: a function of the map alone",
  ],
  [
    "src/services/xds/push/updates.ts#headless",
    "the headless set of an input's immutable service list: diffInputs has no context to own it",
  ],
  // One meshctl process per run.
  [
    "src/services/bug-report/glob.ts#compiled",
    "regexes of the globs of one `meshctl bug-report` run (its flags and config): bounded by them",
  ],
  // Tables filled while the module loads.
  ["src/services/config-model/kinds.ts#byGroupKind", "index of the static kind table, built at load"],
  ["src/services/config-model/kinds.ts#byKind", "index of the static kind table, built at load"],
  ["src/services/config-model/kinds.ts#groupAliases", "index of the static kind table, built at load"],
])

const keyOf = (state: ModuleState): string => `${state.file}#${state.name}`
const where = (state: ModuleState): string => `${state.file}:${state.line} ${state.kind} ${state.name}`

describe("module scope under src/services", () => {
  const found = scanTree(process.cwd(), "src/services")

  it("holds no state but the explained entries", () => {
    const unexplained = found.filter((state) => !ALLOWED.has(keyOf(state))).map(where)
    expect(unexplained, "module-scope state: move it into a slot (local-slot.ts) or explain it in ALLOWED").toEqual([])
  })

  it("has no stale allow-list entries", () => {
    const seen = new Set(found.map(keyOf))
    expect([...ALLOWED.keys()].filter((key) => !seen.has(key))).toEqual([])
  })
})

describe("the scan", () => {
  const kinds = (text: string) => scanModuleState("x.ts", text).map((s) => `${s.kind} ${s.name}`)

  it("reports lets, vars and collections made at load", () => {
    expect(
      kinds(`
        let a = 1
        var b = 2
        const memo = new WeakMap<object, string>()
        export const cache = new Map<string, number>()
        const seen = new WeakSet()
        const nested = { byName: new Map() }
        const fromIife = (() => { const inner = new Set<string>(); return (s: string) => inner.add(s) })()
        class C { static readonly empty = new Map(); static { const m = new Set() } }
      `),
    ).toEqual([
      "let a",
      "var b",
      "WeakMap memo",
      "Map cache",
      "WeakSet seen",
      "Map nested",
      "Set inner",
      "Map C.empty",
      "Set m",
    ])
  })

  it("leaves function bodies, instance fields and constant tables alone", () => {
    expect(
      kinds(`
        const f = () => { const m = new Map(); let n = 0; return m.size + n }
        function g() { return new WeakMap() }
        class C { private readonly m = new Map(); method() { return new Set() } }
        const NAMES = new Set(["a", "b"])
        export const TYPES: ReadonlySet<string> = new Set(["x"])
        const BY_LOWER = new Map([["a", "A"]])
        const slot = { make: () => new Map<string, number>() }
      `),
    ).toEqual([])
  })

  it("reports a table that is changed, or exported with a mutable type", () => {
    expect(
      kinds(`
        const filled = new Map([["a", 1]])
        filled.set("b", 2)
        export const open = new Set(["x"])
      `),
    ).toEqual(["Map filled", "Set open"])
  })
})
