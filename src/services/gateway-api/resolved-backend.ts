/**
 * What a backendRef resolves to: a destination with its weight, or the problem that keeps it
 * from being served. Its own file so that every kind of backend (Services, ServiceEntry hosts,
 * InferencePools) can produce it without importing the resolver.
 */
import type { Problem } from "./conditions.js"

export interface Destination {
  readonly host: string
  readonly subset?: string
  readonly port?: { readonly number: number }
}

export type ResolvedBackend =
  | { readonly ok: true; readonly destination: Destination; readonly weight: number }
  | {
      readonly ok: false
      readonly problem: Problem
      /**
       * True when the reference is malformed (no port) rather than unresolvable: the whole rule
       * fails. An unresolvable backend (missing, not permitted, unsupported kind) fails only its
       * own share of the traffic.
       */
      readonly malformed?: boolean
    }
