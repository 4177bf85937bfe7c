/**
 * An EnvoyFilter's `configPatches`, compiled once per resource (resources are immutable, so the
 * result is remembered per object): each patch with its value converted from proto JSON to the
 * generators' proto objects (see proto-json.ts) and its proxy-version regex compiled. A patch
 * that cannot apply (no applyTo, no operation, no value, an operation its applyTo does not take,
 * a bad regex, BOOTSTRAP) is dropped with a warning naming the EnvoyFilter and `configPatches[i]`.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { EnvoyFilterSpec } from "../../../config-model/schemas/envoy-filter.js"
import type { ProtoObject } from "../../cache/resource-spec.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { type Problems, protoFromJson } from "./proto-json.js"
import { messageType } from "./proto-types.js"

type ConfigPatchSpec = NonNullable<EnvoyFilterSpec["configPatches"]>[number]
export type ApplyTo = NonNullable<ConfigPatchSpec["applyTo"]>
export type Operation = NonNullable<NonNullable<ConfigPatchSpec["patch"]>["operation"]>
export type PatchContext = "ANY" | "SIDECAR_INBOUND" | "SIDECAR_OUTBOUND" | "GATEWAY"
export type ObjectMatch = NonNullable<ConfigPatchSpec["match"]>

export interface CompiledPatch {
  /** `EnvoyFilter ns/name configPatches[i]`, for warnings. */
  readonly where: string
  readonly applyTo: ApplyTo
  readonly operation: Operation
  readonly context: PatchContext
  readonly match: ObjectMatch
  /** The value as a proto object (snake_case); undefined for REMOVE. */
  readonly value: ProtoObject | undefined
  readonly proxyVersion: RegExp | undefined
}

