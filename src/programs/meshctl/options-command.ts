/** `meshctl options`: lists the global options every command accepts. */
import { Command, type Options } from "@effect/cli"
import { Console } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { globalFlagDocs, globalOptions } from "./global-options.js"

export const renderGlobalOptions = (): string => {
  const width = Math.max(...globalFlagDocs.map(([flag]) => flag.length))
  return [
    "The following options can be passed to any command:",
    "",
    ...globalFlagDocs.map(([flag, text]) => `      ${flag.padEnd(width)}   ${text}`),
  ].join("\n")
}

export const optionsCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("options", { logging, global: globalOptions }, () => Console.log(renderGlobalOptions())).pipe(
    Command.withDescription("Displays meshctl global options"),
  )
