/**
 * The `mesh-iptables` program: reads the machine facts the rules need (resolv.conf name servers,
 * the proxy user's uid), then applies through the Iptables service. Loaded lazily by the
 * command so that `--help` does not pull it in.
 */
import { existsSync, readFileSync } from "node:fs"
import { Effect } from "effect"
import { DEFAULT_PROXY_UID, parseResolvConf } from "../../services/iptables/config.js"
import { type ApplyReport, Iptables, type IptablesError } from "../../services/iptables/service.js"
import {
  type MachineFacts,
  type MeshIptablesEnv,
  type MeshIptablesSettings,
  toApplyOptions,
} from "../../services/iptables/settings.js"
import { withScope } from "../../services/logging/logging.js"
import { IptablesLive } from "./iptables.js"

/** `ip netns exec` shows /etc/netns/<name>/resolv.conf as /etc/resolv.conf when it exists. */
export const resolvConfPath = (namespace: string): string => {
  if (namespace !== "" && !namespace.includes("/")) {
    const path = `/etc/netns/${namespace}/resolv.conf`
    if (existsSync(path)) return path
  }
  return "/etc/resolv.conf"
}

/** The uid of `user` in /etc/passwd, else the reference's default 1337. */
export const lookupUid = (user: string, passwd = "/etc/passwd"): string => {
  try {
    for (const line of readFileSync(passwd, "utf8").split("\n")) {
      const fields = line.split(":")
      if (fields[0] === user && fields[2] !== undefined && /^\d+$/.test(fields[2])) return fields[2]
    }
  } catch {
    // No passwd file: fall through to the default.
  }
  return DEFAULT_PROXY_UID
}

export const machineFacts = (settings: MeshIptablesSettings, proxyUser: string): Effect.Effect<MachineFacts> =>
  Effect.sync(() => {
    const wantsServers = settings.redirectDns && !settings.captureAllDns
    const path = resolvConfPath(settings.networkNamespace)
    const servers = wantsServers && existsSync(path) ? parseResolvConf(readFileSync(path, "utf8")) : { v4: [], v6: [] }
    return {
      dnsServersV4: servers.v4,
      dnsServersV6: servers.v6,
      defaultProxyUid: settings.proxyUid === "" ? lookupUid(proxyUser) : DEFAULT_PROXY_UID,
    }
  })

export const runMeshIptables = (
  settings: MeshIptablesSettings,
  env: MeshIptablesEnv,
  proxyUser: string,
): Effect.Effect<ApplyReport, IptablesError> =>
  Effect.gen(function* () {
    const facts = yield* machineFacts(settings, proxyUser)
    const options = toApplyOptions(settings, env, facts)
    yield* Effect.logInfo("mesh-iptables configuration", options.config)
    const iptables = yield* Iptables
    const report = yield* iptables.apply(options)
    for (const { family, action } of report.actions) yield* Effect.logInfo(`IPv${family}: ${action}`)
    return report
  }).pipe(Effect.provide(IptablesLive), withScope("iptables"))
