/**
 * A node proxy's admin `/config_dump` (the reference's ztunnel): a JSON object with `workloads`,
 * `services`, `policies` and `certificates` (each a list, or a map whose values are the entries,
 * as older node proxies print them) and `workloadState` (workload UID → its identity and
 * connections). Only the fields the tables read are interpreted; the rest travels untouched for
 * `-o json|yaml`.
 */
import { Either } from "effect"
import { asObject, asObjects, type Json } from "./dump.js"

export interface NodeProxyDump {
  readonly raw: Json
  readonly workloads: ReadonlyArray<Json>
  readonly services: ReadonlyArray<Json>
  readonly policies: ReadonlyArray<Json>
  readonly certificates: ReadonlyArray<Json>
  /** workloadState's entries (the reference reads `workloadstate` case-insensitively, as Go's JSON does). */
  readonly workloadState: ReadonlyArray<Json>
}

const SECTIONS = ["workloads", "services", "policies", "certificates"] as const

/** A list, or the values of a map (the reference accepts both). */
const listOrMap = (v: unknown): ReadonlyArray<Json> =>
  Array.isArray(v) ? asObjects(v) : asObjects(Object.values(asObject(v) ?? {}))

/** The value of `key` in `raw`, matching the key without regard to case (Go's encoding/json). */
const field = (raw: Json, key: string): unknown => {
  if (Object.hasOwn(raw, key)) return raw[key]
  const lower = key.toLowerCase()
  const found = Object.keys(raw).find((k) => k.toLowerCase() === lower)
  return found === undefined ? undefined : raw[found]
}

/** Parses a node proxy dump's text; the error says why it is not one. */
export const parseNodeProxyDump = (text: string): Either.Either<NodeProxyDump, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    return Either.left(`not JSON: ${(e as Error).message}`)
  }
  const raw = asObject(parsed)
  if (raw === undefined || ![...SECTIONS, "workloadState"].some((key) => field(raw, key) !== undefined)) {
    return Either.left(
      'not a node proxy config dump: none of "workloads", "services", "policies", "certificates", "workloadState" (expected the node proxy admin /config_dump output)',
    )
  }
  if (Array.isArray(raw.configs)) {
    return Either.left('not a node proxy config dump: it has "configs", as a sidecar proxy\'s dump (use proxy-config)')
  }
  return Either.right({
    raw,
    workloads: listOrMap(field(raw, "workloads")),
    services: listOrMap(field(raw, "services")),
    policies: listOrMap(field(raw, "policies")),
    certificates: listOrMap(field(raw, "certificates")),
    workloadState: asObjects(Object.values(asObject(field(raw, "workloadState")) ?? {})),
  })
}
