/**
 * The CNI protocol pieces: CNI_ARGS, the required variables per command, version checks,
 * the VERSION answer, error objects and ADD results.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  addResult,
  CniError,
  checkVersion,
  compareVersions,
  errorObject,
  parseCniArgs,
  parseInvocation,
  resultAddresses,
  versionInfo,
} from "../../../src/services/cni/plugin-protocol.js"

const ADD_ENV = {
  CNI_COMMAND: "ADD",
  CNI_CONTAINERID: "c1",
  CNI_NETNS: "/var/run/netns/pod",
  CNI_IFNAME: "eth0",
  CNI_PATH: "/opt/cni/bin",
  CNI_ARGS: "IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=cart-0;K8S_POD_INFRA_CONTAINER_ID=c1",
}

const codeOf = <A>(either: Either.Either<A, CniError>) => (Either.isLeft(either) ? either.left.code : undefined)

describe("CNI_ARGS", () => {
  it("splits KEY=VALUE pairs; values may contain =; empty pairs are ignored", () => {
    expect(parseCniArgs("A=1;;B=x=y;K8S_POD_NAME=p")).toEqual(Either.right({ A: "1", B: "x=y", K8S_POD_NAME: "p" }))
    expect(parseCniArgs("")).toEqual(Either.right({}))
  })

  it("a pair without a key or = is an invalid environment (4)", () => {
    expect(codeOf(parseCniArgs("A=1;junk"))).toBe(4)
    expect(codeOf(parseCniArgs("=v"))).toBe(4)
  })
})

describe("parseInvocation", () => {
  it("ADD with every variable", () => {
    const invocation = Either.getOrThrow(parseInvocation(ADD_ENV))
    expect(invocation).toMatchObject({ command: "ADD", containerId: "c1", netns: "/var/run/netns/pod", ifName: "eth0" })
    expect(invocation.args).toMatchObject({ K8S_POD_NAMESPACE: "shop", K8S_POD_NAME: "cart-0" })
  })

  it("names the missing variables (error 4); DEL needs no CNI_NETNS; VERSION needs nothing", () => {
    const { CNI_NETNS: _netns, CNI_PATH: _path, ...rest } = ADD_ENV
    const missing = parseInvocation(rest)
    expect(codeOf(missing)).toBe(4)
    expect(Either.isLeft(missing) && missing.left.msg).toBe("required env variables [CNI_NETNS,CNI_PATH] missing")
    expect(Either.isRight(parseInvocation({ ...rest, CNI_PATH: "/p", CNI_COMMAND: "DEL" }))).toBe(true)
    expect(codeOf(parseInvocation({ ...rest, CNI_PATH: "/p", CNI_COMMAND: "CHECK" }))).toBe(4)
    expect(Either.isRight(parseInvocation({ CNI_COMMAND: "VERSION" }))).toBe(true)
  })

  it("a missing or unknown CNI_COMMAND is error 4", () => {
    expect(codeOf(parseInvocation({}))).toBe(4)
    const unknown = parseInvocation({ ...ADD_ENV, CNI_COMMAND: "GC" })
    expect(Either.isLeft(unknown) && unknown.left.msg).toBe("unknown CNI_COMMAND: GC")
  })
})

describe("versions", () => {
  it("compares numerically", () => {
    expect(compareVersions("0.10.0", "0.4.0")).toBeGreaterThan(0)
    expect(compareVersions("1.0", "1.0.0")).toBe(0)
    expect(compareVersions("0.3.1", "0.4.0")).toBeLessThan(0)
  })

  it("accepts the supported versions; others are error 1; CHECK needs 0.4.0", () => {
    expect(checkVersion("1.0.0", "ADD")).toEqual(Either.right("1.0.0"))
    expect(checkVersion("0.3.1", "ADD")).toEqual(Either.right("0.3.1"))
    expect(codeOf(checkVersion("2.0.0", "ADD"))).toBe(1)
    expect(codeOf(checkVersion("0.3.1", "CHECK"))).toBe(1)
    expect(checkVersion("0.4.0", "CHECK")).toEqual(Either.right("0.4.0"))
  })

  it("VERSION reports the implemented version and the supported list", () => {
    expect(versionInfo()).toEqual({
      cniVersion: "1.0.0",
      supportedVersions: ["0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"],
    })
  })
})

describe("outputs", () => {
  it("the error object carries the config's version and omits empty details", () => {
    expect(errorObject(new CniError({ code: 11, msg: "try again", details: "refused" }), "0.4.0")).toEqual({
      cniVersion: "0.4.0",
      code: 11,
      msg: "try again",
      details: "refused",
    })
    expect(errorObject(new CniError({ code: 7, msg: "bad" }))).toEqual({ cniVersion: "1.0.0", code: 7, msg: "bad" })
  })

  it("ADD passes the previous result on unchanged, in the config's version; alone it reports nothing", () => {
    const prev = {
      cniVersion: "1.0.0",
      interfaces: [{ name: "eth0", sandbox: "/var/run/netns/pod" }],
      ips: [{ address: "10.1.0.5/16", gateway: "10.1.0.1", interface: 0 }],
      dns: { nameservers: ["10.96.0.10"] },
    }
    expect(addResult("1.0.0", prev)).toEqual(prev)
    expect(addResult("1.0.0", undefined)).toEqual({ cniVersion: "1.0.0", dns: {} })
  })

  it("reads pod addresses from 0.3+ and 0.2 results", () => {
    expect(resultAddresses({ ips: [{ address: "fd00::5/64" }, { address: "10.0.0.5/24" }] })).toEqual([
      "fd00::5",
      "10.0.0.5",
    ])
    expect(resultAddresses({ ip4: { ip: "10.0.0.6/24" } })).toEqual(["10.0.0.6"])
    expect(resultAddresses(undefined)).toEqual([])
  })
})
