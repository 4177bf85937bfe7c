/**
 * The analysis status writer (`PILOT_ENABLE_ANALYSIS`): every `PILOT_ANALYSIS_INTERVAL`, the
 * analysis messages of each orchestrator config object (its validation issues in the config
 * store, the cross-resource analyzer's warnings) are written to its `status.validationMessages`
 * by a merge patch of the status subresource (of the object where that is not served) — only
 * for objects whose messages differ from what they carry, so a quiet mesh costs no writes, and
 * cleared once fixed, including messages an earlier leader wrote. The objects are read from the
 * config store's own informers (same resource and namespace: shared, not a second copy). A
 * failed write is logged and retried on the next round. Meant to run under
 * `LeaderElection.whileLeader`.
 */
import { Duration, Effect } from "effect"
import { desiredMessages, statusPatch } from "../../services/analysis/analysis-status.js"
import { isMeshKind, lookupKind, normaliseGroup } from "../../services/config-model/kinds.js"
import { undefinedSubsetWarnings } from "../../services/config-model/subset-references.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import { ORCHESTRATOR_FILE_PREFIX } from "../../services/config-store/orchestrator-objects.js"
import { withScope } from "../../services/logging/logging.js"
import { OrchestratorClient } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import type { ResourceRef } from "../../services/orchestrator/resources.js"
import { patchStatus } from "./status-patch.js"

export interface AnalysisStatusOptions {
  /** `PILOT_ANALYSIS_INTERVAL`. */
  readonly interval: Duration.DurationInput
  /** The (group, kind, version) the orchestrator config store watches (its `watched`). */
  readonly watched: Effect.Effect<
    ReadonlyArray<{ readonly group: string; readonly kind: string; readonly version: string }>
  >
  /** `MESH_WATCH_NAMESPACE`, as given to the store; empty: every namespace. */
  readonly watchNamespace?: string
  /** `--domain`, for the analyzer's host names; default cluster.local. */
  readonly domainSuffix?: string
}

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("analysis")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("analysis")),
}

type WithStatus = OrchObject & { readonly status?: { readonly validationMessages?: unknown } }

/** Runs until interrupted (leadership lost, shutdown); never fails. */
export const runAnalysisStatus = (
  options: AnalysisStatusOptions,
): Effect.Effect<void, never, ConfigStore | OrchestratorClient | Informers> =>
  Effect.gen(function* () {
    const store = yield* ConfigStore
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const namespace = options.watchNamespace ?? ""
    const interval = Duration.decode(options.interval)
    yield* store.awaitSynced
    yield* log.info(`writing analysis messages to config status every ${Duration.format(interval)}`)

    const write = (ref: ResourceRef, object: WithStatus, patch: unknown) => {
      const { namespace: ns, name } = object.metadata
      return patchStatus(client, ref, ns, name, patch).pipe(
        Effect.catchAll((e) =>
          e.notFound
            ? Effect.void
            : log.warn(`writing the analysis status of ${ref.kind} ${ns ?? ""}/${name} failed: ${e.message}`),
        ),
      )
    }

    const round = Effect.gen(function* () {
      const snapshot = yield* store.snapshot
      const validation = snapshot.issues.filter((i) => i.file.startsWith(ORCHESTRATOR_FILE_PREFIX))
      const warnings = undefinedSubsetWarnings(snapshot.all(), options.domainSuffix ?? "cluster.local")
      const desired = desiredMessages(validation, warnings)
      let written = 0
      for (const w of yield* options.watched) {
        const info = lookupKind(normaliseGroup(w.group), w.kind)
        // Only the mesh's own CRDs have status.validationMessages: another group's CRD (the
        // Gateway API) would drop the field, and every round would write it again.
        if (info === undefined || !isMeshKind(info)) continue
        const ref: ResourceRef = {
          group: w.group,
          version: w.version,
          plural: info.plural,
          kind: w.kind,
          namespaced: true,
        }
        const informer = yield* informers.informer<WithStatus>(ref, namespace === "" ? {} : { namespace })
        if (!(yield* informer.hasSynced)) continue
        for (const object of informer.list()) {
          const messages = desired.get({
            group: w.group,
            kind: w.kind,
            namespace: object.metadata.namespace ?? "",
            name: object.metadata.name,
          })
          const patch = statusPatch(object.status?.validationMessages, messages)
          if (patch === undefined) continue
          yield* write(ref, object, patch)
          written++
        }
      }
      if (written > 0)
        yield* Effect.logDebug(`analysis status written to ${written} object(s)`).pipe(withScope("analysis"))
    })

    for (;;) {
      yield* round
      yield* Effect.sleep(interval)
    }
  })
