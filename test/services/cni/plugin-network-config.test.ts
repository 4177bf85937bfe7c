/** Reading the network configuration from stdin: decoding (6), version (1), the plugin's fields (7). */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { decodeConfig, pluginConfigOf } from "../../../src/services/cni/plugin-network-config.js"

const CONFIG = {
  cniVersion: "1.0.0",
  name: "k8s-pod-network",
  type: "mesh-cni",
  log_level: "info",
  kubernetes: { kubeconfig: "/etc/cni/net.d/ZZZ-mesh-cni-kubeconfig", exclude_namespaces: ["mesh-system"] },
  prevResult: { cniVersion: "1.0.0", ips: [] },
}

const addConfig = (config: unknown) =>
  Either.flatMap(decodeConfig(JSON.stringify(config), "ADD").result, (decoded) => pluginConfigOf(decoded))

const codeOf = <A>(either: Either.Either<A, { code: number }>) => (Either.isLeft(either) ? either.left.code : undefined)

describe("network configuration", () => {
  it("the reference's config shape is accepted as is", () => {
    const config = Either.getOrThrow(addConfig(CONFIG))
    expect(config.kubernetes).toEqual(CONFIG.kubernetes)
    expect(config.prevResult).toEqual(CONFIG.prevResult)
    expect(config.cniVersion).toBe("1.0.0")
  })

  it("undecodable stdin is error 6, with no version known", () => {
    const decoded = decodeConfig("{not json", "ADD")
    expect(codeOf(decoded.result)).toBe(6)
    expect(decoded.cniVersion).toBeUndefined()
    expect(codeOf(decodeConfig("[1]", "DEL").result)).toBe(6)
  })

  it("an unsupported version is error 1 and the config's version is still reported", () => {
    const decoded = decodeConfig(JSON.stringify({ ...CONFIG, cniVersion: "9.9.9" }), "ADD")
    expect(codeOf(decoded.result)).toBe(1)
    expect(decoded.cniVersion).toBe("9.9.9")
  })

  it("an absent cniVersion is 0.1.0", () => {
    const { cniVersion: _v, ...rest } = CONFIG
    expect(decodeConfig(JSON.stringify(rest), "DEL").cniVersion).toBe("0.1.0")
  })

  it("ADD needs kubernetes.kubeconfig; bad field types are error 7", () => {
    expect(codeOf(addConfig({ ...CONFIG, kubernetes: undefined }))).toBe(7)
    expect(codeOf(addConfig({ ...CONFIG, kubernetes: { kubeconfig: "" } }))).toBe(7)
    expect(codeOf(addConfig({ ...CONFIG, kubernetes: { kubeconfig: "/k", exclude_namespaces: "kube-system" } }))).toBe(
      7,
    )
    expect(codeOf(addConfig({ ...CONFIG, log_level: 3 }))).toBe(7)
  })
})
