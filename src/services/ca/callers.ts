/**
 * Who may call the discovery server's secure services, decided once from `CaConfig` and shared
 * by the CA service and both xDS listeners: the authenticators (client certificate, tokens),
 * and the node authorizer of `CA_TRUSTED_NODE_ACCOUNTS` (the xDS stream guards built on them are
 * `XdsGuards` in services/xds/protocol/xds-guards.ts).
 */
import { Context } from "effect"
import type { Authenticator } from "./authenticate.js"
import type { NodeAuthorizer } from "./identity.js"

export interface CaAuthenticatorsShape {
  /** Built-in authenticators first, then `extraAuthenticators`. */
  readonly authenticators: ReadonlyArray<Authenticator>
  /** Undefined when `CA_TRUSTED_NODE_ACCOUNTS` is empty. */
  readonly nodeAuthorizer: NodeAuthorizer | undefined
}

export class CaAuthenticators extends Context.Tag("mesh/CaAuthenticators")<CaAuthenticators, CaAuthenticatorsShape>() {}

/**
 * The secure gRPC listener of `--secureGRPCAddr` has bound (or is off: no certificate, no
 * service). Listeners that start later require it: a grpc-js bind interrupted by a sibling's
 * bind failure never completes and hangs the shutdown.
 */
export class SecureGrpcServing extends Context.Tag("mesh/SecureGrpcServing")<
  SecureGrpcServing,
  { readonly port: number | undefined }
>() {}
