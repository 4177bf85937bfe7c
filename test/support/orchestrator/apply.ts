/**
 * Server-side apply, simplified: each field manager's last applied configuration is
 * remembered; a new apply first removes what that manager applied before and no longer
 * applies (so a label or a field dropped from the configuration disappears), then lays the
 * new configuration over the live object. Maps merge key by key; lists are atomic (the real
 * server merges some lists by key, which a single manager does not notice).
 */
type Dict = Record<string, unknown>
const isDict = (v: unknown): v is Dict => typeof v === "object" && v !== null && !Array.isArray(v)

/** `live` without the fields `before` set and `after` no longer sets. */
export const withoutDropped = (live: unknown, before: unknown, after: unknown): unknown => {
  if (!isDict(live) || !isDict(before)) return live
  const out: Dict = { ...live }
  for (const key of Object.keys(before)) {
    if (!isDict(after) || !(key in after)) delete out[key]
    else if (isDict(before[key]) && isDict(after[key])) out[key] = withoutDropped(out[key], before[key], after[key])
  }
  return out
}

/** `config` laid over `live`: maps recursively, everything else replaced. */
export const applyOver = (live: unknown, config: unknown): unknown => {
  if (!isDict(live) || !isDict(config)) return structuredClone(config)
  const out: Dict = { ...live }
  for (const [key, value] of Object.entries(config)) out[key] = applyOver(out[key], value)
  return out
}

/** The object after `manager` applies `config`, given what it applied last time (if anything). */
export const serverSideApply = (live: unknown, previousConfig: unknown, config: unknown): unknown =>
  applyOver(previousConfig === undefined ? live : withoutDropped(live, previousConfig, config), config)
