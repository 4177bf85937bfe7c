/**
 * Customising injection, as the reference documents it: a pod (or gateway deployment) may
 * declare its own container named like an injected one (`mesh-proxy`, `mesh-init`); its fields
 * are merged over the generated container — objects key by key, `env` by name, `volumeMounts`
 * by mount path, `ports` by container port, other lists replaced — and `image: auto` keeps the
 * injected image. The declared container is not an application container.
 */
import { asArray, isObject, type Obj } from "../orchestrator/json.js"

/** The image value that means "the injector's image" (an image is mandatory in a container). */
export const AUTO_IMAGE = "auto"

const MERGE_KEYS: Readonly<Record<string, string>> = { env: "name", volumeMounts: "mountPath", ports: "containerPort" }

const mergeList = (base: unknown, over: ReadonlyArray<unknown>, key: string): ReadonlyArray<unknown> => {
  const out: Array<unknown> = [...asArray(base)]
  for (const item of over) {
    const at = isObject(item) ? out.findIndex((b) => isObject(b) && b[key] === item[key]) : -1
    if (at >= 0) out[at] = mergeValue(out[at], item)
    else out.push(item)
  }
  return out
}

const mergeValue = (base: unknown, over: unknown): unknown => {
  if (isObject(base) && isObject(over)) {
    const out: Obj = { ...base }
    for (const [key, value] of Object.entries(over)) {
      const listKey = MERGE_KEYS[key]
      out[key] =
        listKey !== undefined && Array.isArray(value)
          ? mergeList(base[key], value, listKey)
          : mergeValue(base[key], value)
    }
    return out
  }
  return over === undefined ? base : over
}

/** The generated container with the pod's declared one merged over it. */
export const customizeContainer = (generated: Obj, declared: Obj | undefined): Obj => {
  if (declared === undefined) return generated
  const { image, ...rest } = declared
  const merged = mergeValue(generated, rest) as Obj
  return image === undefined || image === AUTO_IMAGE ? merged : { ...merged, image }
}
