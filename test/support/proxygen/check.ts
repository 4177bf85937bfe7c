/**
 * The conformance check of generated proxy resources, for tests: the data-plane proxy's protos
 * loaded once (the whole v3 Envoy API with every extension whose imports resolve, the xds/udpa
 * protos and the project's own `proto/`), then for each resource (1) its proto shape, (2) its
 * `validate.rules`, and (3) a round trip through the server's real codec (`loadXdsProtos`) that
 * must give back what went in.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
// Importing proto-loader registers google/protobuf/descriptor.proto, which the annotations import.
import "@grpc/proto-loader"
import protobuf from "protobufjs"
import { loadXdsProtos, xdsProtoIncludeDirs } from "../../../src/layers/xds/protos.js"
import type { XdsCodecShape } from "../../../src/services/xds/cache/resource-cache.js"
import type { ProtoObject } from "../../../src/services/xds/cache/resource-spec.js"
import { pgvProblems } from "../../../src/services/xds/conformance/pgv.js"
import { protoShapeProblems } from "../../../src/services/xds/conformance/proto-shape.js"
import { anyType, formatProblem, type Problem } from "../../../src/services/xds/conformance/reflect.js"
import { roundTripProblems } from "../../../src/services/xds/conformance/round-trip.js"
import { ROOT } from "../processes.js"

const includeDirs = (): ReadonlyArray<string> => [...xdsProtoIncludeDirs(), join(ROOT, "proto")]

const protoFilesUnder = (dir: string): Array<string> => {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".proto"))
    .map((f) => join(dir, f))
}

const IMPORT = /^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;/gm

/**
 * The files to load: every non-v2 file of the Envoy API and every file of the project's
 * `proto/`, keeping only those whose imports (transitively) exist, so loading never trips over
 * the API's dangling references to protos it does not ship (opencensus, prometheus, ...).
 */
export const envoyProtoFiles = (): ReadonlyArray<string> => {
  const dirs = includeDirs()
  const resolve = (name: string): string | undefined =>
    name.startsWith("google/protobuf/") ? "builtin" : dirs.map((d) => join(d, name)).find((p) => existsSync(p))
  const ok = new Map<string, boolean>()
  const resolvable = (name: string): boolean => {
    const known = ok.get(name)
    if (known !== undefined) return known
    ok.set(name, true) // import cycles: assume fine while visiting
    const path = resolve(name)
    let good = path !== undefined
    if (good && path !== "builtin")
      for (const m of readFileSync(path!, "utf8").matchAll(IMPORT)) if (!resolvable(m[1]!)) good = false
    ok.set(name, good)
    return good
  }
  const [envoyApi] = dirs
  const candidates = [
    ...protoFilesUnder(join(envoyApi!, "envoy"))
      .map((p) => relative(envoyApi!, p))
      .filter((p) => !/\/v2(alpha\d*)?\//.test(p)),
    ...protoFilesUnder(join(ROOT, "proto")).map((p) => relative(join(ROOT, "proto"), p)),
  ]
  return candidates.filter(resolvable).sort()
}

let root: protobuf.Root | undefined

/** The protobufjs Root of every loadable Envoy v3 proto (field names as in the .proto files). */
export const envoyRoot = (): protobuf.Root => {
  if (root !== undefined) return root
  const r = new protobuf.Root()
  const dirs = includeDirs()
  r.resolvePath = (_origin, target) => {
    if (target.startsWith("/")) return target
    return dirs.map((d) => join(d, target)).find((p) => existsSync(p)) ?? target
  }
  r.loadSync([...envoyProtoFiles()], { keepCase: true })
  r.resolveAll()
  root = r
  return r
}

/** The .proto file (relative to its include dir) that defines a type URL's message, if any. */
export const protoFileOf = (typeUrl: string): string | undefined => {
  const file = anyType(envoyRoot(), typeUrl)?.filename ?? undefined
  if (file === undefined || file === null) return undefined
  const dir = includeDirs().find((d) => file.startsWith(`${d}/`))
  return dir === undefined ? file : relative(dir, file)
}

/** Decodes a resource with the full Envoy tree (Any values expanded with `"@type"`). */
export const decodeResource = (typeUrl: string, bytes: Uint8Array): ProtoObject => {
  const type = anyType(envoyRoot(), typeUrl)
  if (type === undefined) throw new Error(`unknown resource type ${typeUrl}`)
  return type.toObject(type.decode(bytes), {
    longs: String,
    enums: String,
    bytes: String,
    json: true,
    defaults: false,
  }) as ProtoObject
}

export interface CheckOptions {
  /** The codec of the round trip; the server's (`loadXdsProtos().codec`) by default, false for none. */
  readonly codec?: XdsCodecShape | false
}

/** (1) shape and (2) validate.rules problems of a resource, as `path: message` lines. */
export const staticProblems = (typeUrl: string, resource: unknown): ReadonlyArray<Problem> => {
  const shape = protoShapeProblems(envoyRoot(), typeUrl, resource)
  return [...shape, ...pgvProblems(envoyRoot(), typeUrl, resource)]
}

/**
 * Everything the data-plane proxy (or the codec on the way to it) would object to in one
 * resource: shape, validate.rules, and the round trip through the codec. Empty when conformant.
 */
export const checkResource = (
  typeUrl: string,
  /** A built message (typed or not). */
  resource: object,
  options: CheckOptions = {},
): ReadonlyArray<string> => {
  const problems: Array<Problem> = [...staticProblems(typeUrl, resource)]
  const codec = options.codec === undefined ? loadXdsProtos().codec : options.codec
  if (codec !== false) {
    try {
      const decoded = codec.decode(typeUrl, codec.encode(typeUrl, resource))
      problems.push(
        ...roundTripProblems(envoyRoot(), typeUrl, resource, decoded).map((p) => ({
          ...p,
          message: `round trip: ${p.message}`,
        })),
      )
    } catch (cause) {
      problems.push({ path: "", message: `the codec cannot encode it: ${String(cause)}` })
    }
  }
  return problems.map(formatProblem)
}

const nameOf = (resource: object, i: number): string => {
  const fields = resource as ProtoObject
  const name = fields.name ?? fields.cluster_name
  return typeof name === "string" && name !== "" ? name : `#${i}`
}

/** Throws, listing every problem by resource name, unless every resource is conformant. */
export const expectConformant = (
  typeUrl: string,
  resources: ReadonlyArray<object>,
  options: CheckOptions = {},
): void => {
  const lines = resources.flatMap((r, i) => checkResource(typeUrl, r, options).map((p) => `${nameOf(r, i)}: ${p}`))
  if (lines.length > 0) throw new Error(`${lines.length} conformance problem(s) in ${typeUrl}:\n${lines.join("\n")}`)
}
