/**
 * What `meshctl dashboard <ui>` does once its flags are read (loaded lazily): find the pod, open
 * the local listener that forwards to it (see services/dashboard/local-forwarder.ts for why the
 * pod IP is used instead of a port-forward), print the URL, try a browser, and keep forwarding
 * until SIGINT/SIGTERM interrupts the program.
 */
import { spawn } from "node:child_process"
import { Console, Data, Effect } from "effect"
import { localForwarderLayer } from "../../../layers/dashboard/local-forwarder.js"
import { LocalForwarder } from "../../../services/dashboard/local-forwarder.js"
import { bindHosts, browserCommand, dashboardUrl, UIS } from "../../../services/dashboard/uis.js"
import { controlPlaneSelector } from "../control-plane-selector.js"
import { findPod, namedPort } from "../pod-lookup.js"
import type { DashboardRequest } from "./dashboard-options.js"

class DashboardFailed extends Data.TaggedError("DashboardFailed")<{ readonly message: string }> {}

/** Best effort: a missing or failing browser opener only means the user opens the URL. */
const openBrowser = (url: string) =>
  Effect.sync(() => {
    const { command, args } = browserCommand(process.platform)
    try {
      const child = spawn(command, [...args, url], { stdio: "ignore", detached: true })
      child.on("error", () => {})
      child.unref()
    } catch {
      // Nothing to do: the URL is printed already.
    }
  })

export const runDashboard = (request: DashboardRequest) =>
  Effect.gen(function* () {
    const spec = UIS[request.ui]
    if (request.deprecatedAs !== undefined)
      yield* Console.error(
        `Warning: "dashboard ${request.deprecatedAs}" is deprecated; use "dashboard ${request.ui}" instead`,
      )
    const hosts = bindHosts(request.address)
    if (typeof hosts === "string") return yield* new DashboardFailed({ message: hosts })
    if (request.ui === "proxy" && request.pod !== "" && request.selector !== "")
      return yield* new DashboardFailed({ message: "name cannot be provided when a selector is specified" })
    const isControlPlane = request.ui === "controlz" || request.ui === "meshd-debug"
    const selector = isControlPlane ? controlPlaneSelector(request.selector, request.revision) : request.selector
    const namespace =
      spec.selectorNamespace === "mesh" ? request.global.meshNamespace : request.global.namespace || "default"
    // A control-plane pod named without a namespace is looked for in -i unless -n says otherwise.
    const found = yield* Effect.scoped(
      findPod(request.global, { pod: request.pod, selector, selectorNamespace: namespace, podNamespace: namespace }),
    )
    // meshd-debug has no port flag: the pod's monitoring port, as control-plane-access.ts reads it.
    const uiPort = request.ui === "meshd-debug" ? namedPort(found.pod, "http-monitoring", spec.uiPort) : request.uiPort
    const forwarder = yield* LocalForwarder
    const forwarding = yield* forwarder.forward({
      hosts,
      port: request.port,
      target: { host: found.ip, port: uiPort },
    })
    const url = dashboardUrl(request.address, forwarding.port, spec.path)
    yield* Console.log(url)
    if (request.browser) yield* openBrowser(url)
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(localForwarderLayer))
