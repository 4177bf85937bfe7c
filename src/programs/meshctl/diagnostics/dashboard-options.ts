/**
 * The options of `dashboard` and what its run file receives: shared by dashboard-command.ts (which
 * declares the command) and dashboard-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { UIS, type UiName } from "../../../services/dashboard/uis.js"
import { boolFlag, intFlag, textFlag, uint16Flag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const common = {
  address: textFlag("address", "localhost").pipe(
    Options.withDescription("Address to listen on. Only accepts IP address or localhost as a value."),
  ),
  browser: boolFlag("browser", true).pipe(
    Options.withDescription("When --browser is supplied as false, meshctl dashboard will not open the browser."),
  ),
  port: intFlag("port", 0, { min: 0, max: 65535 }).pipe(
    Options.withAlias("p"),
    Options.withDescription("Local port to listen to (0 picks a free one)"),
  ),
  global: globalOptions,
}

export const uiPort = (ui: UiName) =>
  uint16Flag("ui-port", UIS[ui].uiPort).pipe(Options.withDescription("The component dashboard UI port."))
export const selector = (defaultValue: string) =>
  textFlag("selector", defaultValue).pipe(Options.withAlias("l"), Options.withDescription("Label selector"))
export const revision = textFlag("revision").pipe(
  Options.withAlias("r"),
  Options.withDescription("Control plane revision"),
)

/** What dashboard-run.ts receives. */
export interface DashboardRequest {
  readonly ui: UiName
  /** The name typed, when it is a deprecated alias (`envoy`). */
  readonly deprecatedAs?: string
  readonly pod: string
  readonly selector: string
  readonly revision: string
  readonly uiPort: number
  readonly address: string
  readonly browser: boolean
  readonly port: number
  readonly global: Command.Command.ParseConfig<typeof common>["global"]
}
