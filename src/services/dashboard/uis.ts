/**
 * What each `meshctl dashboard` subcommand opens (spec part 3 §4.3 dashboard): the pods it looks
 * for (label, namespace), the pod port it reaches and the path of the URL it prints. Ports,
 * labels and paths follow the reference's dashboard commands with the mesh's names.
 */
export type UiName =
  | "controlz"
  | "meshd-debug"
  | "proxy"
  | "grafana"
  | "jaeger"
  | "kiali"
  | "prometheus"
  | "zipkin"
  | "skywalking"

export interface UiSpec {
  readonly name: UiName
  readonly description: string
  /** The pod port the UI listens on (before `--ui-port`/`--ctrlz_port`). */
  readonly uiPort: number
  /** The default `--selector`: "" when a pod must be named or selected explicitly. */
  readonly selector: string
  /** Where pods are looked for by selector: the mesh namespace (`-i`) or the namespace (`-n`). */
  readonly selectorNamespace: "mesh" | "workload"
  /** The path of the printed URL. */
  readonly path: string
}

const addon = (name: UiName, description: string, uiPort: number, path = "/"): UiSpec => ({
  name,
  description,
  uiPort,
  selector: `app=${name}`,
  selectorNamespace: "mesh",
  path,
})

export const UIS: Readonly<Record<UiName, UiSpec>> = {
  controlz: {
    name: "controlz",
    description: "Open the ControlZ web UI of a control-plane pod",
    uiPort: 9876,
    selector: "app=meshd",
    selectorNamespace: "mesh",
    path: "/",
  },
  "meshd-debug": {
    name: "meshd-debug",
    description: "Open the debug web UI of a control-plane pod",
    uiPort: 15014,
    selector: "app=meshd",
    selectorNamespace: "mesh",
    // The mesh page: the reference serves an HTML index at /debug; ours is /debug/ui.
    path: "/debug/ui",
  },
  proxy: {
    name: "proxy",
    description: "Open the admin dashboard of a sidecar proxy",
    uiPort: 15000,
    selector: "",
    selectorNamespace: "workload",
    path: "/",
  },
  grafana: addon("grafana", "Open the metrics-graphing web UI (Grafana)", 3000),
  jaeger: addon("jaeger", "Open the tracing web UI (Jaeger)", 16686),
  kiali: addon("kiali", "Open the topology web UI (Kiali)", 20001, "/kiali"),
  prometheus: addon("prometheus", "Open the metrics-store web UI (Prometheus)", 9090),
  zipkin: addon("zipkin", "Open the tracing web UI (Zipkin)", 9411),
  // The SkyWalking UI runs in its own pods, labelled for the UI rather than the collector.
  skywalking: { ...addon("skywalking", "Open the SkyWalking tracing web UI", 8080), selector: "app=skywalking-ui" },
}

/** The hosts `--address` binds: both loopbacks for `localhost`, else the one IP; a string is an error. */
export const bindHosts = (address: string): ReadonlyArray<string> | string => {
  if (address === "localhost") return ["127.0.0.1", "::1"]
  return isIp(address) ? [address] : `--address ${address}: only an IP address or localhost is allowed`
}

const isIp = (text: string): boolean => {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (v4 !== null) return v4.slice(1).every((part) => Number(part) <= 255)
  // IPv6: hex groups with at most one "::" (an embedded IPv4 tail is accepted too).
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return false
  if ((text.match(/::/g) ?? []).length > 1) return false
  const groups = text.split(":")
  return groups.length <= 8 && groups.every((g) => g === "" || /^[0-9a-fA-F]{1,4}$/.test(g) || isIp(g))
}

/** The URL printed for the user: `http://<address>:<port><path>` (IPv6 bracketed). */
export const dashboardUrl = (address: string, port: number, path: string): string =>
  `http://${address.includes(":") ? `[${address}]` : address}:${port}${path}`

/** The command that opens a URL in a browser on this platform. */
export const browserCommand = (
  platform: NodeJS.Platform,
): { readonly command: string; readonly args: ReadonlyArray<string> } =>
  platform === "darwin"
    ? { command: "open", args: [] }
    : platform === "win32"
      ? { command: "rundll32", args: ["url.dll,FileProtocolHandler"] }
      : { command: "xdg-open", args: [] }
