/**
 * Root key rotation without downtime (issue 43): the pure rules of the three phases.
 *
 * The reference rotates its self-signed root by re-signing the same key; a new key (compromise,
 * key-size change, a different plugged-in CA) breaks trust there because workloads hold one
 * root. Here a new root goes through three phases:
 *  (a) publish: the trust bundle carries the current root and the new one while the CA still
 *      signs with the current key; it lasts until every agent watching the bundle acknowledged
 *      it (and at least `publishMinWait`, so agents reconnecting after a control-plane restart
 *      get it too), or until `publishTimeout`;
 *  (b) sign: the new key signs; the old root stays in the bundle as a retired root ...
 *  (c) ... until every certificate it can have signed has expired (the longest workload
 *      certificate lifetime after the switch), then it leaves the bundle.
 */
import { createHash } from "node:crypto"
import { Duration } from "effect"

export interface KeyRotationSettings {
  /** `MESHCA_KEY_ROTATION_CHECK_INTERVAL`: how often the phases and acknowledgements are checked. */
  readonly checkInterval: Duration.Duration
  /** `MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT`: the least time the bundle is published before the switch. */
  readonly publishMinWait: Duration.Duration
  /** `MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT`: the switch happens then even if agents have not acknowledged. */
  readonly publishTimeout: Duration.Duration
  /** `MESHCA_KEY_ROTATION_ON_KEY_MISMATCH`: rotate when the root key no longer matches the configured one. */
  readonly rotateOnKeyMismatch: boolean
  /** `MESHCA_TRUST_BUNDLE_MAX_WATCHERS`: `WatchTrustBundle` streams open at once; more are refused. */
  readonly maxWatchers: number
}

export const DEFAULT_KEY_ROTATION: KeyRotationSettings = {
  checkInterval: Duration.seconds(10),
  publishMinWait: Duration.seconds(30),
  publishTimeout: Duration.hours(1),
  rotateOnKeyMismatch: false,
  maxWatchers: 100_000,
}

/** A trust bundle's version: the first 16 hex digits of the SHA-256 of its PEM text. */
export const bundleVersion = (bundlePem: string): string =>
  createHash("sha256").update(bundlePem).digest("hex").slice(0, 16)

/** How many agents watch the bundle, and how many acknowledged the current version. */
export interface WatcherCounts {
  readonly total: number
  readonly current: number
}

export type PublishDecision =
  | { readonly _tag: "wait"; readonly reason: string }
  | { readonly _tag: "switch"; readonly reason: string }

/**
 * Whether phase (a) is over. `since` is when the bundle was published, or when this process
 * started if that is later (an agent that was connected to an earlier process reconnects first).
 */
export const publishDecision = (
  since: number,
  nowMs: number,
  watchers: WatcherCounts,
  settings: Pick<KeyRotationSettings, "publishMinWait" | "publishTimeout">,
): PublishDecision => {
  const elapsed = nowMs - since
  if (elapsed >= Duration.toMillis(settings.publishTimeout)) {
    const missing = watchers.total - watchers.current
    return {
      _tag: "switch",
      reason:
        missing > 0
          ? `publish timeout reached with ${missing} of ${watchers.total} agent(s) not acknowledging the bundle`
          : "publish timeout reached",
    }
  }
  if (elapsed < Duration.toMillis(settings.publishMinWait)) {
    return { _tag: "wait", reason: "the bundle has not been published for the minimum wait yet" }
  }
  if (watchers.current < watchers.total) {
    return {
      _tag: "wait",
      reason: `${watchers.total - watchers.current} of ${watchers.total} agent(s) have not acknowledged the bundle`,
    }
  }
  return { _tag: "switch", reason: `every connected agent (${watchers.total}) acknowledged the bundle` }
}

/** When a root whose key stopped signing at `switchMs` leaves the bundle. */
export const retireAtMs = (oldRootNotAfterMs: number, switchMs: number, maxWorkloadTtl: Duration.Duration): number =>
  Math.min(oldRootNotAfterMs, switchMs + Duration.toMillis(maxWorkloadTtl))

/** A key's type and size as Node reports it (`KeyObject.asymmetricKeyType`, `asymmetricKeyDetails`). */
export interface KeyShape {
  readonly type: string | undefined
  readonly modulusLength?: number | undefined
}

/** Why a self-signed root key no longer matches the configured RSA size; undefined when it does. */
export const keyMismatch = (key: KeyShape, rsaKeySize: number): string | undefined => {
  if (key.type !== "rsa") return `the root key is ${key.type ?? "unknown"}, the configured key is RSA-${rsaKeySize}`
  if (key.modulusLength !== rsaKeySize) {
    return `the root key is RSA-${key.modulusLength ?? "?"}, the configured key is RSA-${rsaKeySize}`
  }
  return undefined
}

/** The phase a CA is in, as the debug page and the phase gauge show it. */
export type KeyRotationPhase = "idle" | "publishing" | "retaining"

/** `meshca_server_key_rotation_phase`: 0 idle, 1 publishing the new root, 2 old root(s) still trusted. */
export const phaseGaugeValue = (phase: KeyRotationPhase): number =>
  phase === "publishing" ? 1 : phase === "retaining" ? 2 : 0
