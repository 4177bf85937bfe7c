/**
 * `meshctl version` (and `experimental version`): the client build, and with `--remote` (the
 * default) the control planes' builds and the versions of their connected proxies, found as
 * control-plane-access.ts describes (lazily loaded). A control plane that cannot be reached
 * does not fail the command: the client version is printed and the reason goes to stderr.
 */
import { Options } from "@effect/cli"
import { Console, Duration, Effect, Option } from "effect"
import { type BuildInfo, buildInfo } from "../../../services/build-info.js"
import type { LogSettings } from "../../../services/logging/options.js"
import { boolFlag, textFlag } from "../../shared/options.js"
import { formatVersion, makeVersionCommand, versionDocument } from "../../shared/version-command.js"
import type { XdsFlags } from "../control-plane-access.js"
import { controlPlaneOptions, DEFAULT_CONTROL_PLANE_LABEL, DEFAULT_XDS_PORT } from "../control-plane-options.js"
import { controlPlaneSelector } from "../control-plane-selector.js"
import { type GlobalOptions, globalOptions } from "../global-options.js"

const remoteFlag = boolFlag("remote", true).pipe(
  Options.withDescription("Use --remote=false to suppress control plane check"),
)

/** What the printer needs; plain `version` has no xDS flags, so their defaults stand in. */
interface Extra extends XdsFlags {
  readonly remote: boolean
  readonly global: GlobalOptions
  readonly xdsAddress: string
  readonly xdsLabel: string
}

const printVersion = (short: boolean, output: Option.Option<"yaml" | "json">, extra: Extra) =>
  Effect.gen(function* () {
    if (!extra.remote) return yield* Console.log(yield* formatVersion(buildInfo, short, output))
    const { remoteVersions, dataPlaneSummary } = yield* Effect.promise(() => import("../control-plane-version.js"))
    const remote = yield* remoteVersions(
      {
        global: extra.global,
        xdsAddress: extra.xdsAddress,
        label: controlPlaneSelector(extra.xdsLabel, extra.revision),
      },
      extra,
    ).pipe(Effect.either)
    if (remote._tag === "Left") {
      yield* Console.log(
        Option.isSome(output) ? yield* formatVersion(buildInfo, short, output) : `client version: ${buildInfo.version}`,
      )
      return yield* Console.error(`control plane version: unavailable (${remote.left.message})`)
    }
    const { controlPlanes, dataPlane } = remote.right
    if (Option.isSome(output)) {
      const document = {
        ...versionDocument(buildInfo, short),
        meshVersion: controlPlanes.map((c) => ({
          component: "meshd",
          name: c.name,
          info: versionDocument(c.info, short).clientVersion,
        })),
        dataPlaneVersion: dataPlane.map((p) => ({ id: p.id, meshVersion: p.version })),
      }
      if (output.value === "json") return yield* Console.log(JSON.stringify(document, null, 2))
      const yaml = yield* Effect.promise(() => import("yaml"))
      const stringify = ((yaml as unknown as { default?: typeof yaml }).default ?? yaml).stringify
      return yield* Console.log(stringify(document).trimEnd())
    }
    const describe = (info: BuildInfo) =>
      short ? Effect.succeed(info.version) : formatVersion(info, false, Option.none())
    const planes = yield* Effect.forEach(controlPlanes, (c) => describe(c.info))
    yield* Console.log(
      [
        `client version: ${yield* describe(buildInfo)}`,
        `control plane version: ${[...new Set(planes)].join(", ")}`,
        `data plane version: ${dataPlaneSummary(dataPlane)}`,
      ].join("\n"),
    )
  })

/** `meshctl version`: the spec gives it no xDS flags; the control plane is found through the orchestrator. */
export const versionCommand = (logging: Options.Options<LogSettings>) =>
  makeVersionCommand(
    logging,
    Options.all({
      remote: remoteFlag,
      revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
      global: globalOptions,
    }),
    (short, output, extra) =>
      printVersion(short, output, {
        ...extra,
        xdsAddress: "",
        xdsLabel: DEFAULT_CONTROL_PLANE_LABEL,
        timeout: Duration.seconds(30),
        plaintext: false,
        certDir: "",
        authority: "",
        insecure: false,
        xdsPort: DEFAULT_XDS_PORT,
      }),
  )

/** `meshctl experimental version`: the same, with the control-plane flags (`--xds-address`, ...). */
export const experimentalVersionCommand = (logging: Options.Options<LogSettings>) =>
  makeVersionCommand(
    logging,
    Options.all({ remote: remoteFlag, ...controlPlaneOptions, global: globalOptions }),
    printVersion,
  )
