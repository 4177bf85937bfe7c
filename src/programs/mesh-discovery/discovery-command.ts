/** `mesh-discovery discovery`: parses the flags, then starts the server (loaded lazily, so --help stays cheap). */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { discoveryFlags } from "./discovery-flags.js"

export const discoveryCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("discovery", { ...discoveryFlags, logging }, ({ logging, ...args }) =>
    Effect.flatMap(
      Effect.promise(() => import("./discovery-server.js")),
      (server) => server.runDiscovery(args, logging),
    ),
  ).pipe(Command.withDescription("Start mesh proxy discovery service."))
