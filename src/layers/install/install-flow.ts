/**
 * The steps of an install against a cluster: create the namespace when missing, apply the
 * CustomResourceDefinitions and wait until they are Established, apply the rest in order,
 * prune what the previous install of the revision wrote and no longer renders, then wait for
 * each component's workloads to become ready.
 */
import { Console, Data, Duration, Effect } from "effect"
import {
  anyInstallSelector,
  componentOf,
  describeRef,
  INSTALL_KINDS,
  type InstallPlan,
  pruneSelection,
  refOf,
  revisionSelector,
} from "../../services/install/apply-plan.js"
import { componentTitle, installedLine } from "../../services/install/install-text.js"
import { hasReadiness, notReadyReason } from "../../services/install/readiness.js"
import type { ResolvedOperator } from "../../services/install/resolve.js"
import { asArray, asObject, type Obj } from "../../services/orchestrator/json.js"
import type { InstallCluster, InstallClusterError } from "./cluster.js"

/** How often readiness is polled. */
const POLL = Duration.millis(200)

/** Some objects did not become ready (or Established) in time; the message names them. */
export class InstallTimeout extends Data.TaggedError("InstallTimeout")<{ readonly message: string }> {}

const established = (crd: Obj | undefined): boolean =>
  asArray(asObject(crd?.status).conditions).some(
    (c) => asObject(c).type === "Established" && asObject(c).status === "True",
  )

/** Applies every object of the plan; with `dryRun` the server checks each write and keeps nothing. */
export const applyAll = (cluster: InstallCluster, plan: InstallPlan, dryRun: boolean, deadline: number) =>
  Effect.gen(function* () {
    const namespace = yield* cluster.get(refOf(plan.namespaceObject))
    const namespaceMissing = namespace === undefined
    if (namespaceMissing) {
      yield* cluster.apply(plan.namespaceObject, dryRun)
      yield* Console.log(`${dryRun ? "Would create" : "Created"} namespace ${plan.namespace}`)
    }
    yield* Effect.forEach(plan.crds, (crd) => cluster.apply(crd, dryRun), { concurrency: 8, discard: true })
    if (!dryRun) yield* waitUntil(cluster, plan.crds, (o) => (established(o) ? undefined : "not Established"), deadline)
    // A dry run cannot place objects in a namespace it did not really create.
    const applied = plan.objects.filter((o) => !(dryRun && namespaceMissing && refOf(o).namespace === plan.namespace))
    // Kinds go in order (RBAC before workloads, webhooks last); objects of one kind together.
    for (const group of byKind(applied))
      yield* Effect.forEach(group, (o) => cluster.apply(o, dryRun), { concurrency: 8, discard: true })
    if (dryRun)
      for (const o of [...plan.crds, ...plan.objects]) yield* Console.log(`Would apply ${describeRef(refOf(o))}`)
  })

/** Objects the previous install of this revision wrote that this one no longer renders. */
export const findPruned = (cluster: InstallCluster, op: ResolvedOperator, plan: InstallPlan) =>
  Effect.map(
    Effect.forEach(INSTALL_KINDS, (kind) => cluster.list(kind, revisionSelector(op)), { concurrency: 4 }),
    (lists) => pruneSelection(lists.flat(), plan),
  )

/** Every object any install (any revision) wrote. */
export const findAllInstalled = (cluster: InstallCluster) =>
  Effect.map(
    Effect.forEach(INSTALL_KINDS, (kind) => cluster.list(kind, anyInstallSelector), { concurrency: 4 }),
    (lists) => lists.flat(),
  )

/** Every object one revision's install wrote. */
export const findRevisionInstalled = (cluster: InstallCluster, op: Pick<ResolvedOperator, "revision" | "namespace">) =>
  Effect.map(
    Effect.forEach(INSTALL_KINDS, (kind) => cluster.list(kind, revisionSelector(op)), { concurrency: 4 }),
    (lists) => lists.flat(),
  )

/** Runs of consecutive objects of the same kind. */
const byKind = (objects: ReadonlyArray<Obj>): ReadonlyArray<ReadonlyArray<Obj>> => {
  const groups: Array<Array<Obj>> = []
  for (const o of objects) {
    const last = groups[groups.length - 1]
    if (last !== undefined && last[0]?.kind === o.kind) last.push(o)
    else groups.push([o])
  }
  return groups
}

/** Deletes in the given order, one kind at a time; `onRemoved` runs for each object that existed. */
export const removeAll = (
  cluster: InstallCluster,
  objects: ReadonlyArray<Obj>,
  dryRun: boolean,
  onRemoved: (o: Obj) => Effect.Effect<void>,
) =>
  Effect.forEach(
    byKind(objects),
    (group) =>
      Effect.forEach(group, (o) => cluster.remove(refOf(o), dryRun), { concurrency: 8 }).pipe(
        Effect.flatMap((removed) =>
          Effect.forEach(group, (o, i) => (removed[i] === true ? onRemoved(o) : Effect.void), { discard: true }),
        ),
      ),
    { discard: true },
  )

/** Polls `objects` until `reason` says each is fine; fails at `deadline` naming the ones that are not. */
const waitUntil = (
  cluster: InstallCluster,
  objects: ReadonlyArray<Obj>,
  reason: (live: Obj | undefined) => string | undefined,
  deadline: number,
): Effect.Effect<void, InstallClusterError | InstallTimeout> =>
  Effect.gen(function* () {
    let pending = objects
    while (true) {
      const lives = yield* Effect.forEach(pending, (o) => cluster.get(refOf(o)), { concurrency: 8 })
      const waiting = pending
        .map((o, i) => ({ o, why: lives[i] === undefined ? "not found" : reason(lives[i]) }))
        .filter((w) => w.why !== undefined)
      if (waiting.length === 0) return
      pending = waiting.map((w) => w.o)
      if (Date.now() >= deadline)
        return yield* new InstallTimeout({
          message: `timed out waiting for resources to be ready:\n${waiting.map((w) => `  ${describeRef(refOf(w.o))}: ${w.why}`).join("\n")}`,
        })
      yield* Effect.sleep(POLL)
    }
  })

/** Waits for each component's workloads in turn (up to `timeoutMillis` each), printing a line as each one is ready. */
export const waitForComponents = (cluster: InstallCluster, plan: InstallPlan, timeoutMillis: number) =>
  Effect.forEach(
    plan.components,
    (component) =>
      Effect.gen(function* () {
        const workloads = plan.objects.filter((o) => hasReadiness(o) && componentOf(o) === component)
        const deadline = Date.now() + timeoutMillis
        yield* waitUntil(
          cluster,
          workloads,
          (live) => (live === undefined ? "not found" : notReadyReason(live)),
          deadline,
        ).pipe(
          Effect.tapError((e) =>
            e._tag === "InstallTimeout"
              ? Console.error(`✘ ${componentTitle(component)} encountered an error`)
              : Effect.void,
          ),
        )
        yield* Console.log(installedLine(component))
      }),
    { discard: true },
  )
