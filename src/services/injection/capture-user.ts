/**
 * A pod that declares the proxy container with its own `securityContext.runAsUser` runs the proxy
 * as that uid, so the capture rules must exempt that uid, not 1337: otherwise the proxy's own
 * outbound traffic is redirected back into itself. The reference's rule: the capture container's
 * `-u` takes the declared uid (never 0, which iptables' owner match cannot mean here); in TPROXY
 * mode the proxy must stay uid 0 (transparent sockets), so a declared runAsUser is reset to 0 there.
 */
import { asObject, type Obj } from "./json.js"
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

export const adjustCaptureUser = (
  inputs: CaptureUserInputs,
): { readonly initContainers: ReadonlyArray<Obj>; readonly proxy: Obj | undefined } => {
  const unchanged = { initContainers: inputs.initContainers, proxy: inputs.proxy }
  const declared = asObject(asObject(inputs.declaredProxy).securityContext)
  const runAsUser = idOf(declared.runAsUser)
  if (runAsUser === undefined && idOf(declared.runAsGroup) === undefined) return unchanged
  if (!inputs.initContainers.some((c) => c.name === ContainerNames.init)) return unchanged
  const proxy =
    inputs.tproxy && runAsUser !== undefined && inputs.proxy !== undefined
      ? { ...inputs.proxy, securityContext: { ...asObject(inputs.proxy.securityContext), runAsUser: 0 } }
      : inputs.proxy
  if (runAsUser === undefined || runAsUser === 0) return { initContainers: inputs.initContainers, proxy }
  const initContainers = inputs.initContainers.map((c) => {
    if (c.name !== ContainerNames.init || !Array.isArray(c.args)) return c
    const args = [...(c.args as ReadonlyArray<unknown>)]
    const at = args.indexOf("-u")
    if (at < 0 || at + 1 >= args.length) return c
    args[at + 1] = String(runAsUser)
    return { ...c, args }
  })
  return { initContainers, proxy }
}
