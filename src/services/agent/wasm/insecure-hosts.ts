/**
 * WASM_INSECURE_REGISTRIES: hosts (comma-separated `host[:port]`, `*` = every host) that may be
 * reached without verification — a registry there is spoken to over plain http, an https
 * server there is not asked for a valid certificate.
 */

export interface InsecureHosts {
  readonly all: boolean
  readonly hosts: ReadonlySet<string>
}

export const parseInsecureHosts = (value: string): InsecureHosts => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== "")
  return { all: entries.includes("*"), hosts: new Set(entries) }
}

/** `host` is `host[:port]`; an entry without a port covers every port of that host. */
export const isInsecureHost = (insecure: InsecureHosts, host: string) => {
  if (insecure.all) return true
  const normalized = host.toLowerCase()
  if (insecure.hosts.has(normalized)) return true
  const withoutPort = normalized.replace(/:\d+$/, "")
  return withoutPort !== normalized && insecure.hosts.has(withoutPort)
}
