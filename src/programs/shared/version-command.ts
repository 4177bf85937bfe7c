/**
 * `version`: `--output/-o yaml|json`, `--short/-s` on by default, `--short=false` for the
 * full build information. Shared by all four binaries.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { type BuildInfo, buildInfo } from "../../services/build-info.js"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag } from "./options.js"

export const versionOptions = {
  output: Options.choice("output", ["yaml", "json"]).pipe(
    Options.withAlias("o"),
    Options.optional,
    Options.withDescription("One of 'yaml' or 'json'."),
  ),
  short: boolFlag("short", true).pipe(
    Options.withAlias("s"),
    Options.withDescription("Use --short=false to generate full version information"),
  ),
}

/** The printed document: the short form carries the version only. */
export const versionDocument = (info: BuildInfo, short: boolean) =>
  short
    ? { clientVersion: { version: info.version } }
    : {
        clientVersion: {
          version: info.version,
          revision: info.gitRevision,
          build_time: info.buildTime,
          node_version: info.nodeVersion,
          platform: info.platform,
          status: info.buildStatus,
        },
      }

export const formatVersion = (
  info: BuildInfo,
  short: boolean,
  output: Option.Option<"yaml" | "json">,
): Effect.Effect<string> => {
  const document = versionDocument(info, short)
  if (Option.isSome(output)) {
    if (output.value === "json") return Effect.succeed(JSON.stringify(document, null, 2))
    // The YAML library loads only when YAML is asked for: `version` stays cheap to start.
    // (Bundled, the CommonJS build of the library arrives as a default export.)
    return Effect.promise(() => import("yaml")).pipe(
      Effect.map((module) => {
        const yaml = (module as unknown as { default?: typeof module }).default ?? module
        return yaml.stringify(document).trimEnd()
      }),
    )
  }
  if (short) return Effect.succeed(info.version)
  const c = document.clientVersion as Record<string, string>
  return Effect.succeed(
    `version.BuildInfo{Version:"${c.version}", GitRevision:"${c.revision}", BuildTime:"${c.build_time}", NodeVersion:"${c.node_version}", Platform:"${c.platform}", BuildStatus:"${c.status}"}`,
  )
}

/** A `version` command; `extra` lets a binary add flags (meshctl's `--remote`). */
export const makeVersionCommand = <Extra, R = never>(
  logging: Options.Options<LogSettings>,
  extra: Options.Options<Extra>,
  // R: what the printer needs from the binary (meshctl's settings for `--remote`).
  print: (short: boolean, output: Option.Option<"yaml" | "json">, extra: Extra) => Effect.Effect<void, never, R>,
) =>
  Command.make("version", { ...versionOptions, extra, logging }, (args) =>
    print(args.short, args.output, args.extra),
  ).pipe(Command.withDescription("Prints out build version information"))

/** `version` printing this build; `extra` are flags every command of the binary accepts. */
export const plainVersionCommand = (
  logging: Options.Options<LogSettings>,
  extra: Options.Options<unknown> = Options.none,
) =>
  makeVersionCommand(logging, extra, (short, output) =>
    Effect.flatMap(formatVersion(buildInfo, short, output), Console.log),
  )
