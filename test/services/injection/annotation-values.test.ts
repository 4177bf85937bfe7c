/** Validation of annotation values (services/injection/annotation-values.ts). */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import * as check from "../../../src/services/injection/annotation-values.js"

const ok = <A>(r: Either.Either<A, string>) => Either.getOrThrow(r)
const bad = <A>(r: Either.Either<A, string>) => Either.isLeft(r)

describe("annotation values", () => {
  it("quantities", () => {
    for (const q of ["100m", "0.5", "1", "128Mi", "1Gi", "1e3", ".5", "2000m", "1.5G"])
      expect(ok(check.quantity(q))).toBe(q)
    for (const q of ["banana", "", "1 Gi", "10mb", "Mi", "-"]) expect(bad(check.quantity(q))).toBe(true)
  })
  it("port lists", () => {
    expect(ok(check.portList(" 80, 443 ,"))).toBe("80,443")
    expect(ok(check.portList(""))).toBe("")
    expect(ok(check.portListOrWildcard("*"))).toBe("*")
    expect(bad(check.portList("*"))).toBe(true)
    expect(bad(check.portList("80,http"))).toBe(true)
    expect(bad(check.portList("0"))).toBe(true)
    expect(bad(check.portList("65536"))).toBe(true)
  })
  it("CIDR lists", () => {
    expect(ok(check.cidrList("10.0.0.0/8, 192.168.1.1/32"))).toBe("10.0.0.0/8,192.168.1.1/32")
    expect(ok(check.cidrList("fd00::/8,::1/128,2001:db8::ffff:10.0.0.1/128"))).toBe(
      "fd00::/8,::1/128,2001:db8::ffff:10.0.0.1/128",
    )
    expect(ok(check.cidrListOrWildcard("*"))).toBe("*")
    for (const c of ["10.0.0.0", "10.0.0.0/33", "256.0.0.0/8", "10.0.0/8", "fd00::/129", "1::2::3/64", "*"]) {
      expect(bad(check.cidrList(c))).toBe(true)
    }
  })
  it("booleans as Go parses them", () => {
    for (const t of ["true", "1", "t", "TRUE", "True"]) expect(ok(check.boolean(t))).toBe(true)
    for (const f of ["false", "0", "F", "False"]) expect(ok(check.boolean(f))).toBe(false)
    for (const x of ["yes", "on", "", "sometimes"]) expect(bad(check.boolean(x))).toBe(true)
  })
  it("interception modes", () => {
    expect(ok(check.interceptionMode("TPROXY"))).toBe("TPROXY")
    expect(ok(check.interceptionMode("NONE"))).toBe("NONE")
    expect(bad(check.interceptionMode("redirect"))).toBe(true)
  })
  it("interface lists", () => {
    expect(ok(check.interfaceList("eth1, net2"))).toBe("eth1,net2")
    expect(bad(check.interfaceList("eth 1"))).toBe(true)
  })
})

describe("user volume and timing annotations", () => {
  it("reads a name → definition map and a list of named entries", () => {
    expect(check.namedObjects('{"a":{"emptyDir":{}}}')).toEqual(Either.right([{ name: "a", emptyDir: {} }]))
    expect(check.namedObjects('[{"name":"b","emptyDir":{}}]')).toEqual(Either.right([{ name: "b", emptyDir: {} }]))
  })
  it("refuses what is not such a map", () => {
    expect(Either.isLeft(check.namedObjects("{a: b}"))).toBe(true)
    expect(Either.isLeft(check.namedObjects('{"a":1}'))).toBe(true)
    expect(Either.isLeft(check.namedObjects('[{"emptyDir":{}}]'))).toBe(true)
    expect(Either.isLeft(check.namedObjects('"x"'))).toBe(true)
  })
  it("checks whole numbers in range", () => {
    expect(check.integerIn(0, 65535)("15999")).toEqual(Either.right(15999))
    expect(Either.isLeft(check.integerIn(0, 65535)("70000"))).toBe(true)
    expect(Either.isLeft(check.integerIn(0, 65535)("-1"))).toBe(true)
    expect(Either.isLeft(check.integerIn(0, 65535)("1.5"))).toBe(true)
  })
})
