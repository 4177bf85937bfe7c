/**
 * The CNI protocol as the `mesh-cni` plugin speaks it (CNI specification 1.0): the command and
 * arguments from the CNI_* environment variables, the spec versions it accepts, its error
 * object (printed on stdout, with a non-zero exit) and the results it prints. Pure.
 */
import { Data, Either } from "effect"

/** Well-known error codes of the CNI specification; 100 and up are the plugin's own. */
export const CniErrorCodes = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  containerUnknown: 3,
  invalidEnvironment: 4,
  ioFailure: 5,
  decodingFailure: 6,
  invalidNetworkConfig: 7,
  tryAgainLater: 11,
  /** The orchestrator answered the pod lookup with a refusal (not found, forbidden, ...). */
  podLookupFailed: 100,
  /** A capture annotation of the pod holds a value the rules cannot take. */
  invalidPodAnnotation: 101,
  /** Programming the capture rules inside the pod's network namespace failed. */
  captureFailed: 102,
  /** A bug (the reference's plugin skeleton reports unexpected errors with this code). */
  internal: 999,
} as const

/** A failure reported to the runtime as the CNI error object. */
export class CniError extends Data.TaggedError("CniError")<{
  readonly code: number
  readonly msg: string
  readonly details?: string
}> {
  override get message(): string {
    return this.details === undefined || this.details === "" ? this.msg : `${this.msg}: ${this.details}`
  }
}

/** The versions whose configurations and results the plugin accepts (as the reference plugins do). */
export const SUPPORTED_VERSIONS = ["0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"] as const
/** The spec version the plugin implements: VERSION reports it, errors without a config carry it. */
export const IMPLEMENTED_VERSION = "1.0.0"

export type CniCommand = "ADD" | "DEL" | "CHECK" | "VERSION"

/** What the runtime passes in the environment (CNI spec "Parameters"). */
export interface CniInvocation {
  readonly command: CniCommand
  readonly containerId: string
  /** Path of the network namespace; may be empty for DEL. */
  readonly netns: string
  readonly ifName: string
  readonly path: string
  /** CNI_ARGS as key/value pairs (K8S_POD_NAME, K8S_POD_NAMESPACE, ...). */
  readonly args: Readonly<Record<string, string>>
}

/** The orchestrator's keys in CNI_ARGS (set by the container runtime for a pod sandbox). */
export const K8sArgs = {
  podName: "K8S_POD_NAME",
  podNamespace: "K8S_POD_NAMESPACE",
  podInfraContainerId: "K8S_POD_INFRA_CONTAINER_ID",
  podUid: "K8S_POD_UID",
} as const

const invalidEnv = (msg: string, details?: string) =>
  new CniError({ code: CniErrorCodes.invalidEnvironment, msg, ...(details === undefined ? {} : { details }) })

/** `K1=V1;K2=V2` (CNI conventions); a pair without `=` is an error, empty pairs are ignored. */
export const parseCniArgs = (text: string): Either.Either<Readonly<Record<string, string>>, CniError> => {
  const args: Record<string, string> = {}
  for (const pair of text.split(";")) {
    if (pair === "") continue
    const eq = pair.indexOf("=")
    if (eq <= 0) return Either.left(invalidEnv("invalid CNI_ARGS", `"${pair}" is not a KEY=VALUE pair`))
    args[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  return Either.right(args)
}

/** Which variables each command requires (as the reference's plugin skeleton checks them). */
const REQUIRED: Record<CniCommand, ReadonlyArray<string>> = {
  ADD: ["CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"],
  CHECK: ["CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"],
  DEL: ["CNI_CONTAINERID", "CNI_IFNAME", "CNI_PATH"],
  VERSION: [],
}

const isCommand = (value: string): value is CniCommand => Object.hasOwn(REQUIRED, value)

export const parseInvocation = (
  env: Readonly<Record<string, string | undefined>>,
): Either.Either<CniInvocation, CniError> => {
  const command = env.CNI_COMMAND ?? ""
  if (command === "") return Either.left(invalidEnv("required env variables [CNI_COMMAND] missing"))
  if (!isCommand(command)) return Either.left(invalidEnv(`unknown CNI_COMMAND: ${command}`))
  const missing = REQUIRED[command].filter((name) => (env[name] ?? "") === "")
  if (missing.length > 0) return Either.left(invalidEnv(`required env variables [${missing.join(",")}] missing`))
  return Either.map(parseCniArgs(env.CNI_ARGS ?? ""), (args) => ({
    command,
    containerId: env.CNI_CONTAINERID ?? "",
    netns: env.CNI_NETNS ?? "",
    ifName: env.CNI_IFNAME ?? "",
    path: env.CNI_PATH ?? "",
    args,
  }))
}

/** Compares dotted versions numerically; missing parts count as 0. */
export const compareVersions = (a: string, b: string): number => {
  const left = a.split(".").map(Number)
  const right = b.split(".").map(Number)
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0)
    if (diff !== 0) return diff
  }
  return 0
}

