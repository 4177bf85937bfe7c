import { describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import { parseInsecureOptions, sanitizeKubeconfig } from "../../../src/services/multicluster/kubeconfig.js"

const kubeconfig = (user: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server: "https://10.0.0.1:6443", "certificate-authority": "/etc/ca.pem" } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
    "current-context": "c",
    ...extra,
  })

const none = parseInsecureOptions("")

describe("parseInsecureOptions", () => {
  it("splits on commas and ignores blanks", () => {
    expect([...parseInsecureOptions(" exec, gcp,,tokenFile ")]).toEqual(["exec", "gcp", "tokenFile"])
    expect(none.size).toBe(0)
  })
})

describe("sanitizeKubeconfig", () => {
  it("allows inline credentials and keeps clusters (a CA file is only used locally)", () => {
    const result = sanitizeKubeconfig(
      kubeconfig({ token: "t", "client-certificate-data": "Y2VydA==", "client-key-data": "a2V5" }),
      none,
    )
    expect(result._tag).toBe("Allowed")
    if (result._tag !== "Allowed") return
    const doc = parse(result.yaml)
    expect(doc.users[0]).toEqual({
      name: "u",
      user: { token: "t", "client-certificate-data": "Y2VydA==", "client-key-data": "a2V5" },
    })
    expect(doc.clusters[0].cluster["certificate-authority"]).toBe("/etc/ca.pem")
    expect(doc["current-context"]).toBe("c")
  })

  it("allows the OIDC auth provider without listing it", () => {
    expect(sanitizeKubeconfig(kubeconfig({ "auth-provider": { name: "oidc", config: {} } }), none)._tag).toBe("Allowed")
  })

  it.each([
    [{ exec: { command: "/bin/sh", args: ["-c", "id"] } }, "exec is not allowed", "exec"],
    [{ "auth-provider": { name: "gcp" } }, "auth provider gcp is not allowed", "gcp"],
    [{ "auth-provider": { name: "azure" } }, "auth provider azure is not allowed", "azure"],
    [{ "client-key": "/etc/key.pem", "client-certificate-data": "x" }, "clientKey is not allowed", "clientKey"],
    [{ "client-certificate": "/etc/cert.pem" }, "clientCertificate is not allowed", "clientCertificate"],
    [{ tokenFile: "/var/run/token" }, "tokenFile is not allowed", "tokenFile"],
    [{ "token-file": "/var/run/token" }, "tokenFile is not allowed", "tokenFile"],
  ])("refuses %j unless listed", (user, reason, option) => {
    const refused = sanitizeKubeconfig(kubeconfig(user), none)
    expect(refused).toEqual({ _tag: "Refused", reason: `kubeconfig is not allowed: user "u": ${reason}` })
    expect(sanitizeKubeconfig(kubeconfig(user), parseInsecureOptions(`other,${option}`))._tag).toBe("Allowed")
  })

  it("refuses when any user is unsafe, not just the current one", () => {
    const text = stringify({
      users: [
        { name: "ok", user: { token: "t" } },
        { name: "bad", user: { exec: { command: "x" } } },
      ],
    })
    expect(sanitizeKubeconfig(text, none)).toMatchObject({ _tag: "Refused", reason: expect.stringContaining('"bad"') })
  })

  it("drops user fields it does not know", () => {
    const result = sanitizeKubeconfig(kubeconfig({ token: "t", extensions: [{ name: "x" }], "new-thing": 1 }), none)
    expect(result._tag === "Allowed" && parse(result.yaml).users[0].user).toEqual({ token: "t" })
  })

  it("reports text that is not a kubeconfig", () => {
    expect(sanitizeKubeconfig("a: [b", none)._tag).toBe("Invalid")
    expect(sanitizeKubeconfig("just text", none)).toEqual({
      _tag: "Invalid",
      reason: "kubeconfig cannot be loaded: not a mapping",
    })
    expect(sanitizeKubeconfig(stringify({ users: { u: 1 } }), none)._tag).toBe("Invalid")
    expect(sanitizeKubeconfig(stringify({ users: [{ name: "u", user: "x" }] }), none)._tag).toBe("Invalid")
  })
})
