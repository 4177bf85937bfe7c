/**
 * `meshctl experimental injector list`: the namespaces with injection enabled and the injector
 * webhooks with the namespaces they select (spec part 3 §4.2, §4.3). Tables in
 * services/injector-list; the cluster is read when the command runs (client loaded lazily).
 */
import { Command, type Options } from "@effect/cli"
import { Console, Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { globalOptions } from "../global-options.js"

const list = (logging: Options.Options<LogSettings>) =>
  Command.make("list", { global: globalOptions, logging }, (args) =>
    Effect.gen(function* () {
      const [{ orchestratorClient }, { Resources }, tables, { ControlPlaneUnavailable }] = yield* Effect.promise(() =>
        Promise.all([
          import("../orchestrator-access.js"),
          import("../../../services/orchestrator/resources.js"),
          import("../../../services/precheck/injector-list.js"),
          import("../control-plane-access.js"),
        ]),
      )
      const fail = (message: string) => new ControlPlaneUnavailable({ message })
      const client = yield* orchestratorClient(args.global).pipe(Effect.mapError((e) => fail(e.message)))
      const listAll = (ref: (typeof Resources)[keyof typeof Resources]) =>
        client.list(ref).pipe(
          Effect.map((page) => page.items),
          Effect.mapError((e) => fail(`cannot list ${ref.kind} on ${client.server}: ${e.message}`)),
        )
      const summary = (o: { metadata: Record<string, unknown> }) => ({
        name: String(o.metadata.name ?? ""),
        namespace: String(o.metadata.namespace ?? ""),
        labels: (o.metadata.labels ?? {}) as Record<string, string>,
        annotations: (o.metadata.annotations ?? {}) as Record<string, string>,
      })
      const [namespaces, pods, webhooks] = yield* Effect.all(
        [listAll(Resources.namespaces), listAll(Resources.pods), listAll(Resources.mutatingWebhookConfigurations)],
        { concurrency: "unbounded" },
      )
      const nsSummaries = namespaces.map((n) => summary(n as never))
      yield* Console.log(
        `${tables.namespaceTable(
          nsSummaries,
          pods.map((p) => summary(p as never)),
        )}\n${tables.webhookTable(webhooks as never, nsSummaries).trimEnd()}`,
      )
    }).pipe(Effect.scoped),
  ).pipe(Command.withDescription("List sidecar injector and sidecar versions"))

/** `meshctl experimental injector`. */
export const injectorCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("injector").pipe(
    Command.withDescription("List sidecar injector and sidecar versions"),
    Command.withSubcommands([list(logging)]),
  )
