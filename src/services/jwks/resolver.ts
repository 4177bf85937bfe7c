/**
 * The JwksResolver service: the control plane's fetcher of RequestAuthentication key sets
 * (`PILOT_JWT_ENABLE_REMOTE_JWKS` modes `server` and `hybrid`, and OIDC discovery in every mode).
 * The push pipeline tells it which key sets the current config needs (`update`) and reads the
 * resolved map (`changes`) into the PushContext, where the generator inlines it as `local_jwks`
 * (source.ts). Fetching, refreshing and failures are the layer's (layers/jwks/resolver.ts); the
 * service never fails.
 */
import { Context, type Effect, type Stream } from "effect"
import type { JwksMode } from "./mode.js"
import type { JwksTarget } from "./targets.js"

export interface JwksResolverShape {
  /** The mode of `PILOT_JWT_ENABLE_REMOTE_JWKS` (what `serverFetchTargets` and `jwksSource` take). */
  readonly mode: JwksMode
  /**
   * The key sets to keep resolved, replacing the previous list: new keys are fetched at once;
   * keys no longer listed keep their key set for a grace period (a rule removed and re-added
   * does not lose it), then are dropped.
   */
  readonly update: (targets: ReadonlyArray<JwksTarget>) => Effect.Effect<void>
  /** The resolved key sets: `jwksKey` → JWKS JSON (only keys fetched successfully at least once). */
  readonly current: Effect.Effect<ReadonlyMap<string, string>>
  /** The current resolved map, then each new one (emitted only when a key set changed). */
  readonly changes: Stream.Stream<ReadonlyMap<string, string>>
}

export class JwksResolver extends Context.Tag("mesh/JwksResolver")<JwksResolver, JwksResolverShape>() {}
