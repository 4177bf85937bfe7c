/**
 * The injector settings and mesh config the gateway deployment controller builds proxy pods
 * from: the same sources the `/inject` webhook follows (injector ConfigMap or mounted files,
 * the mesh config), so a deployed gateway runs the image and arguments an injected one would.
 * Where a source is not configured (tests, no webhook config) its built-in defaults are used.
 */
import { Effect, Option, type Scope, Stream } from "effect"
import type { InjectionSources } from "../../services/gateway-api/deployment/pod-template.js"
import type { Json } from "../../services/injection/contract.js"
import { defaultInjectorSettings } from "../../services/injection/injector-settings.js"
import { InjectionWebhookConfig } from "../../services/injection/webhook-config.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import type { LocalCluster } from "../../services/orchestrator/local-cluster.js"
import { makeInjectorSource } from "./injector-source.js"

export const makeInjectionSources: Effect.Effect<() => InjectionSources, never, LocalCluster | Scope.Scope> =
  Effect.gen(function* () {
    const webhook = yield* Effect.serviceOption(InjectionWebhookConfig)
    const source = Option.isSome(webhook)
      ? yield* makeInjectorSource({
          injectDir: webhook.value.injectDir,
          namespace: webhook.value.namespace,
          revision: webhook.value.REVISION,
        })
      : { current: defaultInjectorSettings }
    const revision = Option.isSome(webhook) ? webhook.value.REVISION : ""
    let meshConfig: Json = {}
    const watcher = yield* Effect.serviceOption(MeshWatcher)
    if (Option.isSome(watcher)) {
      // The injector reads the mesh config as plain JSON, which MeshConfig is.
      meshConfig = (yield* watcher.value.config) as unknown as Json
      yield* Effect.forkScoped(
        Stream.runForEach(watcher.value.configChanges, (next) =>
          Effect.sync(() => {
            meshConfig = next as unknown as Json
          }),
        ),
      )
    }
    return () => {
      const settings = source.current()
      return { config: settings.config, values: settings.values, meshConfig, revision }
    }
  })
