/**
 * Discovery documents as kubectl and client libraries read them: /version, /api, /apis and
 * the resource list of each group version, built from the registry so that custom resources
 * appear as soon as they are registered.
 */
import { createHash } from "node:crypto"
import { apiVersionOf, type Registry, type ResourceType } from "./resources.js"

export const versionInfo = {
  major: "1",
  minor: "30",
  gitVersion: "v1.30.0",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2024-04-17T00:00:00Z",
  goVersion: "go1.22.2",
  compiler: "gc",
  platform: "linux/amd64",
}

const READ_WRITE = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

export const coreVersions = (serverAddress: string) => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
})

export const groupList = (registry: Registry) => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: [...registry.groups()]
    .filter(([group]) => group !== "")
    .map(([name, versions]) => {
      const entries = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }))
      return { name, versions: entries, preferredVersion: entries[0] }
    }),
})

export const group = (registry: Registry, name: string) => groupList(registry).groups.find((g) => g.name === name)

const entries = (t: ResourceType) => {
  const main = {
    name: t.plural,
    singularName: t.singular,
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: t.createOnly ? ["create"] : READ_WRITE,
    ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
    ...(t.categories.length > 0 ? { categories: t.categories } : {}),
  }
  const status = {
    name: `${t.plural}/status`,
    singularName: "",
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: ["get", "patch", "update"],
  }
  return t.status ? [main, status] : [main]
}

/** The APIResourceList of `/api/v1` or `/apis/<group>/<version>`, or undefined if not served. */
export const resourceList = (registry: Registry, group: string, version: string) => {
  const types = registry.all().filter((t) => t.group === group && t.versions.includes(version))
  if (types.length === 0) return undefined
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: apiVersionOf(group, version),
    resources: types.flatMap(entries),
  }
}

/**
 * The OpenAPI v3 index. kubectl (1.27+) reads it before `apply` to learn whether the server
 * validates fields itself (`fieldValidation` on PATCH); when it does, kubectl skips its
 * client-side validation, which would need the protobuf OpenAPI v2 document.
 */
export const openApiV3Root = (registry: Registry) => ({
  paths: Object.fromEntries(
    [...registry.groups()].flatMap(([group, versions]) =>
      versions.map((version) => {
        const path = group === "" ? `api/${version}` : `apis/${group}/${version}`
        const hash = createHash("sha256")
          .update(JSON.stringify(openApiV3(registry, group, version)))
          .digest("hex")
        return [path, { serverRelativeURL: `/openapi/v3/${path}?hash=${hash.slice(0, 32).toUpperCase()}` }]
      }),
    ),
  ),
})

/** One group version's OpenAPI v3 document: operations only, no schemas (so nothing is validated client-side). */
export const openApiV3 = (registry: Registry, group: string, version: string) => {
  const types = registry.all().filter((t) => t.group === group && t.versions.includes(version))
  if (types.length === 0) return undefined
  const prefix = group === "" ? `/api/${version}` : `/apis/${group}/${version}`
  const query = (name: string) => ({ name, in: "query", schema: { type: "string", uniqueItems: true } })
  const operation = (t: ResourceType, action: string) => ({
    operationId: `${action}${t.kind}`,
    parameters: [query("dryRun"), query("fieldManager"), query("fieldValidation")],
    responses: { "200": { description: "OK" } },
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": { group, version, kind: t.kind },
  })
  const paths: Record<string, unknown> = {}
  for (const t of types) {
    const collection = t.namespaced ? `${prefix}/namespaces/{namespace}/${t.plural}` : `${prefix}/${t.plural}`
    paths[collection] = { post: operation(t, "post") }
    if (!t.createOnly) paths[`${collection}/{name}`] = { put: operation(t, "put"), patch: operation(t, "patch") }
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: versionInfo.gitVersion },
    paths,
    components: { schemas: {} },
  }
}

/** Protobuf wire format, just enough for the document below: length-delimited fields. */
const field = (number: number, payload: Buffer): Buffer => {
  const length: Array<number> = []
  let n = payload.length
  do {
    length.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0))
    n >>>= 7
  } while (n > 0)
  return Buffer.concat([Buffer.from([(number << 3) | 2, ...length]), payload])
}

/**
 * `/openapi/v2` as the protobuf `openapi_v2.Document` kubectl asks for (before 1.27 it knows
 * no v3): swagger "2.0" and an info block, no definitions. kubectl then finds no schema for
 * any kind, so `apply` validates nothing client-side and patches from its compiled-in types.
 */
export const openApiV2Protobuf = (): Buffer =>
  Buffer.concat([
    field(1, Buffer.from("2.0")),
    field(2, Buffer.concat([field(1, Buffer.from("Kubernetes")), field(2, Buffer.from(versionInfo.gitVersion))])),
  ])
