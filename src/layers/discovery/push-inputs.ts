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
import { type RegistrySnapshot, ServiceRegistry } from "../../services/registry/registry.js"
import type { PushContextInput } from "../../services/xds/model/push-context.js"

/** The input of one moment: a config snapshot and a registry snapshot (pure). */
export const pushContextInput = (
  config: ConfigSnapshot,
  registry: RegistrySnapshot,
  credentials: ReadonlyArray<Credential> = [],
): PushContextInput => ({
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
      return Stream.zipLatestAll(configSnapshots, registrySnapshots, credentials).pipe(
        Stream.map(([configSnapshot, registrySnapshot, credentialSet]) =>
          pushContextInput(configSnapshot, registrySnapshot, credentialSet),
        ),
      )
    }),
  )
