/**
 * The `sidecar.mesh.io/status` annotation: what injection added (init containers, containers,
 * volumes, image pull secrets, by name) and which revision did it. Its presence marks the pod as
 * injected; tools (and the CNI repair controller) read it.
 */

export interface InjectionStatus {
  readonly initContainers: ReadonlyArray<string>
  readonly containers: ReadonlyArray<string>
  readonly volumes: ReadonlyArray<string>
  readonly imagePullSecrets: ReadonlyArray<string>
  readonly revision: string
}

/** Field order as the reference writes it. */
export const renderStatus = (status: InjectionStatus): string =>
  JSON.stringify({
    initContainers: status.initContainers,
    containers: status.containers,
    volumes: status.volumes,
    imagePullSecrets: status.imagePullSecrets,
    revision: status.revision,
  })

const names = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

/** Reads a status annotation; undefined when it is not the JSON object this module writes. */
export const parseStatus = (text: string): InjectionStatus | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const v = value as Record<string, unknown>
  return {
    initContainers: names(v.initContainers),
    containers: names(v.containers),
    volumes: names(v.volumes),
    imagePullSecrets: names(v.imagePullSecrets),
    revision: typeof v.revision === "string" ? v.revision : "",
  }
}
