/**
 * Names and labels of revision tags: a tag is a MutatingWebhookConfiguration labelled
 * `mesh.io/tag=<tag>` and `mesh.io/rev=<revision>`, named `mesh-revision-tag-<tag>` (suffixed
 * with the mesh namespace when that is not `mesh-system`, so that meshes in other namespaces
 * do not collide, as the reference does).
 */
import { Labels, MESH_DOMAIN, SYSTEM_NAMESPACE } from "../constants.js"

export const TAG_LABEL = `${MESH_DOMAIN}/tag`
/** The tag that makes its revision serve the revision-less injection labels and cluster-wide validation. */
export const DEFAULT_TAG = "default"
/** The `mesh.io/rev` value of the revision installed without a revision name. */
export const DEFAULT_REVISION = "default"
export const TAG_WEBHOOK_PREFIX = "mesh-revision-tag"
/** The validating webhook `tag set default` points at the default revision. */
export const DEFAULT_VALIDATOR_NAME = "meshd-default-validator"
/** The injector webhook of a default install, when no webhook carries the revision label. */
export const DEFAULT_INJECTOR_NAME = "mesh-sidecar-injector"
/** A label no namespace or pod carries: a selector on it disables a webhook without deleting it. */
export const DEACTIVATED_LABEL = `${MESH_DOMAIN}/deactivated`

export const tagWebhookName = (tag: string, meshNamespace: string): string =>
  meshNamespace === SYSTEM_NAMESPACE ? `${TAG_WEBHOOK_PREFIX}-${tag}` : `${TAG_WEBHOOK_PREFIX}-${tag}-${meshNamespace}`

/** Label selector of a revision's own injector webhooks (not the tags pointing at it). */
export const revisionWebhookSelector = (revision: string): string => `${Labels.revision}=${revision},!${TAG_LABEL}`

export const tagWebhookSelector = (tag: string): string => `${TAG_LABEL}=${tag}`

/** Label selector of the namespaces a tag (or revision) injects: `mesh.io/rev=<tag>`. */
export const namespacesUsingSelector = (tag: string): string => `${Labels.revision}=${tag}`
