/**
 * The aggregate registry: several registries seen as one. For a `namespace/hostname` defined by
 * more than one registry, the service of the first registry (in member order) is served and
 * the endpoints of every registry defining it are combined.
 *
 * Members are fixed (`makeAggregateRegistry`) or also added and removed at runtime
 * (`makeDynamicAggregateRegistry`: remote clusters come and go with their Secrets). A member
 * added later comes after every current member, so it never takes a service from them.
 */
import { Effect, ExecutionStrategy, Exit, Scope } from "effect"
import { makeRegistryCore } from "./core.js"
import type { Endpoint, Service } from "./model.js"
import { RegistrySnapshot, type ServiceRegistryShape } from "./registry.js"

export const AGGREGATE_REGISTRY = "Aggregate"

/** Combines snapshots, first registry first. */
export const combineSnapshots = (snapshots: ReadonlyArray<RegistrySnapshot>): RegistrySnapshot => {
  if (snapshots.length === 1 && snapshots[0] !== undefined) return snapshots[0]
  const services = new Map<string, Service>()
  for (const snapshot of snapshots) {
    for (const [key, service] of snapshot.servicesByKey) if (!services.has(key)) services.set(key, service)
  }
  const endpoints = new Map<string, ReadonlyArray<Endpoint>>()
  for (const snapshot of snapshots) {
    for (const [key, list] of snapshot.endpointsByKey) {
      const existing = endpoints.get(key)
      endpoints.set(key, existing === undefined ? list : [...existing, ...list])
    }
  }
  return new RegistrySnapshot(0, services, endpoints)
}

export interface DynamicAggregateOptions {
  /** The registry name in change events; default `Aggregate`. */
  readonly name?: string
  /** Members present from the start, in order; the aggregate is synced once all of them are. */
  readonly members?: ReadonlyArray<ServiceRegistryShape>
  /** Also awaited before the aggregate is synced (remote clusters present at start, say). */
  readonly ready?: Effect.Effect<void>
}

export interface DynamicAggregateRegistry {
  readonly registry: ServiceRegistryShape
  /**
   * Adds a member under `id` after the current ones; an `id` already present is replaced in
   * place (one change event from the old content to the new). Its services appear at once.
   */
  readonly add: (id: string, member: ServiceRegistryShape) => Effect.Effect<void>
  /** Removes a member and everything only it contributed; unknown ids are ignored. */
  readonly remove: (id: string) => Effect.Effect<void>
  /** Current member ids, in order. */
  readonly members: Effect.Effect<ReadonlyArray<string>>
}

interface Member {
  readonly id: string
  snapshot: RegistrySnapshot
  readonly scope: Scope.CloseableScope
}

/**
 * Builds a dynamic aggregate; each member is followed by one fiber (one aggregate event per
 * member event that changes the combined view) living until the member is removed or the
 * scope closes.
 */
export const makeDynamicAggregateRegistry = (
  options: DynamicAggregateOptions = {},
): Effect.Effect<DynamicAggregateRegistry, never, Scope.Scope> =>
  Effect.gen(function* () {
    const name = options.name ?? AGGREGATE_REGISTRY
    const core = yield* makeRegistryCore(name)
    const scope = yield* Effect.scope
    // Members change only inside `core.update`, under the core's lock; `structure` keeps
    // add/remove (which also open and close scopes) one at a time.
    let members: ReadonlyArray<Member> = []
    const structure = yield* Effect.makeSemaphore(1)
    const combined = () => combineSnapshots(members.map((m) => m.snapshot))

    /** Installs members (replacing same ids in place) in one update, then follows each. */
    const attach = (added: ReadonlyArray<readonly [string, ServiceRegistryShape]>) =>
      structure.withPermits(1)(
        Effect.gen(function* () {
          const subscribed = yield* Effect.forEach(added, ([id, registry]) =>
            Effect.gen(function* () {
              const memberScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
              const sub = yield* Scope.extend(registry.subscribe, memberScope)
              const member: Member = { id, snapshot: sub.snapshot, scope: memberScope }
              return { member, events: sub.events }
            }),
          )
          const replaced: Array<Member> = []
          yield* core.update(() => {
            for (const { member } of subscribed) {
              const old = members.find((m) => m.id === member.id)
              if (old === undefined) members = [...members, member]
              else {
                replaced.push(old)
                members = members.map((m) => (m === old ? member : m))
              }
            }
            return combined()
          })
          for (const { member, events } of subscribed) {
            yield* events.take.pipe(
              Effect.flatMap((event) =>
                core.update(() => {
                  member.snapshot = event.snapshot
                  return combined()
                }),
              ),
              Effect.forever,
              // attach is uninterruptible; the follower must not inherit that, or closing hangs.
              Effect.interruptible,
              Effect.forkIn(member.scope),
            )
          }
          yield* Effect.forEach(replaced, (m) => Scope.close(m.scope, Exit.void), { discard: true })
        }).pipe(Effect.uninterruptible),
      )

    const remove = (id: string) =>
      structure.withPermits(1)(
        Effect.gen(function* () {
          const member = members.find((m) => m.id === id)
          if (member === undefined) return
          yield* Scope.close(member.scope, Exit.void)
          yield* core.update(() => {
            members = members.filter((m) => m !== member)
            return combined()
          })
        }).pipe(Effect.uninterruptible),
      )

    const initial = options.members ?? []
    yield* attach(initial.map((registry, index) => [`#${index}`, registry] as const))
    yield* Effect.forEach(initial, (r) => r.awaitSynced, { discard: true }).pipe(
      Effect.zipRight(options.ready ?? Effect.void),
      Effect.zipRight(core.markSynced),
      Effect.forkScoped,
    )
    return {
      registry: { ...core.registry, name },
      add: (id, registry) => attach([[id, registry]]),
      remove,
      members: Effect.sync(() => members.map((m) => m.id)),
    }
  })

/**
 * Builds the aggregate of `registries` (a fixed list); its change events follow theirs (one
 * aggregate event per child event that changes the combined view). The follower fibers live in
 * the scope.
 */
export const makeAggregateRegistry = (
  registries: ReadonlyArray<ServiceRegistryShape>,
): Effect.Effect<ServiceRegistryShape, never, Scope.Scope> =>
  Effect.map(makeDynamicAggregateRegistry({ members: registries }), (aggregate) => aggregate.registry)
