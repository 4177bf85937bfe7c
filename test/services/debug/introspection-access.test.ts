/** The introspection listener's access rule and environment redaction, as pure functions. */
import { describe, expect, it } from "vitest"
import {
  isSecretName,
  REDACTED,
  redactedEnvironment,
  requiresLocalCaller,
} from "../../../src/services/debug/introspection-access.js"
import { isLoopback } from "../../../src/services/debug/views.js"

describe("requiresLocalCaller", () => {
  it("keeps every change local, whatever the path", () => {
    for (const method of ["PUT", "POST", "DELETE", "PATCH", "put"]) {
      expect(requiresLocalCaller(method, "/scopej/ads")).toBe(true)
      expect(requiresLocalCaller(method, "/nosuch")).toBe(true)
    }
  })

  it("keeps the environment and the arguments local, with or without the trailing slash", () => {
    for (const path of ["/envj/", "/envj", "/argsj/", "/argsj"]) {
      expect(requiresLocalCaller("GET", path)).toBe(true)
      expect(requiresLocalCaller("HEAD", path)).toBe(true)
    }
  })

  it("leaves the read-only status views open", () => {
    for (const path of ["/", "/scopej/", "/scopej/ads", "/procj/", "/memj/", "/versionj/", "/metricj/"]) {
      expect(requiresLocalCaller("GET", path)).toBe(false)
    }
  })

  it("combined with the loopback rule, refuses a remote caller and serves a local one", () => {
    const allowed = (method: string, path: string, remote: string | undefined) =>
      !requiresLocalCaller(method, path) || isLoopback(remote)
    expect(allowed("PUT", "/scopej/ads", "10.1.2.3")).toBe(false)
    expect(allowed("GET", "/envj/", "192.168.0.7")).toBe(false)
    expect(allowed("GET", "/envj/", "::ffff:10.0.0.1")).toBe(false)
    expect(allowed("GET", "/envj/", undefined)).toBe(false)
    expect(allowed("PUT", "/scopej/ads", "127.0.0.1")).toBe(true)
    expect(allowed("GET", "/envj/", "::1")).toBe(true)
    expect(allowed("GET", "/envj/", "::ffff:127.0.0.1")).toBe(true)
    expect(allowed("GET", "/scopej/", "10.1.2.3")).toBe(true)
  })
})

describe("redactedEnvironment", () => {
  it("recognises secret-looking names and leaves ordinary ones", () => {
    for (const name of [
      "AWS_SECRET_ACCESS_KEY",
      "GITHUB_TOKEN",
      "API_KEY",
      "DB_PASSWORD",
      "MYSQL_PASS",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "PRIVATE_KEY_FILE",
      "XDS_AUTH",
      "npm_config__auth",
      // personal access tokens, and the other families anywhere in a name (issue 34 item 11)
      "GITHUB_PAT",
      "gitlab_pat",
      "PAT",
      "PAT_FOR_CI",
      "REGISTRY_CREDENTIAL",
      "MY_CREDENTIALS_FILE",
      "OAUTH_CLIENT_SECRET",
      "SECRETS_DIR",
      "PROXY_AUTHORIZATION",
      "BASICAUTH",
    ]) {
      expect(isSecretName(name), name).toBe(true)
    }
    for (const name of [
      "PATH",
      "LD_LIBRARY_PATH",
      "PATTERN",
      "DISPATCH_MODE",
      "HOME",
      "PWD",
      "OLDPWD",
      "PILOT_DEBOUNCE_AFTER",
      "POD_NAME",
      "PASSTHROUGH_MODE",
    ]) {
      expect(isSecretName(name), name).toBe(false)
    }
  })

  it("shows NAME=value lines with secret values and URL passwords redacted", () => {
    expect(
      redactedEnvironment({
        HOME: "/root",
        MY_TOKEN: "s3cr3t",
        HTTPS_PROXY: "http://user:hunter2@proxy:3128",
        EMPTY: undefined,
      }),
    ).toEqual(["HOME=/root", `MY_TOKEN=${REDACTED}`, `HTTPS_PROXY=http://user:${REDACTED}@proxy:3128`, "EMPTY="])
  })
})