export interface CompiledFilter {
  readonly patches: ReadonlyArray<CompiledPatch>
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

/** The message type each applyTo's value is. */
export const VALUE_TYPES: Partial<Record<ApplyTo, string>> = {
  LISTENER: "envoy.config.listener.v3.Listener",
  FILTER_CHAIN: "envoy.config.listener.v3.FilterChain",
  NETWORK_FILTER: "envoy.config.listener.v3.Filter",
  LISTENER_FILTER: "envoy.config.listener.v3.ListenerFilter",
  HTTP_FILTER: "envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter",
  ROUTE_CONFIGURATION: "envoy.config.route.v3.RouteConfiguration",
  VIRTUAL_HOST: "envoy.config.route.v3.VirtualHost",
  HTTP_ROUTE: "envoy.config.route.v3.Route",
  CLUSTER: "envoy.config.cluster.v3.Cluster",
  EXTENSION_CONFIG: "envoy.config.core.v3.TypedExtensionConfig",
}

const INSERTS: ReadonlyArray<Operation> = ["INSERT_BEFORE", "INSERT_AFTER", "INSERT_FIRST"]

/** The operations each applyTo takes (the reference's patchers ignore the others). */
const SUPPORTED: Partial<Record<ApplyTo, ReadonlyArray<Operation>>> = {
  LISTENER: ["ADD", "MERGE", "REMOVE", "REPLACE"],
  FILTER_CHAIN: ["ADD", "MERGE", "REMOVE"],
  NETWORK_FILTER: ["ADD", "MERGE", "REMOVE", "REPLACE", ...INSERTS],
  HTTP_FILTER: ["ADD", "MERGE", "REMOVE", "REPLACE", ...INSERTS],
  LISTENER_FILTER: ["ADD", "MERGE", "REMOVE", "REPLACE", ...INSERTS],
  ROUTE_CONFIGURATION: ["MERGE"],
  VIRTUAL_HOST: ["ADD", "MERGE", "REMOVE"],
  HTTP_ROUTE: ["ADD", "MERGE", "REMOVE", ...INSERTS],
  CLUSTER: ["ADD", "MERGE", "REMOVE", "REPLACE"],
  EXTENSION_CONFIG: ["ADD"],
}

const warning = (message: string): GeneratorNotice => ({ level: "warning", scope: "model", message })

/**
 * What is remembered per EnvoyFilter resource object: a PushContext's input memo holds one
 * (`push.memo.local(envoyFilterMemo)`), shared like the views by the contexts built from it.
 */
export interface EnvoyFilterMemo {
  readonly compiled: WeakMap<ConfigResource<EnvoyFilterSpec>, CompiledFilter>
  readonly digests: WeakMap<ConfigResource<EnvoyFilterSpec>, string>
}

export const envoyFilterMemo: LocalSlot<EnvoyFilterMemo> = {
  make: () => ({ compiled: new WeakMap(), digests: new WeakMap() }),
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v)

const compilePatch = (
  where: string,
  cp: ConfigPatchSpec,
  warnings: Array<GeneratorNotice>,
): CompiledPatch | undefined => {
  const applyTo = cp.applyTo ?? "INVALID"
  const operation = cp.patch?.operation ?? "INVALID"
  if (applyTo === "INVALID") {
    warnings.push(warning(`${where}: applyTo is missing or INVALID; patch ignored`))
    return undefined
  }
  if (applyTo === "BOOTSTRAP") {
    warnings.push(
      warning(`${where}: applyTo BOOTSTRAP patches the proxy's bootstrap, which is not served over xDS; patch ignored`),
    )
    return undefined
  }
  if (operation === "INVALID") {
    warnings.push(warning(`${where}: patch.operation is missing or INVALID; patch ignored`))
    return undefined
  }
  if (!(SUPPORTED[applyTo] ?? []).includes(operation)) {
    warnings.push(warning(`${where}: operation ${operation} does not apply to ${applyTo}; patch ignored`))
    return undefined
  }
  const rawValue = cp.patch?.value
  let value: ProtoObject | undefined
  if (operation !== "REMOVE") {
    if (!isPlainObject(rawValue)) {
      warnings.push(warning(`${where}: patch.value is missing or not an object; patch ignored`))
      return undefined
    }
    const problems: Problems = []
    const typeName = VALUE_TYPES[applyTo]
    const t = typeName === undefined ? undefined : messageType(typeName)
    const converted = protoFromJson(rawValue, t, "patch.value", problems)
    for (const problem of problems) warnings.push(warning(`${where}: ${problem}`))
    if (!isPlainObject(converted)) {
      warnings.push(warning(`${where}: patch.value could not be converted; patch ignored`))
      return undefined
    }
    value = converted
  }
  let proxyVersion: RegExp | undefined
  const versionPattern = cp.match?.proxy?.proxyVersion
  if (versionPattern !== undefined && versionPattern !== "") {
    try {
      proxyVersion = new RegExp(versionPattern)
    } catch (e) {
      warnings.push(warning(`${where}: match.proxy.proxyVersion is not a valid regex (${String(e)}); patch ignored`))
      return undefined
    }
  }
  const context = cp.match?.context ?? "ANY"
  if (context === "WAYPOINT") {
    // Validation accepts waypoint patches (the API has them); no proxy here applies them yet.
    warnings.push(warning(`${where}: the WAYPOINT context is not applied by this mesh; patch ignored`))
    return undefined
  }
  return {
    where,
    applyTo,
    operation,
    context,
    match: cp.match ?? {},
    value,
    proxyVersion,
  }
}

/** The compiled patches of one EnvoyFilter (remembered per resource object in `memo` when given). */
export const compileEnvoyFilter = (filter: ConfigResource<EnvoyFilterSpec>, memo?: EnvoyFilterMemo): CompiledFilter => {
  const cached = memo?.compiled.get(filter)
  if (cached !== undefined) return cached
  const warnings: Array<GeneratorNotice> = []
  const patches: Array<CompiledPatch> = []
  const name = `EnvoyFilter ${filter.meta.namespace}/${filter.meta.name}`
  const configPatches = filter.spec.configPatches ?? []
  configPatches.forEach((cp, i) => {
    const where = `${name} configPatches[${i}]`
    try {
      const patch = compilePatch(where, cp, warnings)
      if (patch !== undefined) patches.push(patch)
    } catch (e) {
      // Never let one malformed patch break the proxy's config.
      warnings.push(warning(`${where}: ${String(e)}; patch ignored`))
    }
  })
  const result = { patches, warnings }
  memo?.compiled.set(filter, result)
  return result
}
