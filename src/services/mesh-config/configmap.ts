/**
 * Mesh configuration held in orchestrator ConfigMaps — the pure part. The mesh ConfigMap of the
 * mesh namespace (`mesh`, or `mesh-<REVISION>` for a non-default revision) carries the mesh
 * config under the key `mesh` and the mesh networks under `meshNetworks`; the ConfigMap named
 * by `SHARED_MESH_CONFIG` (same namespace, same keys) carries shared settings the standard
 * config overrides.
 *
 * As in the reference, a missing ConfigMap or key is no error: that source simply contributes
 * nothing, so with every source absent the result is the built-in defaults. Texts are resolved
 * by `resolveMeshConfig` / `parseMeshNetworks`, the rules the file watcher uses, with
 * `configmap <namespace>/<name> key <key>` standing in for the file name in issues.
 */
import { Either } from "effect"
import type { OrchConfigMap } from "../orchestrator/objects.js"
import {
  type Applied,
  defaultMeshNetworks,
  type MeshConfig,
  type MeshConfigSource,
  type MeshNetworks,
  parseMeshNetworks,
  resolveMeshConfig,
} from "./mesh-config.js"

export const MESH_CONFIG_KEY = "mesh"
export const MESH_NETWORKS_KEY = "meshNetworks"
export const DEFAULT_MESH_CONFIGMAP_NAME = "mesh"

/** The mesh ConfigMap's name for a control-plane revision (`REVISION`): `mesh`, or `mesh-<revision>`. */
export const meshConfigMapName = (revision?: string): string =>
  revision === undefined || revision === "" || revision === "default"
    ? DEFAULT_MESH_CONFIGMAP_NAME
    : `${DEFAULT_MESH_CONFIGMAP_NAME}-${revision}`

/** How a ConfigMap key is named where a file name would be (issues, logs). */
export const configMapSourceName = (namespace: string, name: string, key: string): string =>
  `configmap ${namespace}/${name} key ${key}`

/** A ConfigMap as last seen: `configMap` undefined when it does not exist. */
export interface ConfigMapSlot {
  readonly namespace: string
  readonly name: string
  readonly configMap: OrchConfigMap | undefined
}

/** The text under `key`, or undefined when the ConfigMap or the key is absent. */
export const configMapSource = (slot: ConfigMapSlot | undefined, key: string): MeshConfigSource | undefined => {
  const text = slot?.configMap?.data?.[key]
  return slot === undefined || typeof text !== "string"
    ? undefined
    : { file: configMapSourceName(slot.namespace, slot.name, key), text }
}

/**
 * A text source of one of the four inputs: a source to apply, `undefined` when absent (contributes
 * nothing), or `"keep"` when it cannot be read now and the last resolved result must stay.
 */
export type SourceInput = MeshConfigSource | undefined | "keep"

export interface MeshSourceInputs {
  readonly sharedMesh: SourceInput
  readonly standardMesh: SourceInput
  readonly sharedNetworks: SourceInput
  readonly standardNetworks: SourceInput
}

/** The four inputs as ConfigMaps give them. */
export const configMapInputs = (standard: ConfigMapSlot, shared: ConfigMapSlot | undefined): MeshSourceInputs => ({
  sharedMesh: configMapSource(shared, MESH_CONFIG_KEY),
  standardMesh: configMapSource(standard, MESH_CONFIG_KEY),
  sharedNetworks: configMapSource(shared, MESH_NETWORKS_KEY),
  standardNetworks: configMapSource(standard, MESH_NETWORKS_KEY),
})

/** `"keep"`: some input cannot be read; keep the last result (no issues of its own). */
export type Resolved<A> = Applied<A> | "keep"

/** The mesh config: defaults ← shared ← standard (the standard config wins). */
export const resolveMeshInputs = (inputs: MeshSourceInputs): Resolved<MeshConfig> =>
  inputs.sharedMesh === "keep" || inputs.standardMesh === "keep"
    ? "keep"
    : resolveMeshConfig({ shared: inputs.sharedMesh, standard: inputs.standardMesh })

/**
 * The mesh networks: the standard source's when it has any, else the shared source's, else none.
 * Networks are a whole (a map of networks with their gateways), so they are not merged; the
 * standard source wins as it does for the mesh config. (The reference takes the shared
 * ConfigMap's networks first; that contradicts its own precedence for the mesh config, so the
 * mesh does not follow it.)
 */
export const resolveNetworkInputs = (inputs: MeshSourceInputs): Resolved<MeshNetworks> => {
  const source = inputs.standardNetworks ?? inputs.sharedNetworks
  if (source === "keep") return "keep"
  if (source === undefined) return Either.right({ value: defaultMeshNetworks(), warnings: [] })
  return parseMeshNetworks(source.file, source.text)
}
