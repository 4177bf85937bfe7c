/**
 * The ADS wire messages in the object form the gRPC layer exchanges (field names as in the
 * .proto, `keepCase`). Resources travel as `Any` ({ type_url, value }) whose bytes were encoded
 * once per distinct resource.
 */

export interface Locality {
  readonly region?: string
  readonly zone?: string
  readonly sub_zone?: string
}

export interface Node {
  readonly id?: string
  readonly cluster?: string
  /** google.protobuf.Struct in plain-object form. */
  readonly metadata?: Readonly<Record<string, unknown>>
  readonly locality?: Locality
  readonly user_agent_name?: string
}

export interface Status {
  readonly code?: number
  readonly message?: string
}

export interface AnyMessage {
  readonly type_url: string
  readonly value: Uint8Array
}

export interface DiscoveryRequest {
  readonly version_info?: string
  readonly node?: Node | null
  readonly resource_names?: ReadonlyArray<string>
  readonly type_url?: string
  readonly response_nonce?: string
  readonly error_detail?: Status | null
}

export interface DiscoveryResponse {
  readonly version_info: string
  readonly resources: ReadonlyArray<AnyMessage>
  readonly type_url: string
  readonly nonce: string
}

export interface DeltaDiscoveryRequest {
  readonly node?: Node | null
  readonly type_url?: string
  readonly resource_names_subscribe?: ReadonlyArray<string>
  readonly resource_names_unsubscribe?: ReadonlyArray<string>
  readonly initial_resource_versions?: Readonly<Record<string, string>>
  readonly response_nonce?: string
  readonly error_detail?: Status | null
}

export interface DeltaResource {
  readonly name: string
  readonly version: string
  readonly resource: AnyMessage
}

export interface DeltaDiscoveryResponse {
  readonly system_version_info: string
  readonly resources: ReadonlyArray<DeltaResource>
  readonly type_url: string
  readonly removed_resources: ReadonlyArray<string>
  readonly nonce: string
}

/** An error_detail is what makes a request a NACK (never the version). */
export const isNack = (request: { readonly error_detail?: Status | null }): boolean =>
  request.error_detail !== undefined && request.error_detail !== null

// google.protobuf.Struct as proto-loader exchanges it: { fields: { key: { <kind>: value } } }

type StructValue = Readonly<Record<string, unknown>>

// protobufjs defines the well-known Struct types itself, with camelCase field names.
const pick = (value: StructValue, camel: string, snake: string): unknown => {
  const v = value[camel] ?? value[snake]
  return v === null ? undefined : v
}

const fromValue = (value: StructValue | undefined): unknown => {
  if (value === undefined || value === null) return null
  const string = pick(value, "stringValue", "string_value")
  if (string !== undefined) return string
  const number = pick(value, "numberValue", "number_value")
  if (number !== undefined) return number
  const bool = pick(value, "boolValue", "bool_value")
  if (bool !== undefined) return bool
  const struct = pick(value, "structValue", "struct_value")
  if (struct !== undefined) return structToPlain(struct)
  const list = pick(value, "listValue", "list_value") as { values?: ReadonlyArray<StructValue> } | undefined
  if (list !== undefined) return (list.values ?? []).map(fromValue)
  return null
}

/** Struct (wire object form) → plain object; a plain object passes through. */
export const structToPlain = (struct: unknown): Record<string, unknown> => {
  if (typeof struct !== "object" || struct === null) return {}
  const fields = (struct as { fields?: Readonly<Record<string, StructValue>> }).fields
  if (fields === undefined) return { ...(struct as Record<string, unknown>) }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(fields)) out[k] = fromValue(v)
  return out
}

const toValue = (value: unknown): StructValue => {
  if (value === null || value === undefined) return { nullValue: "NULL_VALUE" }
  if (typeof value === "string") return { stringValue: value }
  if (typeof value === "number") return { numberValue: value }
  if (typeof value === "boolean") return { boolValue: value }
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } }
  return { structValue: plainToStruct(value as Record<string, unknown>) }
}

/** Plain object → Struct (wire object form). */
export const plainToStruct = (
  plain: Readonly<Record<string, unknown>>,
): { readonly fields: Record<string, StructValue> } => {
  const fields: Record<string, StructValue> = {}
  for (const [k, v] of Object.entries(plain)) fields[k] = toValue(v)
  return { fields }
}
