/**
 * A merge patch of an object's `status`: through the status subresource, or on the object itself
 * when its CRD serves none (404 on `/status`). Shared by the controllers that write status.
 */
import { Effect } from "effect"
import type { OrchestratorClientShape, OrchestratorError } from "../../services/orchestrator/client.js"
import { type ResourceRef, resourcePath } from "../../services/orchestrator/resources.js"

export const patchStatus = (
  client: OrchestratorClientShape,
  ref: ResourceRef,
  namespace: string | undefined,
  name: string,
  patch: unknown,
): Effect.Effect<void, OrchestratorError> =>
  client
    .request({
      method: "PATCH",
      path: `${resourcePath(ref, namespace, name)}/status`,
      contentType: "application/merge-patch+json",
      body: patch,
    })
    .pipe(
      Effect.catchIf(
        (e) => e.notFound,
        () => client.mergePatch(ref, namespace, name, patch),
      ),
      Effect.asVoid,
    )
