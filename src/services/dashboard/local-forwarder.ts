/**
 * The local end of `meshctl dashboard`: a TCP listener on this machine whose connections are
 * piped to a pod's port. The reference tunnels through the orchestrator's port-forward; here the
 * pod is reached at its IP directly (as `proxy-config` does), so the listener is all there is.
 */
import { Context, type Effect, type Scope } from "effect"
import type { ListenError } from "../net/listen-error.js"

export interface ForwardRequest {
  /** Hosts to bind (`localhost` is both loopbacks); the forward fails only if none binds. */
  readonly hosts: ReadonlyArray<string>
  /** Local port; 0 picks a free one (the same one on every host). */
  readonly port: number
  readonly target: { readonly host: string; readonly port: number }
}

export interface Forwarding {
  /** The local port actually bound. */
  readonly port: number
  /** The hosts that bound. */
  readonly hosts: ReadonlyArray<string>
}

export interface LocalForwarderShape {
  /** Listens until the scope closes; each accepted connection is piped to the target. */
  readonly forward: (request: ForwardRequest) => Effect.Effect<Forwarding, ListenError, Scope.Scope>
}

export class LocalForwarder extends Context.Tag("mesh/LocalForwarder")<LocalForwarder, LocalForwarderShape>() {}
