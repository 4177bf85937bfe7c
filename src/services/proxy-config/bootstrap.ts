/**
 * `proxy-config bootstrap` in short form: who the proxy is (node id, cluster, proxy and mesh
 * versions from the node metadata) — the details are in `-o json`/`yaml`.
 */
import { asObject, asString, type Json } from "./dump.js"
import { formatTable } from "./table.js"

const metaField = (metadata: Json | undefined, ...names: ReadonlyArray<string>): string =>
  names.map((n) => asString(metadata?.[n])).find((v) => v !== "") ?? ""

export const bootstrapSummary = (bootstrap: Json): string => {
  const node = asObject(bootstrap.node) ?? {}
  const metadata = asObject(node.metadata)
  const build = asObject(asObject(node.user_agent_build_version)?.version)
  const proxyVersion =
    build === undefined
      ? asString(node.user_agent_version)
      : `${asString(build.major_number) || "0"}.${asString(build.minor_number) || "0"}.${asString(build.patch) || "0"}`
  return formatTable([
    ["NODE ID", "CLUSTER", "PROXY VERSION", "MESH VERSION", "MESH NAMESPACE"],
    [
      asString(node.id),
      asString(node.cluster),
      proxyVersion || "-",
      metaField(metadata, "ISTIO_VERSION", "MESH_VERSION") || "-",
      metaField(metadata, "NAMESPACE") || "-",
    ],
  ])
}
