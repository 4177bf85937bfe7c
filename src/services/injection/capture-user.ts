/**
 * A pod that declares the proxy container with its own `securityContext.runAsUser` runs the proxy
 * as that uid, so the capture rules must exempt that uid, not 1337: otherwise the proxy's own
 * outbound traffic is redirected back into itself. The reference's rule: the capture container's
 * `-u` takes the declared uid (never 0, which iptables' owner match cannot mean here); in TPROXY
 * mode the proxy must stay uid 0 (transparent sockets), so a declared runAsUser is reset to 0 there.
 * Under CNI the validation container also takes the declared uid and gid (outside TPROXY).
 */
import { asObject, type Obj } from "../orchestrator/json.js"
import { ContainerNames } from "./names.js"

const idOf = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined

export interface CaptureUserInputs {
  /** The pod's own declaration of the proxy container (its customisation), if any. */
  readonly declaredProxy: Obj | undefined
  readonly tproxy: boolean
  readonly initContainers: ReadonlyArray<Obj>
  readonly proxy: Obj | undefined
}

const CAPTURE_NAMES: ReadonlyArray<unknown> = [ContainerNames.init, ContainerNames.validation]

export const adjustCaptureUser = (
  inputs: CaptureUserInputs,
): { readonly initContainers: ReadonlyArray<Obj>; readonly proxy: Obj | undefined } => {
  const unchanged = { initContainers: inputs.initContainers, proxy: inputs.proxy }
  const declared = asObject(asObject(inputs.declaredProxy).securityContext)
  const runAsUser = idOf(declared.runAsUser)
  const runAsGroup = idOf(declared.runAsGroup)
  if (runAsUser === undefined && runAsGroup === undefined) return unchanged
  if (!inputs.initContainers.some((c) => CAPTURE_NAMES.includes(c.name))) return unchanged
  const proxy =
    inputs.tproxy && runAsUser !== undefined && inputs.proxy !== undefined
      ? { ...inputs.proxy, securityContext: { ...asObject(inputs.proxy.securityContext), runAsUser: 0 } }
      : inputs.proxy
  const initContainers = inputs.initContainers.map((c) => {
    if (!CAPTURE_NAMES.includes(c.name)) return c
    // The validation container runs as the proxy does (mesh-init stays root: it changes the rules).
    const asProxy =
      c.name === ContainerNames.validation && !inputs.tproxy
        ? {
            securityContext: {
              ...asObject(c.securityContext),
              ...(runAsUser === undefined ? {} : { runAsUser }),
              ...(runAsGroup === undefined ? {} : { runAsGroup }),
            },
          }
        : {}
    return { ...c, ...asProxy, ...exemptUid(c, runAsUser) }
  })
  return { initContainers, proxy }
}

/** `-u` takes the declared uid, unless none or 0 (iptables' owner match cannot mean root here). */
const exemptUid = (container: Obj, runAsUser: number | undefined): Obj => {
  if (runAsUser === undefined || runAsUser === 0 || !Array.isArray(container.args)) return {}
  const args = [...(container.args as ReadonlyArray<unknown>)]
  const at = args.indexOf("-u")
  if (at < 0 || at + 1 >= args.length) return {}
  args[at + 1] = String(runAsUser)
  return { args }
}
