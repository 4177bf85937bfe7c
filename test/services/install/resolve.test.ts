/** `--set` parsing, overlays of `-f` files, profiles and validation errors that name the field. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { deepMerge } from "../../../src/services/install/overlay.js"
import { resolveOperator } from "../../../src/services/install/resolve.js"
import { applySetFlag, parseSetFlag, parseSetKey } from "../../../src/services/install/set-flags.js"

const right = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got ${JSON.stringify(e.left)}`)
  return e.right
}
const left = <A, E>(e: Either.Either<A, E>): E => {
  if (Either.isRight(e)) throw new Error("expected Left")
  return e.left
}

const file = (name: string, spec: string) => ({
  name,
  text: `apiVersion: install.mesh.io/v1alpha1\nkind: IstioOperator\nspec:\n${spec}`,
})

describe("--set keys and values", () => {
  it("splits on unescaped dots and reads list indexes", () => {
    expect(right(parseSetKey("values.global.meshID\\.x"))).toEqual(["values", "global", "meshID.x"])
    expect(right(parseSetKey("components.ingressGateways[0].enabled"))).toEqual([
      "components",
      "ingressGateways",
      0,
      "enabled",
    ])
    expect(right(parseSetKey("spec.hub"))).toEqual(["hub"])
  })

  it("types booleans and numbers, keeps other text", () => {
    expect(right(parseSetFlag("a=true")).value).toBe(true)
    expect(right(parseSetFlag("a=false")).value).toBe(false)
    expect(right(parseSetFlag("a=3")).value).toBe(3)
    expect(right(parseSetFlag("a=1.5")).value).toBe(1.5)
    expect(right(parseSetFlag("a=/dev/stdout")).value).toBe("/dev/stdout")
    expect(right(parseSetFlag("a=x=y")).value).toBe("x=y")
  })

  it("refuses a flag without key=value or with a bad segment", () => {
    expect(left(parseSetFlag("novalue"))).toContain("expected key=value")
    expect(left(parseSetFlag("a..b=1"))).toContain("bad segment")
  })

  it("creates missing mappings, refuses indexes past the end and paths through scalars", () => {
    expect(right(applySetFlag({}, right(parseSetFlag("a.b.c=1"))))).toEqual({ a: { b: { c: 1 } } })
    expect(left(applySetFlag({ l: [] }, right(parseSetFlag("l[3].x=1"))))).toContain("out of range")
    expect(left(applySetFlag({ a: "s" }, right(parseSetFlag("a.b=1"))))).toContain("a is not a mapping")
  })
})

describe("overlays", () => {
  it("merges mappings deeply and replaces lists", () => {
    expect(deepMerge({ a: { b: 1, c: [1, 2] } }, { a: { c: [3], d: 4 } })).toEqual({ a: { b: 1, c: [3], d: 4 } })
  })

  it("applies files left to right, then --set", () => {
    const op = right(
      resolveOperator({
        files: [file("one.yaml", "  hub: one\n  tag: t1\n"), file("two.yaml", "  hub: two\n")],
        sets: ["tag=t3"],
      }),
    )
    expect(op.hub).toBe("two")
    expect(op.tag).toBe("t3")
  })

  it("takes the profile from --set over the files, and values.global.hub", () => {
    const op = right(
      resolveOperator({
        files: [file("p.yaml", "  profile: minimal\n")],
        sets: ["profile=demo", "values.global.hub=reg.example/mesh", "meshConfig.accessLogFile=/dev/stderr"],
      }),
    )
    expect(op.spec.profile).toBe("demo")
    expect(op.hub).toBe("reg.example/mesh")
    expect(op.spec.components?.egressGateways?.[0]?.enabled).toBe(true)
    expect(op.spec.meshConfig?.accessLogFile).toBe("/dev/stderr")
  })

  it("disables a gateway by index and enables CNI", () => {
    const op = right(
      resolveOperator({
        files: [],
        sets: ["components.ingressGateways[0].enabled=false", "components.cni.enabled=true"],
      }),
    )
    expect(op.spec.components?.ingressGateways?.[0]?.enabled).toBe(false)
    expect(op.spec.components?.cni?.enabled).toBe(true)
  })

  it("--revision wins over spec.revision and the install.istio.io group is accepted", () => {
    const op = right(
      resolveOperator({
        files: [
          {
            name: "u.yaml",
            text: "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  revision: a\n",
          },
        ],
        sets: [],
        revision: "canary",
      }),
    )
    expect(op.revision).toBe("canary")
  })
})

describe("validation errors name the field", () => {
  const errors = (sets: ReadonlyArray<string>, files: ReadonlyArray<{ name: string; text: string }> = []) =>
    left(resolveOperator({ files, sets })).join("\n")

  it("a mistyped value", () => {
    expect(errors(["components.pilot.k8s.replicaCount=many"])).toContain("spec.components.pilot.k8s.replicaCount")
  })
  it("an unknown field", () => {
    expect(errors(["components.pilot.k8s.replicas=2"])).toContain("spec.components.pilot.k8s.replicas")
  })
  it("an unknown profile", () => {
    expect(errors(["profile=huge"])).toContain('spec.profile: unknown profile "huge"')
  })
  it("a bad revision", () => {
    expect(errors(["revision=Not_A_Label"])).toContain("spec.revision")
  })
  it("a bad mesh config field", () => {
    expect(errors(["meshConfig.accessLogEncoding=XML"])).toContain("spec.meshConfig.accessLogEncoding")
  })
  it("a file of the wrong kind, with the file named", () => {
    expect(errors([], [{ name: "bad.yaml", text: "apiVersion: v1\nkind: ConfigMap\n" }])).toMatch(
      /bad\.yaml: apiVersion.*\n.*bad\.yaml: kind/,
    )
  })
  it("a file with a bad field", () => {
    expect(errors([], [file("f.yaml", "  components:\n    cni:\n      enabled: maybe\n")])).toContain(
      "spec.components.cni.enabled",
    )
  })
})
