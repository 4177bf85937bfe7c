/**
 * `meshctl dashboard` (aliases `dash`, `d`): opens a web UI of the mesh through a local port
 * (spec part 3 §4.2, §4.3 dashboard, §7 rule 3). Subcommands: controlz, meshd-debug, proxy (and
 * the deprecated `envoy`), grafana, jaeger, kiali, prometheus, zipkin, skywalking. The work is in
 * dashboard-run.ts, loaded only when a subcommand runs.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { UIS, type UiName } from "../../services/dashboard/uis.js"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, intFlag, textFlag, uint16Flag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"

const common = {
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

const uiPort = (ui: UiName) =>
  uint16Flag("ui-port", UIS[ui].uiPort).pipe(Options.withDescription("The component dashboard UI port."))
const selector = (defaultValue: string) =>
  textFlag("selector", defaultValue).pipe(Options.withAlias("l"), Options.withDescription("Label selector"))
const revision = textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision"))
const podArg = Args.text({ name: "[<type>/]<name>[.<namespace>]" }).pipe(Args.optional)

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

const runLazily = (request: DashboardRequest) =>
  Effect.flatMap(
    Effect.promise(() => import("./dashboard-run.js")),
    (module) => module.runDashboard(request),
  )

const controlPlaneUi = (ui: "controlz" | "meshd-debug", logging: Options.Options<LogSettings>) => {
  const extra =
    ui === "controlz"
      ? { uiPort: uint16Flag("ctrlz_port", UIS.controlz.uiPort).pipe(Options.withDescription("ControlZ port")) }
      : {}
  return Command.make(
    ui,
    { ...common, ...extra, revision, selector: selector(UIS[ui].selector), pod: podArg, logging },
    (args) =>
      runLazily({
        ...args,
        ui,
        pod: Option.getOrElse(args.pod, () => ""),
        uiPort: "uiPort" in args ? (args.uiPort as number) : 0,
      }),
  ).pipe(Command.withDescription(UIS[ui].description))
}

const proxyUi = (name: "proxy" | "envoy", logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...common, selector: selector(""), uiPort: uiPort("proxy"), pod: podArg, logging }, (args) =>
    runLazily({
      ...args,
      ui: "proxy",
      revision: "",
      pod: Option.getOrElse(args.pod, () => ""),
      ...(name === "envoy" ? { deprecatedAs: name } : {}),
    }),
  ).pipe(
    Command.withDescription(name === "envoy" ? "Deprecated: use `meshctl dashboard proxy`" : UIS.proxy.description),
  )

const ADDONS = ["grafana", "jaeger", "kiali", "prometheus", "zipkin", "skywalking"] as const

const addonUi = (ui: (typeof ADDONS)[number], logging: Options.Options<LogSettings>) =>
  Command.make(ui, { ...common, uiPort: uiPort(ui), logging }, (args) =>
    runLazily({ ...args, ui, pod: "", selector: UIS[ui].selector, revision: "" }),
  ).pipe(Command.withDescription(UIS[ui].description))

const group = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name).pipe(
    Command.withDescription("Access to mesh web UIs"),
    Command.withSubcommands([
      controlPlaneUi("controlz", logging),
      controlPlaneUi("meshd-debug", logging),
      proxyUi("proxy", logging),
      proxyUi("envoy", logging),
      ...ADDONS.map((ui) => addonUi(ui, logging)),
    ]),
  )

/** `meshctl dashboard` and its short names `dash` and `d` (@effect/cli has no command aliases). */
export const dashboardCommands = (logging: Options.Options<LogSettings>) =>
  [group("dashboard", logging), group("dash", logging), group("d", logging)] as const