/** An empty `cniVersion` means 0.1.0 (CNI spec: the field predates versioning). */
export const effectiveVersion = (cniVersion: string | undefined): string =>
  cniVersion === undefined || cniVersion === "" ? "0.1.0" : cniVersion

export const checkVersion = (cniVersion: string, command: CniCommand): Either.Either<string, CniError> => {
  if (!(SUPPORTED_VERSIONS as ReadonlyArray<string>).includes(cniVersion)) {
    return Either.left(
      new CniError({
        code: CniErrorCodes.incompatibleVersion,
        msg: "incompatible CNI versions",
        details: `config is "${cniVersion}", plugin supports [${SUPPORTED_VERSIONS.map((v) => `"${v}"`).join(" ")}]`,
      }),
    )
  }
  // CHECK arrived with spec 0.4.0; older configurations cannot ask for it.
  if (command === "CHECK" && compareVersions(cniVersion, "0.4.0") < 0) {
    return Either.left(
      new CniError({
        code: CniErrorCodes.incompatibleVersion,
        msg: "config version does not allow CHECK",
        details: `cniVersion "${cniVersion}" is older than 0.4.0`,
      }),
    )
  }
  return Either.right(cniVersion)
}

/** The VERSION answer. */
export const versionInfo = (): { readonly cniVersion: string; readonly supportedVersions: ReadonlyArray<string> } => ({
  cniVersion: IMPLEMENTED_VERSION,
  supportedVersions: SUPPORTED_VERSIONS,
})

/** The error object of the spec, in the config's version when known. */
export const errorObject = (
  error: CniError,
  cniVersion: string = IMPLEMENTED_VERSION,
): { readonly cniVersion: string; readonly code: number; readonly msg: string; readonly details?: string } => ({
  cniVersion,
  code: error.code,
  msg: error.msg,
  ...(error.details === undefined || error.details === "" ? {} : { details: error.details }),
})

/**
 * ADD's result: a chained plugin passes the previous result on unchanged (the runtime already
 * gives it in the config's version); alone, the plugin configured nothing and says so.
 */
export const addResult = (cniVersion: string, prevResult: unknown): Record<string, unknown> =>
  typeof prevResult === "object" && prevResult !== null && !Array.isArray(prevResult)
    ? { ...(prevResult as Record<string, unknown>), cniVersion }
    : { cniVersion, dns: {} }

/** The addresses of a result (0.3.0 and later: `ips[].address`; 0.2.0: `ip4`/`ip6`), prefix dropped. */
export const resultAddresses = (result: unknown): ReadonlyArray<string> => {
  if (typeof result !== "object" || result === null) return []
  const record = result as { ips?: unknown; ip4?: { ip?: unknown }; ip6?: { ip?: unknown } }
  const cidrs: Array<string> = []
  if (Array.isArray(record.ips)) {
    for (const ip of record.ips) {
      const address = (ip as { address?: unknown } | null)?.address
      if (typeof address === "string") cidrs.push(address)
    }
  }
  for (const legacy of [record.ip4?.ip, record.ip6?.ip]) if (typeof legacy === "string") cidrs.push(legacy)
  return cidrs.map((cidr) => cidr.split("/")[0]!)
}
