/**
 * ReferenceGrant: an object may refer to one in another namespace (a route to a backend Service,
 * a Gateway to a certificate Secret) only when a ReferenceGrant in the target's namespace allows
 * references from that kind in that namespace to that kind (and, when it names one, that object).
 * References within one namespace need no grant.
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { ReferenceGrantSpec } from "../config-model/schemas/gateway-api/types.js"
import { MESH_NETWORKING_GROUP, MESH_NETWORKING_GROUP_ALIAS } from "./model.js"

/** Groups compared as the API means them: `core` is the empty group; the upstream mesh group is the mesh's. */
export const normaliseGroup = (group: string | undefined): string =>
  group === undefined || group === "core" ? "" : group === MESH_NETWORKING_GROUP_ALIAS ? MESH_NETWORKING_GROUP : group

export interface ReferenceFrom {
  readonly group: string
  readonly kind: string
  readonly namespace: string
}

export interface ReferenceTo {
  readonly group: string
  readonly kind: string
  readonly namespace: string
  readonly name: string
}

export type ReferenceGrants = ReadonlyMap<string, ReadonlyArray<ReferenceGrantSpec>>

/** The grants by the namespace they live in (the namespace they grant access to). */
export const indexReferenceGrants = (grants: ReadonlyArray<ConfigResource<ReferenceGrantSpec>>): ReferenceGrants => {
  const out = new Map<string, Array<ReferenceGrantSpec>>()
  for (const grant of grants) {
    const list = out.get(grant.meta.namespace) ?? []
    list.push(grant.spec)
    out.set(grant.meta.namespace, list)
  }
  return out
}

export const referenceAllowed = (grants: ReferenceGrants, from: ReferenceFrom, to: ReferenceTo): boolean => {
  if (from.namespace === to.namespace) return true
  return (grants.get(to.namespace) ?? []).some(
    (grant) =>
      grant.from.some(
        (f) =>
          normaliseGroup(f.group) === normaliseGroup(from.group) &&
          f.kind === from.kind &&
          f.namespace === from.namespace,
      ) &&
      grant.to.some(
        (t) =>
          normaliseGroup(t.group) === normaliseGroup(to.group) &&
          t.kind === to.kind &&
          (t.name === undefined || t.name === "" || t.name === to.name),
      ),
  )
}
