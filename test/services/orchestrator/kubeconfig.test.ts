/**
 * Reading a kubeconfig's current cluster and user without the orchestrator client library: the
 * fields it reads, relative paths against the file's directory, the context asked for, the
 * library's refusals, and which users still need the library (`exec`, `auth-provider`).
 */
import { describe, expect, it } from "vitest"
import { stringify } from "yaml"
import { selectKubeconfig } from "../../../src/services/orchestrator/kubeconfig.js"

const config = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) =>
  stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "a", cluster: { server: "https://a.example:6443/", ...cluster } },
      { name: "b", cluster: { server: "https://b.example" } },
    ],
    users: [
      { name: "a", user },
      { name: "b", user: { token: "tb" } },
    ],
    contexts: [
      { name: "ca", context: { cluster: "a", user: "a" } },
      { name: "cb", context: { cluster: "b", user: "b" } },
    ],
    "current-context": "ca",
  })

describe("kubeconfig selection", () => {
  it("reads the current context's cluster and user, relative files against the kubeconfig's directory", () => {
    const { cluster, user } = selectKubeconfig(
      config(
        { "client-certificate": "certs/admin.crt", "client-key": "/abs/admin.key", as: "jane" },
        { "certificate-authority": "ca.crt", "insecure-skip-tls-verify": true, "tls-server-name": "api" },
      ),
      { file: "/etc/mesh/kubeconfig" },
    )
    expect(cluster).toEqual({
      name: "a",
      server: "https://a.example:6443",
      caFile: "/etc/mesh/ca.crt",
      skipTLSVerify: true,
      tlsServerName: "api",
    })
    expect(user).toEqual({
      name: "a",
      certFile: "/etc/mesh/certs/admin.crt",
      keyFile: "/abs/admin.key",
      impersonateUser: "jane",
      dynamic: false,
    })
  })

  it("takes the context asked for over current-context", () => {
    const { cluster, user } = selectKubeconfig(config({ token: "ta" }), { context: "cb" })
    expect(cluster.server).toBe("https://b.example")
    expect(user).toEqual({ name: "b", token: "tb", dynamic: false })
  })

  it("carries inline data, tokens, token files and basic auth as given", () => {
    const { cluster, user } = selectKubeconfig(
      config(
        {
          "client-certificate-data": "Q0VSVA==",
          "client-key-data": "S0VZ",
          "token-file": "/var/token",
          username: "u",
          password: "p",
        },
        { "certificate-authority-data": "Q0E=" },
      ),
    )
    expect(cluster.caData).toBe("Q0E=")
    expect(user).toMatchObject({
      certData: "Q0VSVA==",
      keyData: "S0VZ",
      tokenFile: "/var/token",
      username: "u",
      password: "p",
      dynamic: false,
    })
  })

  it("marks users with exec or an auth provider as needing the library", () => {
    expect(selectKubeconfig(config({ exec: { command: "get-token" } })).user.dynamic).toBe(true)
    expect(selectKubeconfig(config({ "auth-provider": { name: "oidc", config: {} } })).user.dynamic).toBe(true)
    expect(selectKubeconfig(config({ token: "t" })).user.dynamic).toBe(false)
  })

  it("refuses what the library refuses: no current cluster, a cluster without server, unnamed entries", () => {
    expect(() => selectKubeconfig(config({}), { context: "missing" })).toThrow(/no current cluster/)
    expect(() => selectKubeconfig("clusters: []\ncontexts: []\n")).toThrow(/no current cluster/)
    expect(() =>
      selectKubeconfig(
        stringify({
          clusters: [{ name: "a", cluster: {} }],
          contexts: [{ name: "c", context: { cluster: "a" } }],
          "current-context": "c",
        }),
      ),
    ).toThrow("clusters[0].cluster.server is missing")
    expect(() => selectKubeconfig(stringify({ users: [{ user: {} }] }))).toThrow("users[0].name is missing")
    expect(() => selectKubeconfig("- a list")).toThrow(/not a kubeconfig/)
  })

  it("gives a user with no entry no credentials", () => {
    const yaml = stringify({
      clusters: [{ name: "a", cluster: { server: "http://127.0.0.1:1" } }],
      contexts: [{ name: "c", context: { cluster: "a", user: "nobody" } }],
      "current-context": "c",
    })
    expect(selectKubeconfig(yaml).user).toEqual({ name: "", dynamic: false })
  })
})
