/**
 * The `cacerts` Secret of the mesh namespace: either a plugged-in CA (the same keys as the
 * files of ROOT_CA_DIR: ca-cert.pem, ca-key.pem, cert-chain.pem, root-cert.pem — or tls.crt,
 * tls.key, ca.crt), or, with `USE_CACERTS_FOR_SELF_SIGNED_CA`, the store of the self-signed root
 * shared by every replica (Secret type `mesh.io/ca-root`, as the reference marks its own).
 * Secret values are base64 on the wire; this module decodes and encodes them.
 */
import { MESH_DOMAIN } from "../constants.js"
import type { OrchSecret } from "../orchestrator/objects.js"

export const CACERTS_SECRET = "cacerts"
/** The type of a Secret the CA wrote its self-signed root into. */
export const SELF_SIGNED_SECRET_TYPE = `${MESH_DOMAIN}/ca-root`

export const CacertsKeys = {
  caCert: "ca-cert.pem",
  caKey: "ca-key.pem",
  certChain: "cert-chain.pem",
  rootCert: "root-cert.pem",
  /** Not in the reference: the roots kept in the trust bundle after a rotation, with their end dates. */
  retiredRoots: "retired-roots.json",
  /** Not in the reference: a key rotation's new root and key, published before they sign (issue 43). */
  keyRotation: "key-rotation.json",
} as const

/**
 * The Secret beside `cacerts` that keeps a plugged-in CA's change of root across restarts (issue
 * 43): `cacerts` is the operator's and already holds the new CA; the previous one, which signs
 * until every agent has the new root, and the roots retained afterwards live here.
 */
export const pluggedRotationSecretName = (cacerts: string): string => `${cacerts}-rotation`
/** Its type, and the key of its record (JSON). */
export const PLUGGED_ROTATION_SECRET_TYPE = `${MESH_DOMAIN}/ca-rotation`
export const PLUGGED_ROTATION_KEY = "plugged-rotation.json"

export const pluggedRotationSecret = (namespace: string, name: string, json: string): OrchSecret => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace },
  type: PLUGGED_ROTATION_SECRET_TYPE,
  data: encodeSecretData({ [PLUGGED_ROTATION_KEY]: json }),
})

/** The Secret's values as text (undecodable values are dropped). */
export const decodeSecretData = (secret: OrchSecret): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    if (typeof value === "string") out[key] = Buffer.from(value, "base64").toString("utf8")
  }
  return out
}

export const encodeSecretData = (data: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]))

/** Whether the Secret is a self-signed store (as opposed to a plugged-in CA). */
export const isSelfSignedStore = (secret: OrchSecret): boolean => secret.type === SELF_SIGNED_SECRET_TYPE

export interface SecretLayout {
  readonly cert: string
  readonly key: string
  readonly chain: string | undefined
  readonly root: string
}

export type LayoutMatch<L extends SecretLayout> =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Incomplete"; readonly missing: ReadonlyArray<string>; readonly names: ReadonlyArray<string> }
  | { readonly _tag: "Complete"; readonly layout: L }

/**
 * Which plugged layout the keys present make up: the first complete one; else the first with
 * some keys (incomplete, naming the missing keys); else none. The same rule as ROOT_CA_DIR.
 */
export const matchLayout = <L extends SecretLayout>(
  data: Readonly<Record<string, string>>,
  layouts: ReadonlyArray<L>,
): LayoutMatch<L> => {
  const found = layouts
    .map((layout) => {
      const names = [layout.cert, layout.key, ...(layout.chain !== undefined ? [layout.chain] : []), layout.root]
      const present = names.filter((n) => data[n] !== undefined)
      return { layout, names, present, missing: names.filter((n) => data[n] === undefined) }
    })
    .filter((f) => f.present.length > 0)
  const complete = found.find((f) => f.missing.length === 0)
  if (complete !== undefined) return { _tag: "Complete", layout: complete.layout }
  const partial = found[0]
  if (partial !== undefined) return { _tag: "Incomplete", missing: partial.missing, names: partial.names }
  return { _tag: "Absent" }
}

/** The texts of a self-signed store Secret (the reference's keys; the chain is empty for a root). */
export interface SelfSignedSecretTexts {
  readonly rootPem: string
  readonly keyPem: string
  /** Every root to trust: the current one first, then retired ones. */
  readonly trustBundlePem: string
  readonly retiredJson: string
  /** `key-rotation.json`, while a key rotation publishes a new root. */
  readonly pendingJson?: string | undefined
}

export const selfSignedSecret = (namespace: string, name: string, texts: SelfSignedSecretTexts): OrchSecret => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace },
  type: SELF_SIGNED_SECRET_TYPE,
  data: encodeSecretData({
    [CacertsKeys.caCert]: texts.rootPem,
    [CacertsKeys.caKey]: texts.keyPem,
    [CacertsKeys.certChain]: "",
    [CacertsKeys.rootCert]: texts.trustBundlePem,
    [CacertsKeys.retiredRoots]: texts.retiredJson,
    ...(texts.pendingJson !== undefined ? { [CacertsKeys.keyRotation]: texts.pendingJson } : {}),
  }),
})
