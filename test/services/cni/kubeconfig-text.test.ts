/**
 * The plugin's kubeconfig: the server from the service environment (IPv6 bracketed), the token,
 * the CA inline or TLS verification off; the logged copy carries neither token nor CA. The text
 * is checked by loading it into the real orchestrator client library.
 */
import { KubeConfig } from "@kubernetes/client-node"
import { describe, expect, it } from "vitest"
import { kubeconfigText, redactedKubeconfigText, serverUrl } from "../../../src/services/cni/kubeconfig-text.js"

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
const base = {
  protocol: "https",
  host: "10.96.0.1",
  port: "443",
  token: "secret-token",
  caPem: CA,
  skipTlsVerify: false,
}

describe("kubeconfigText", () => {
  it("names the server, the token and the CA", () => {
    const kc = new KubeConfig()
    kc.loadFromString(kubeconfigText(base))
    expect(kc.getCurrentCluster()?.server).toBe("https://10.96.0.1:443")
    expect(Buffer.from(kc.getCurrentCluster()?.caData ?? "", "base64").toString()).toBe(CA)
    expect(kc.getCurrentCluster()?.skipTLSVerify).toBe(false)
    expect(kc.getCurrentUser()?.token).toBe("secret-token")
  })

  it("turns TLS verification off with --skip-tls-verify, carrying no CA", () => {
    const kc = new KubeConfig()
    kc.loadFromString(kubeconfigText({ ...base, skipTlsVerify: true }))
    expect(kc.getCurrentCluster()?.skipTLSVerify).toBe(true)
    expect(kc.getCurrentCluster()?.caData).toBeUndefined()
  })

  it("brackets an IPv6 host", () => {
    expect(serverUrl("https", "fd00::1", "6443")).toBe("https://[fd00::1]:6443")
    expect(serverUrl("http", "api.local", "80")).toBe("http://api.local:80")
  })

  it("redacts the token and the CA for the log", () => {
    const text = redactedKubeconfigText(base, "/sa/ca.crt")
    expect(text).not.toContain("secret-token")
    expect(text).not.toContain(Buffer.from(CA).toString("base64"))
    expect(text).toContain("<CA cert from /sa/ca.crt>")
  })
})
