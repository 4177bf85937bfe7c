/**
 * Says the cross-resource config warnings (subset-references.ts: a VirtualService destination
 * whose subset no DestinationRule defines) of the inputs the ADS server follows: each finding
 * once, when it first appears, at warning in scope `analysis`. The config is served as it is —
 * these are the reference analyzer's warnings, not validation errors — but a proxyless client
 * fails every request routed to such a subset, so the server must not stay silent about it.
 * `/debug/config_warnings` shows the current ones.
 */
import { Effect, Stream } from "effect"
import { formatWarning, undefinedSubsetWarnings } from "../../services/config-model/subset-references.js"
import { withScope } from "../../services/logging/logging.js"
import type { PushContextInput } from "../../services/xds/model/push-context.js"

export const logConfigWarnings =
  (domainSuffix: string) =>
  <E, R>(inputs: Stream.Stream<PushContextInput, E, R>): Stream.Stream<PushContextInput, E, R> =>
    Stream.suspend(() => {
      let said = new Set<string>()
      let checked: PushContextInput | undefined
      return inputs.pipe(
        Stream.tap((input) => {
          // Registry events hand the same config over: only a config change is checked again.
          if (
            checked !== undefined &&
            checked.virtualServices === input.virtualServices &&
            checked.destinationRules === input.destinationRules
          )
            return Effect.void
          checked = input
          const texts = undefinedSubsetWarnings(
            [...input.virtualServices, ...input.destinationRules],
            domainSuffix,
          ).map(formatWarning)
          const fresh = texts.filter((text) => !said.has(text))
          // Only the current ones are remembered: a finding fixed and broken again is said again.
          said = new Set(texts)
          return Effect.forEach(fresh, (text) => Effect.logWarning(text), { discard: true }).pipe(withScope("analysis"))
        }),
      )
    })
