/**
 * The stream guards of both xDS listeners, built once from the CA's authenticators (see
 * layers/ca/callers.ts) and shared by the ADS services on `--secureGRPCAddr` and `--grpcAddr`.
 */
import { Context } from "effect"
import type { XdsGuard } from "./xds-auth.js"

export interface XdsGuardsShape {
  /** Streams on `--secureGRPCAddr` (`XDS_AUTH`). */
  readonly secure: XdsGuard
  /** Streams on `--grpcAddr` (`XDS_AUTH` and `XDS_AUTH_PLAINTEXT`). */
  readonly plaintext: XdsGuard
}

export class XdsGuards extends Context.Tag("mesh/XdsGuards")<XdsGuards, XdsGuardsShape>() {}
