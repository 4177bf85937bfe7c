/**
 * The Envoy message types EnvoyFilter patches are written against, for turning a patch's proto
 * JSON (camelCase names, `"@type"` Any values) into the generators' proto objects (snake_case
 * names) and for merging with proto semantics (oneofs, maps, repeated fields).
 *
 * The protos come from the same `@grpc/grpc-js-xds` `deps/` folders the xDS codec loads, but
 * through a protobufjs Root of our own, filled lazily: a type is looked up by its full name and,
 * the first time, every `.proto` file of its package folder is parsed (with its imports). Only
 * proxies with EnvoyFilters pay for this, once per process. Reading the proto files is the one
 * I/O here; it is deterministic and its failures degrade to "type unknown" (the caller then
 * falls back to a plain camelCase → snake_case conversion), never to a throw.
 */
import { existsSync, readdirSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import protobuf from "protobufjs"
import { XDS_API_PROTO_FILES } from "../../protocol/proto-files.js"

export type MessageType = protobuf.Type
export type FieldType = protobuf.Field

/**
 * The xDS codec's include dirs, then protobufjs's own folder: it holds the google/protobuf files
 * (descriptor.proto) that protobufjs does not bundle and proto-loader registers by itself.
 */
const includeDirs = (): ReadonlyArray<string> => {
  const dirs: Array<string> = []
  const require = createRequire(import.meta.url)
  try {
    const root = dirname(require.resolve("@grpc/grpc-js-xds/package.json"))
    dirs.push(...["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((d) => join(root, "deps", d)))
  } catch {
    // no xDS protos: every type is unknown
  }
  try {
    dirs.push(dirname(require.resolve("protobufjs/package.json")))
  } catch {
    // descriptor.proto imports stay unresolved
  }
  return dirs
}

/**
 * What this module keeps for the process (the one module-level state of proxygen, see
 * test/structure/module-state.test.ts): a protobufjs Root filled on demand from the proto files
 * on disk, which are constant, so every server of the process reads the same types. Names come
 * from EnvoyFilters (config), so what is remembered about names that are NOT types (a miss) is
 * bounded: after `MAX_REMEMBERED_MISSES` misses a miss is looked up again each time instead.
 */
interface Loader {
  readonly root: protobuf.Root
  readonly dirs: ReadonlyArray<string>
  /** Package folders already parsed (or found missing). */
  readonly loadedPackages: Set<string>
  readonly types: Map<string, MessageType | undefined>
  /** Misses remembered in `loadedPackages`, `types` and the codec's type table. */
  misses: number
}

const MAX_REMEMBERED_MISSES = 1024

let loader: Loader | undefined

/** A protobufjs Root that finds imports in the include dirs. */
const newRoot = (dirs: ReadonlyArray<string>): protobuf.Root => {
  const root = new protobuf.Root()
  root.resolvePath = (_origin, target) => {
    for (const dir of dirs) {
      const candidate = join(dir, target)
      if (existsSync(candidate)) return candidate
    }
    return target
  }
  return root
}

/** Whether a miss (a name that is not a type, or a folder that is not there) may be remembered; counts it. */
const rememberMiss = (l: Loader): boolean => {
  if (l.misses >= MAX_REMEMBERED_MISSES) return false
  l.misses++
  return true
}

const getLoader = (): Loader => {
  if (loader !== undefined) return loader
  const dirs = includeDirs()
  loader = { root: newRoot(dirs), dirs, loadedPackages: new Set(), types: new Map(), misses: 0 }
  return loader
}

/** The types the server's codec knows: those of its files and their imports, parsed once on first use. */
let codecRoot: protobuf.Root | undefined
const codecTypes = new Map<string, boolean>()

/**
 * Whether the xDS server's codec can encode an Any of this type URL itself. A typed config of
 * any other type (one an EnvoyFilter brought in) must reach it already encoded.
 */
export const codecKnowsType = (typeUrl: string): boolean => {
  const known = codecTypes.get(typeUrl)
  if (known !== undefined) return known
  if (codecRoot === undefined) {
    codecRoot = newRoot(getLoader().dirs)
    try {
      codecRoot.loadSync([...XDS_API_PROTO_FILES], { keepCase: true })
    } catch {
      // a file that does not parse: its types count as unknown and are encoded here instead
    }
  }
  let found = false
  try {
    found = codecRoot.lookup(typeUrl.slice(typeUrl.lastIndexOf("/") + 1)) instanceof protobuf.Type
  } catch {
    found = false
  }
  if (found || rememberMiss(getLoader())) codecTypes.set(typeUrl, found)
  return found
}

/**
 * An Any in inline form (`{"@type", ...fields}`, fields by proto name, nested Anys already
 * encoded) as its encoded form `{type_url, value}`, or undefined when the type is unknown or the
 * fields do not fit it.
 */
export const encodeAny = (
  typeUrl: string,
  fields: Readonly<Record<string, unknown>>,
): { readonly type_url: string; readonly value: Buffer } | undefined => {
  const t = messageTypeOfUrl(typeUrl)
  if (t === undefined) return undefined
  try {
    return { type_url: typeUrl, value: Buffer.from(t.encode(t.fromObject(fields)).finish()) }
  } catch {
    return undefined
  }
}

/** `envoy.config.route.v3.RouteAction.HashPolicy` → `envoy/config/route/v3` (package segments are lower case). */
const packageFolder = (fullName: string): string => {
  const segments = fullName.split(".")
  const pkg: Array<string> = []
  for (const segment of segments) {
    const first = segment.charAt(0)
    if (first !== first.toLowerCase() || first === "") break
    pkg.push(segment)
  }
  return pkg.join("/")
}

const loadPackage = (l: Loader, folder: string): void => {
  if (l.loadedPackages.has(folder)) return
  const present = l.dirs.filter((dir) => existsSync(join(dir, folder)))
  if (present.length > 0 || rememberMiss(l)) l.loadedPackages.add(folder)
  const files: Array<string> = []
  for (const dir of present) {
    const path = join(dir, folder)
    try {
      for (const entry of readdirSync(path).sort()) if (entry.endsWith(".proto")) files.push(join(folder, entry))
    } catch {
      // unreadable folder: its types stay unknown
    }
  }
  for (const file of files) {
    try {
      l.root.loadSync(file, { keepCase: true })
    } catch {
      // a file that does not parse leaves its types unknown; the others still load
    }
  }
  try {
    l.root.resolveAll()
  } catch {
    // unresolvable references in some file: lookups of the types that did resolve still work
  }
}

/** The message type of a full name (`envoy.config.listener.v3.Listener`), or undefined. */
export const messageType = (fullName: string): MessageType | undefined => {
  const l = getLoader()
  if (l.types.has(fullName)) return l.types.get(fullName)
  let found: MessageType | undefined
  const lookup = (): MessageType | undefined => {
    try {
      const t = l.root.lookup(fullName)
      return t instanceof protobuf.Type ? resolved(t) : undefined
    } catch {
      return undefined
    }
  }
  found = lookup()
  if (found === undefined && fullName.startsWith("google.protobuf.")) {
    // Well-known types ship with protobufjs; load their file by its bundled name.
    try {
      l.root.loadSync(`google/protobuf/${wellKnownFile(fullName)}.proto`, { keepCase: true })
    } catch {
      // unknown well-known type
    }
    found = lookup()
  }
  if (found === undefined) {
    loadPackage(l, packageFolder(fullName))
    found = lookup()
  }
  if (found !== undefined || rememberMiss(l)) l.types.set(fullName, found)
  return found
}

/** The message type an Any's type URL names (`type.googleapis.com/<full name>`). */
export const messageTypeOfUrl = (typeUrl: string): MessageType | undefined => {
  const name = typeUrl.slice(typeUrl.lastIndexOf("/") + 1)
  return name === "" ? undefined : messageType(name)
}

const wellKnownFile = (fullName: string): string => {
  const name = fullName.slice("google.protobuf.".length)
  if (name.endsWith("Value") && name !== "Value" && name !== "ListValue") return "wrappers"
  const files: Record<string, string> = {
    Any: "any",
    Duration: "duration",
    Timestamp: "timestamp",
    Struct: "struct",
    Value: "struct",
    ListValue: "struct",
    Empty: "empty",
    FieldMask: "field_mask",
  }
  return files[name] ?? name.toLowerCase()
}

const resolved = (t: protobuf.Type): protobuf.Type => {
  try {
    t.resolveAll()
  } catch {
    // fields whose types do not resolve are treated as untyped
  }
  return t
}

/** The full name of a type without protobufjs's leading dot. */
export const fullNameOf = (t: protobuf.ReflectionObject): string =>
  t.fullName.startsWith(".") ? t.fullName.slice(1) : t.fullName

export const isMessageType = (t: unknown): t is MessageType => t instanceof protobuf.Type
export const isEnumType = (t: unknown): t is protobuf.Enum => t instanceof protobuf.Enum

/** The proto3 JSON name of a proto field name: lowerCamelCase. */
export const jsonName = (protoName: string): string =>
  protoName.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())

/** The fallback when no type is known: `fooBarBaz` → `foo_bar_baz` (already snake names unchanged). */
export const camelToSnake = (name: string): string =>
  name.startsWith("@")
    ? name
    : name
        .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
        .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
        .toLowerCase()

const fieldIndex = new WeakMap<MessageType, Map<string, FieldType>>()

/** A field of `t` by its proto name or its JSON (lowerCamelCase) name. */
export const fieldOf = (t: MessageType, name: string): FieldType | undefined => {
  let index = fieldIndex.get(t)
  if (index === undefined) {
    index = new Map()
    for (const f of t.fieldsArray) index.set(jsonName(f.name), f)
    for (const f of t.fieldsArray) index.set(f.name, f)
    fieldIndex.set(t, index)
  }
  return index.get(name)
}

/** The members of the real (non-synthetic) oneof a field belongs to, else empty. */
export const oneofSiblings = (f: FieldType): ReadonlyArray<string> => {
  const oneof = f.partOf
  if (oneof === null || oneof === undefined) return []
  // proto3 `optional` fields are a synthetic oneof of one member, named `_<field>`.
  if (oneof.fieldsArray.length === 1 && oneof.name.startsWith("_")) return []
  return oneof.fieldsArray.map((m) => m.name).filter((n) => n !== f.name)
}
