/**
 * Writes src/services/xds/protocol/xds-types.ts: one readonly interface per xDS message the server
 * builds, reachable from the resource types it serves and from every type it puts in an Any, in
 * the shape the generators pass to protobufjs `fromObject` (proto field names, every field
 * optional, enums by name, 64-bit integers as string or number, bytes as Uint8Array or base64,
 * Any inline as `{"@type", ...fields}`). Made from the same Root as the codec, so a field the
 * protos do not have is a compile error instead of being dropped at encode time.
 *   node dist/scripts/gen-xds-types.mjs > src/services/xds/protocol/xds-types.ts
 * test/scripts/xds-types.test.ts fails when the committed file is stale.
 */
import protobuf from "protobufjs"
import { parseXdsRoot } from "../src/layers/xds/proto-root.js"
import { xdsProtoFiles } from "../src/layers/xds/protos.js"
import { XDS_ANY_TYPE_NAMES, XDS_RESOURCE_TYPE_NAMES } from "../src/services/xds/protocol/xds-type-roots.js"
import { SCALAR_KINDS } from "../src/services/xds/proxygen/envoy-filter/proto-json.js"

/** The TypeScript type of each scalar kind, as protobufjs `fromObject` takes it. */
const KIND_TYPES = {
  number: "number",
  // protobufjs takes a Long, a number or a decimal string; the generators pass strings or numbers.
  long: "string | number",
  boolean: "boolean",
  string: "string",
  // protobufjs takes bytes or their base64.
  bytes: "Uint8Array | string",
} as const

const scalarType = (type: string): string => {
  const kind = SCALAR_KINDS[type]
  return kind === undefined ? "unknown" : KIND_TYPES[kind]
}

/** Any is written inline (protobufjs's Any wrapper encodes the named type from the other fields). */
const ANY = ".google.protobuf.Any"

/** Version segments (`v3`, `v1alpha`) say nothing that tells two types apart. */
const isVersion = (segment: string) => /^v\d+(alpha|beta)?\d*$/.test(segment)

const pascal = (segment: string) =>
  segment
    .split("_")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")

/** The type's own name, with enclosing messages (`Cluster_LbSubsetConfig`). */
const localName = (type: protobuf.ReflectionObject): string => {
  const parts: Array<string> = []
  let at: protobuf.ReflectionObject | null = type
  while (at !== null && (at instanceof protobuf.Type || at instanceof protobuf.Enum)) {
    parts.unshift(at.name)
    at = at.parent
  }
  return parts.join("_")
}

/** The package segments of a type, innermost first, versions left out. */
const packageSegments = (type: protobuf.ReflectionObject): ReadonlyArray<string> => {
  let at: protobuf.ReflectionObject | null = type
  while (at !== null && (at instanceof protobuf.Type || at instanceof protobuf.Enum)) at = at.parent
  return (at?.fullName ?? "")
    .split(".")
    .filter((s) => s !== "" && !isVersion(s))
    .reverse()
}

const collect = (root: protobuf.Root): ReadonlyArray<protobuf.Type | protobuf.Enum> => {
  const seen = new Map<string, protobuf.Type | protobuf.Enum>()
  const visit = (type: protobuf.Type | protobuf.Enum) => {
    if (type.fullName === ANY || seen.has(type.fullName)) return
    seen.set(type.fullName, type)
    if (type instanceof protobuf.Type) {
      for (const field of type.fieldsArray) {
        field.resolve()
        if (field.resolvedType !== null) visit(field.resolvedType)
      }
    }
  }
  for (const name of [...XDS_RESOURCE_TYPE_NAMES, ...XDS_ANY_TYPE_NAMES]) {
    visit(root.lookupTypeOrEnum(`.${name}`))
  }
  return [...seen.values()].sort((a, b) => (a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0))
}

/** TypeScript names: the local name, prefixed with package segments only where two types share it. */
const nameTypes = (types: ReadonlyArray<protobuf.Type | protobuf.Enum>): ReadonlyMap<string, string> => {
  const names = new Map<string, string>()
  const groups = new Map<string, Array<protobuf.Type | protobuf.Enum>>()
  for (const type of types) {
    const local = localName(type)
    groups.set(local, [...(groups.get(local) ?? []), type])
  }
  for (const [local, group] of groups) {
    for (let depth = 0; ; depth++) {
      const candidates = group.map((type) =>
        [...packageSegments(type).slice(0, depth).reverse().map(pascal), local].join("_"),
      )
      if (new Set(candidates).size === group.length || depth > 8) {
        for (const [i, type] of group.entries()) names.set(type.fullName, candidates[i]!)
        break
      }
    }
  }
  return names
}

const fieldType = (field: protobuf.Field, names: ReadonlyMap<string, string>): string => {
  const elementType = (): string => {
    const resolved = field.resolvedType
    if (resolved === null) return scalarType(field.type)
    if (resolved.fullName === ANY) return "ProtoAny"
    return names.get(resolved.fullName)!
  }
  const value = elementType()
  if (field instanceof protobuf.MapField) return `Readonly<Record<string, ${value}>>`
  if (field.repeated) return `ReadonlyArray<${value}>`
  return value
}

const quoteKey = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name))

const render = (root: protobuf.Root): string => {
  const types = collect(root)
  const names = nameTypes(types)
  const out: Array<string> = [
    "// Generated by scripts/gen-xds-types.ts from the xDS protos: do not edit.",
    "// Regenerate: node scripts/build.mjs && node dist/scripts/gen-xds-types.mjs > src/services/xds/protocol/xds-types.ts",
    "/* biome-ignore-all lint: generated */",
    "",
    "/**",
    ' * An Any, inline: `{"@type": url, ...fields of that type}` (protobufjs encodes the named type).',
    " * Build it with `typed(url, body)` (typed-any.ts), which checks the body against the URL's type.",
    " */",
    "export interface ProtoAny {",
    '  readonly "@type": string',
    "  readonly [field: string]: unknown",
    "}",
    "",
  ]
  for (const type of types) {
    const name = names.get(type.fullName)!
    out.push(`/** ${type.fullName} */`)
    if (type instanceof protobuf.Enum) {
      const literals = Object.keys(type.values).map((v) => JSON.stringify(v))
      const oneLine = `export type ${name} = ${literals.join(" | ")}`
      if (oneLine.length <= 120) out.push(oneLine)
      else out.push(`export type ${name} =`, ...literals.map((l) => `  | ${l}`))
    } else if (type.fieldsArray.length === 0) {
      out.push(`export type ${name} = Readonly<Record<string, never>>`)
    } else {
      out.push(`export interface ${name} {`)
      for (const field of type.fieldsArray) out.push(`  readonly ${quoteKey(field.name)}?: ${fieldType(field, names)}`)
      out.push("}")
    }
    out.push("")
  }
  out.push("/** The message each type URL names (resource types and Any payloads). */")
  out.push("export interface XdsMessageByTypeUrl {")
  for (const full of [...new Set([...XDS_RESOURCE_TYPE_NAMES, ...XDS_ANY_TYPE_NAMES])].sort()) {
    out.push(`  ${JSON.stringify(`type.googleapis.com/${full}`)}: ${names.get(`.${full}`)}`)
  }
  out.push("}")
  out.push("")
  out.push("/** The resource messages the server serves. */")
  out.push(
    `export type XdsResourceMessage =`,
    ...[...XDS_RESOURCE_TYPE_NAMES].sort().map((full) => `  | ${names.get(`.${full}`)}`),
  )
  return `${out.join("\n")}\n`
}

process.stdout.write(render(parseXdsRoot(xdsProtoFiles)))
