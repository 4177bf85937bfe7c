/**
 * The PushContext inputs of the ADS server, followed live: every applied config change and
 * every registry change yields a full input (services, endpoints, VirtualServices,
 * DestinationRules, PeerAuthentications, AuthorizationPolicies, and the proxy-only config with
 * the cluster's TLS credentials when a CredentialSource is there); the server diffs consecutive
 * inputs and debounces the pushes.
 */
import { Effect, Option, Stream } from "effect"
import { ConfigStore } from "../../services/config-store/config-store.js"
import type { ConfigSnapshot } from "../../services/config-store/snapshot.js"
import { type Credential, CredentialSource } from "../../services/credentials/credential.js"
import { JwksResolver } from "../../services/jwks/resolver.js"
import { meshServiceLookup, serverFetchTargets } from "../../services/jwks/targets.js"
import { type RegistrySnapshot, ServiceRegistry } from "../../services/registry/registry.js"
import type { PushContextInput } from "../../services/xds/model/push-context.js"
import type { JwksInput } from "../../services/xds/proxygen/inbound/jwt.js"

/** The input of one moment: a config snapshot and a registry snapshot (pure). */
export const pushContextInput = (
  config: ConfigSnapshot,
  registry: RegistrySnapshot,
  credentials: ReadonlyArray<Credential> = [],
  jwks?: JwksInput,
): PushContextInput => ({
  ...(jwks !== undefined ? { jwks } : {}),
  services: registry.services,
  endpoints: [...registry.endpointsByKey.values()].flat(),
  virtualServices: config.list("VirtualService"),
  destinationRules: config.list("DestinationRule"),
  peerAuthentications: config.list("PeerAuthentication"),
  authorizationPolicies: config.list("AuthorizationPolicy"),
  proxyConfig: {
    gateways: config.list("Gateway"),
    sidecars: config.list("Sidecar"),
    envoyFilters: config.list("EnvoyFilter"),
    requestAuthentications: config.list("RequestAuthentication"),
    telemetries: config.list("Telemetry"),
    wasmPlugins: config.list("WasmPlugin"),
    credentials,
  },
})

export const pushContextInputs: Stream.Stream<PushContextInput, never, ConfigStore | ServiceRegistry> =
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const config = yield* ConfigStore
      const registry = yield* ServiceRegistry
      // Optional: without an orchestrator (or in tests) there are no Secrets to serve.
      const credentialSource = yield* Effect.serviceOption(CredentialSource)
      const credentials = Option.match(credentialSource, {
        onNone: () => Stream.succeed<ReadonlyArray<Credential>>([]),
        onSome: (source) => Stream.concat(Stream.succeed<ReadonlyArray<Credential>>([]), source.changes),
      })
      // Events that only change the set of reported issues leave the served config as it was.
      const configSnapshots = config.watch.pipe(
        Stream.filter((event) => event.full || event.changes.length > 0),
        Stream.map((event) => event.snapshot),
      )
      const { snapshot, events } = yield* registry.subscribe
      const registrySnapshots = Stream.concat(
        Stream.succeed(snapshot),
        Stream.fromQueue(events).pipe(Stream.map((event) => event.snapshot)),
      )
      const inputs = Stream.zipLatestAll(configSnapshots, registrySnapshots, credentials)
      // Optional too: with a JWKS resolver, the key sets the current RequestAuthentications need
      // are kept fetched, and each new resolved map is a new input.
      const jwksResolver = yield* Effect.serviceOption(JwksResolver)
      if (Option.isNone(jwksResolver))
        return inputs.pipe(Stream.map(([c, r, credentialSet]) => pushContextInput(c, r, credentialSet)))
      const resolver = jwksResolver.value
      const needed = inputs.pipe(
        Stream.tap(([c, r]) =>
          resolver.update(
            serverFetchTargets(
              c.list("RequestAuthentication"),
              resolver.mode,
              // Only hybrid mode asks which hosts are mesh services.
              resolver.mode === "hybrid" ? meshServiceLookup(r.services) : () => false,
            ),
          ),
        ),
      )
      return Stream.zipLatest(needed, resolver.changes).pipe(
        Stream.map(([[c, r, credentialSet], resolved]) =>
          pushContextInput(c, r, credentialSet, { mode: resolver.mode, resolved }),
        ),
      )
    }),
  )
