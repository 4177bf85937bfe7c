/**
 * Slots: state an owner (a PushContext, a PushContext's input memo, a ResourceCache) keeps on
 * behalf of code that reads through it, so the state lives and dies with its owner instead of in
 * module scope. The code that needs the state declares a slot at module level — a constant key,
 * holding nothing — and asks the owner for its value, which the owner makes on first use:
 *
 *   const plans: LocalSlot<Map<string, OutboundPlan>, PushContext> = { make: () => new Map() }
 *   const byKey = push.local(plans)
 *   const conflicts: LocalSlot<ClusterConflicts, PushContext> = { make: computeConflicts }
 *
 * Two servers in one process, each with its own contexts and cache, share nothing; a context
 * dropped after its push takes its memos with it.
 */
export interface LocalSlot<T, O = void> {
  /** The first value, made from the owner when the slot is first read (whole-value memos use it). */
  readonly make: (owner: O) => T
}

/** An owner's slot values: `locals(slot)` is the owner's value of `slot`, made on first use. */
export type Locals<O = void> = <T>(slot: LocalSlot<T, O>) => T

/** An empty set of slot values for one owner; `owner` gives it to the slots' `make`. */
export const makeLocals = <O = void>(owner: () => O = () => undefined as O): Locals<O> => {
  const values = new Map<LocalSlot<unknown, O>, unknown>()
  return <T>(slot: LocalSlot<T, O>): T => {
    const held = values.get(slot) as T | undefined
    if (held !== undefined || values.has(slot)) return held as T
    const value = slot.make(owner())
    values.set(slot, value)
    return value
  }
}

/** The value of `key` in `memo` (a slot's map), made on first use. */
export const memoOf = <K, V>(
  memo: { get(key: K): V | undefined; set(key: K, value: V): unknown },
  key: K,
  make: () => V,
): V => {
  let value = memo.get(key)
  if (value === undefined) {
    value = make()
    memo.set(key, value)
  }
  return value
}
