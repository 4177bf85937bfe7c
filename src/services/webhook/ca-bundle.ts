/**
 * The `clientConfig.caBundle` of the mesh's webhook configurations (spec 000 part 1 rule 9,
 * issue 18 item 5): which CA certificates go in it, and the configuration with every webhook's
 * caBundle set to them — or why a configuration cannot be patched. Pure; the controller is
 * src/layers/webhook/ca-bundle-patcher.ts.
 */
import { X509Certificate } from "node:crypto"
import { pemBlocks } from "../ca/x509.js"
import type { OrchObject } from "../orchestrator/objects.js"

/** admissionregistration.k8s.io/v1 Validating/MutatingWebhookConfiguration: only what is patched is typed. */
export interface OrchWebhookConfiguration extends OrchObject {
  readonly webhooks?: ReadonlyArray<{
    readonly name?: string
    readonly clientConfig?: { readonly caBundle?: string; readonly url?: string; readonly service?: unknown }
  }>
}

/**
 * The CA certificates the API server needs to verify the webhook's serving certificate: of the
 * serving material's CA certificates, those that issued a certificate of the served chain (a
 * file-mounted certificate's CA set also carries the mesh's roots for client certificates, which
 * the API server has no business trusting for the webhook). When none is recognised as an issuer
 * (or the PEM cannot be parsed), all of them: a bundle that verifies beats an empty one.
 */
export const servingCaBundle = (material: { readonly clientCaPem: string; readonly certChainPem: string }): string => {
  const cas = pemBlocks(material.clientCaPem, "CERTIFICATE")
  try {
    const chain = pemBlocks(material.certChainPem, "CERTIFICATE").map((pem) => new X509Certificate(pem))
    const issuers = cas.filter((pem) => {
      const ca = new X509Certificate(pem)
      return chain.some(
        (cert) => cert.fingerprint256 === ca.fingerprint256 || (cert.checkIssued(ca) && cert.verify(ca.publicKey)),
      )
    })
    if (issuers.length > 0) return issuers.join("")
  } catch {
    // An unparsable certificate: fall through to the whole set.
  }
  return cas.join("")
}

/** What to do with one configuration for a given caBundle (base64 of the PEM). */
export type CaBundlePlan =
  /** Every webhook already carries it (or there is no webhook). */
  | { readonly _tag: "Current" }
  /** The configuration to write back (PUT with its resourceVersion); `webhooks` counts those changed. */
  | { readonly _tag: "Patch"; readonly object: OrchWebhookConfiguration; readonly webhooks: number }
  /** The object cannot be patched as it is: the field at fault and why. */
  | { readonly _tag: "Malformed"; readonly field: string; readonly reason: string }

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

export const toCaBundle = (pem: string): string => Buffer.from(pem, "utf8").toString("base64")

/** Sets `clientConfig.caBundle` of every webhook to `caBundle`, keeping every other field as it is. */
export const planCaBundle = (config: OrchWebhookConfiguration, caBundle: string): CaBundlePlan => {
  const webhooks: unknown = (config as { webhooks?: unknown }).webhooks
  if (webhooks === undefined || webhooks === null) return { _tag: "Current" }
  if (!Array.isArray(webhooks)) return { _tag: "Malformed", field: "webhooks", reason: "not a list" }
  let changed = 0
  const next: Array<unknown> = []
  for (const [i, webhook] of webhooks.entries()) {
    if (!isRecord(webhook)) return { _tag: "Malformed", field: `webhooks[${i}]`, reason: "not an object" }
    const clientConfig = webhook.clientConfig
    if (!isRecord(clientConfig)) {
      return { _tag: "Malformed", field: `webhooks[${i}].clientConfig`, reason: "missing or not an object" }
    }
    if (clientConfig.caBundle === caBundle) {
      next.push(webhook)
      continue
    }
    changed++
    next.push({ ...webhook, clientConfig: { ...clientConfig, caBundle } })
  }
  if (changed === 0) return { _tag: "Current" }
  return {
    _tag: "Patch",
    object: { ...config, webhooks: next as OrchWebhookConfiguration["webhooks"] & {} },
    webhooks: changed,
  }
}

/**
 * The `reason` label of `mesh_validation_config_update_error`: the API server's Status reason
 * (as the reference labels it) when it is one of the known ones, `Unknown` otherwise, so that
 * network error codes and odd servers cannot grow the metric's series.
 */
export const UPDATE_ERROR_REASONS = [
  "BadRequest",
  "Conflict",
  "Forbidden",
  "InternalError",
  "Invalid",
  "NotFound",
  "ServiceUnavailable",
  "Timeout",
  "TooManyRequests",
  "Unauthorized",
] as const

export const updateErrorReason = (reason: string): string =>
  (UPDATE_ERROR_REASONS as ReadonlyArray<string>).includes(reason) ? reason : "Unknown"
