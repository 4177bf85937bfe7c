/**
 * Where two snapshots of a list differ: the registry and the config store hand unchanged items
 * over as the same objects at the same places, so a change usually leaves a long common start
 * and end, found by identity, around a short replaced run.
 */

/** The items of `before` and of `after` between their common start and common end. */
export const replacedRun = <T>(
  before: ReadonlyArray<T>,
  after: ReadonlyArray<T>,
): { readonly removed: ReadonlyArray<T>; readonly added: ReadonlyArray<T> } => {
  const shorter = Math.min(before.length, after.length)
  let start = 0
  while (start < shorter && before[start] === after[start]) start++
  let end = 0
  while (end < shorter - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++
  return { removed: before.slice(start, before.length - end), added: after.slice(start, after.length - end) }
}
