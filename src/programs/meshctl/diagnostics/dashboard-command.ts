/**
 * `meshctl dashboard` (aliases `dash`, `d`): opens a web UI of the mesh through a local port
 * (spec part 3 §4.2, §4.3 dashboard, §7 rule 3). Subcommands: controlz, meshd-debug, proxy (and
 * the deprecated `envoy`), grafana, jaeger, kiali, prometheus, zipkin, skywalking. The work is in
 * dashboard-run.ts, loaded only when a subcommand runs.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { UIS } from "../../../services/dashboard/uis.js"
import type { LogSettings } from "../../../services/logging/options.js"
import { uint16Flag } from "../../shared/options.js"
import { common, type DashboardRequest, revision, selector, uiPort } from "./dashboard-options.js"

const podArg = Args.text({ name: "[<type>/]<name>[.<namespace>]" }).pipe(Args.optional)

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
