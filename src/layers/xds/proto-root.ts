/**
 * The protobufjs Root of the xDS protos (XDS_API_PROTO_FILES and the NDS table, with their
 * imports). Parsing the `.proto` text costs about a quarter of a second of CPU at every start of
 * mesh-discovery and mesh-agent, so the build (scripts/build.mjs) writes the parsed Root as JSON
 * next to the bundles (`dist/xds-protos.json`, see scripts/gen-xds-descriptor.ts), and a start
 * reads that instead. The JSON names the files it was made from: it is used only when they are
 * exactly the files asked for (a bundle and a JSON from different builds never mix); otherwise,
 * and when running from src/, the files are parsed.
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, isAbsolute, join } from "node:path"
import { fileURLToPath } from "node:url"
import protobuf from "protobufjs"
import { protoRoot } from "../ca/proto.js"

/** The file the build writes beside the bundles. */
export const XDS_DESCRIPTOR_FILE = "xds-protos.json"

/** What that file holds: the files the Root was parsed from, and the Root's JSON. */
export interface XdsDescriptor {
  readonly files: ReadonlyArray<string>
  readonly root: protobuf.INamespace
}

export const xdsProtoIncludeDirs = (): ReadonlyArray<string> => {
  const root = dirname(createRequire(import.meta.url).resolve("@grpc/grpc-js-xds/package.json"))
  return [
    ...["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((d) => join(root, "deps", d)),
    // The project's own protos (the NDS name table), next to src/ and dist/ alike.
    protoRoot(),
  ]
}

/** Parses the files from the include dirs, as @grpc/proto-loader would (field names kept as written). */
export const parseXdsRoot = (files: ReadonlyArray<string>): protobuf.Root => {
  const root = new protobuf.Root()
  // Last, protobufjs's own folder: google/protobuf/descriptor.proto (imported by the xds
  // annotations), which protobufjs does not bundle and proto-loader registers by itself.
  const dirs = [...xdsProtoIncludeDirs(), dirname(createRequire(import.meta.url).resolve("protobufjs/package.json"))]
  const fallback = root.resolvePath.bind(root)
  root.resolvePath = (origin, target) => {
    if (isAbsolute(target)) return target
    const found = dirs.map((dir) => join(dir, target)).find((path) => existsSync(path))
    return found ?? fallback(origin, target)
  }
  root.loadSync([...files], { keepCase: true })
  root.resolveAll()
  return root
}

/** The descriptor the build writes for these files. */
export const xdsDescriptor = (files: ReadonlyArray<string>): XdsDescriptor => ({
  files,
  root: parseXdsRoot(files).toJSON(),
})

const sameFiles = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((file, i) => file === b[i])

/** Where the build puts the descriptor: beside the bundle (this module, once bundled). */
export const builtDescriptorPath = (): string => join(dirname(fileURLToPath(import.meta.url)), XDS_DESCRIPTOR_FILE)

/** The descriptor at `path`, if there is one made from these files. */
const readDescriptor = (path: string, files: ReadonlyArray<string>): XdsDescriptor | undefined => {
  let descriptor: XdsDescriptor
  try {
    descriptor = JSON.parse(readFileSync(path, "utf8")) as XdsDescriptor
  } catch {
    return undefined
  }
  return Array.isArray(descriptor.files) && sameFiles(descriptor.files, files) ? descriptor : undefined
}

/**
 * The Root of a descriptor, resolved only as far as every type's wire format needs.
 * `Root.fromJSON` also resolves every field of every message type (`resolveAll`), and resolving
 * a field generates its type's constructor: about 600 constructors compiled, most of the cost of
 * the load, for types a process mostly never encodes. Here only the editions features are
 * resolved up front: whether a repeated scalar is packed is inherited from the file down, so it
 * cannot be left to each type. A type's fields are resolved when the type is first used
 * (protobufjs's `Type.setup`, run by its first encode, decode or conversion), which yields the
 * same bytes (test/layers/xds/proto-root.test.ts). As `resolveAll` does, an extension of a type
 * the descriptor lacks is refused here, not at its first use.
 */
export const rootFromDescriptor = (json: protobuf.INamespace): protobuf.Root => {
  const root = new protobuf.Root()
  if (json.options !== undefined) root.setOptions(json.options)
  root.addJSON(json.nested ?? {})
  if (root.deferred.length > 0)
    throw new Error(
      `unresolvable extensions: ${root.deferred.map((field) => `'extend ${field.extend}' in ${field.parent?.fullName}`).join(", ")}`,
    )
  // The Root's own edition (proto2), as `resolveAll` starts from; each file's namespace has its own.
  root._resolveFeaturesRecursive("proto2")
  return root
}

/** The Root of these files: from the build's descriptor when it matches them, else parsed. */
export const loadXdsRoot = (files: ReadonlyArray<string>, descriptorPath = builtDescriptorPath()): protobuf.Root => {
  const built = readDescriptor(descriptorPath, files)
  return built === undefined ? parseXdsRoot(files) : rootFromDescriptor(built.root)
}
