/**
 * `meshctl x workload group create`, the pure part: the flag lists (`k=v` labels and annotations,
 * `name=port` ports) checked and turned into a WorkloadGroup manifest. Empty fields are left out,
 * as the reference prints them.
 */
import { Either } from "effect"
import { stringify } from "yaml"
import { ApiGroups } from "../constants.js"
import type { Obj } from "../orchestrator/json.js"

export const WORKLOAD_GROUP_API_VERSION = `${ApiGroups.networking}/v1`

/** `k=v` items into a map; `flag` names the flag in the message of a malformed item. */
export const parseKeyValues = (
  flag: string,
  items: ReadonlyArray<string>,
): Either.Either<Readonly<Record<string, string>>, string> => {
  const out: Record<string, string> = {}
  for (const item of items) {
    const eq = item.indexOf("=")
    if (eq <= 0) return Either.left(`${flag}: expected key=value, got "${item}"`)
    out[item.slice(0, eq)] = item.slice(eq + 1)
  }
  return Either.right(out)
}

/** `name=port` items into a map of port numbers (1..65535). */
export const parsePorts = (items: ReadonlyArray<string>): Either.Either<Readonly<Record<string, number>>, string> =>
  Either.flatMap(parseKeyValues("--ports", items), (pairs) => {
    const out: Record<string, number> = {}
    for (const [name, text] of Object.entries(pairs)) {
      const port = Number(text)
      if (!/^\d+$/.test(text) || port < 1 || port > 65535)
        return Either.left(`--ports: port of "${name}" must be a number in 1..65535, got "${text}"`)
      out[name] = port
    }
    return Either.right(out)
  })

/** What `group create` lacks to run: the group's name and namespace. */
export const missingGroupInputs = (flags: { readonly name: string; readonly namespace: string }): string | undefined =>
  flags.name === ""
    ? "expecting a workload group name (--name)"
    : flags.namespace === ""
      ? "expecting a workload group namespace (--namespace/-n)"
      : undefined

export interface WorkloadGroupInput {
  readonly name: string
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  readonly ports: Readonly<Record<string, number>>
  readonly serviceAccount: string
  readonly network: string
  readonly locality: string
  readonly weight: number
}

const nonEmpty = <T extends object>(key: string, value: T): Obj =>
  Object.keys(value).length > 0 ? { [key]: value } : {}
const text = (key: string, value: string): Obj => (value !== "" ? { [key]: value } : {})

export const workloadGroup = (input: WorkloadGroupInput): Obj => ({
  apiVersion: WORKLOAD_GROUP_API_VERSION,
  kind: "WorkloadGroup",
  metadata: { name: input.name, namespace: input.namespace },
  spec: {
    metadata: { ...nonEmpty("labels", input.labels), ...nonEmpty("annotations", input.annotations) },
    template: {
      ...nonEmpty("ports", input.ports),
      ...text("serviceAccount", input.serviceAccount),
      ...text("network", input.network),
      ...text("locality", input.locality),
      ...(input.weight > 0 ? { weight: input.weight } : {}),
    },
  },
})

export const renderWorkloadGroup = (group: Obj): string => stringify(group)
