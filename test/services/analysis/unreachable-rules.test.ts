/**
 * Unreachable rules (MSH0130) and ineffective matches (MSH0131) as the reference's validation
 * finds them (issue 35 group 6): matches repeating earlier ones whatever their names, and URI
 * prefix matches covered by an earlier, shorter prefix with the same other conditions.
 */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh } from "./support.js"

const vs = (http: string, section = "http") => mesh("VirtualService", "vs", `{hosts: [reviews], ${section}: [${http}]}`)
const r = "route: [{destination: {host: reviews}}]"
const texts = (name: string, ...docs: ReadonlyArray<string>) => analyze(name, ...docs).map((m) => m.text)
const UNREACHABLE = "virtualservice.UnreachableRuleAnalyzer"
const INEFFECTIVE = "virtualservice.IneffectiveMatchAnalyzer"

describe("virtualservice.UnreachableRuleAnalyzer", () => {
  it("names rules as the reference does and says why", () => {
    expect(texts(UNREACHABLE, vs(`{name: first, ${r}}, {name: second, match: [{uri: {prefix: /a}}], ${r}}`))).toEqual([
      'VirtualService rule "second" not used (route without matches defined before).',
    ])
    expect(texts(UNREACHABLE, vs(`{${r}}, {${r}}`))).toEqual([
      "VirtualService rule #1 not used (only the last rule can have no matches).",
    ])
    expect(
      texts(UNREACHABLE, vs(`{match: [{uri: {exact: /a}}], ${r}}, {match: [{name: again, uri: {exact: /a}}], ${r}}`)),
    ).toEqual(["VirtualService rule #1 not used (all matches used by prior rules)."])
  })

  it("keeps a rule with one new match, and checks TCP rules", () => {
    expect(
      texts(
        UNREACHABLE,
        vs(`{match: [{uri: {exact: /a}}], ${r}}, {match: [{uri: {exact: /a}}, {uri: {exact: /b}}], ${r}}`),
      ),
    ).toEqual([])
    const tcp = "route: [{destination: {host: reviews, port: {number: 9080}}}]"
    expect(texts(UNREACHABLE, vs(`{match: [{port: 9080}], ${tcp}}, {match: [{port: 9080}], ${tcp}}`, "tcp"))).toEqual([
      "VirtualService rule #1 not used (all matches used by prior rules).",
    ])
  })
})

describe("virtualservice.IneffectiveMatchAnalyzer", () => {
  it("reports a match that differs from an earlier one only by name or key order", () => {
    expect(
      texts(
        INEFFECTIVE,
        vs(
          `{name: a, match: [{name: m1, uri: {exact: /x}, method: {exact: GET}}], ${r}}, {name: b, match: [{name: m2, method: {exact: GET}, uri: {exact: /x}}, {uri: {exact: /y}}], ${r}}`,
        ),
      ),
    ).toEqual(['VirtualService rule "b" match "m2" is not used (duplicate/overlapping match in rule "a").'])
  })

  it("reports a URI prefix covered by an earlier, shorter prefix with the same other conditions", () => {
    expect(
      texts(
        INEFFECTIVE,
        vs(`{match: [{uri: {prefix: /debug}}], ${r}}, {name: later, match: [{uri: {prefix: /debugs}}], ${r}}`),
      ),
    ).toEqual([
      'VirtualService rule "later" match #0 of prefix /debugs is not used (duplicate/overlapping match in rule #0 of prefix /debug on #0).',
    ])
  })

  it("does not report prefixes that differ in another condition, or that are not covered", () => {
    const pair = (a: string, b: string) => vs(`{match: [${a}], ${r}}, {match: [${b}], ${r}}`)
    expect(texts(INEFFECTIVE, pair("{uri: {prefix: /debug}, port: 80}", "{uri: {prefix: /debugs}, port: 81}"))).toEqual(
      [],
    )
    expect(
      texts(INEFFECTIVE, pair("{uri: {prefix: /debug}, headers: {x: {exact: a}}}", "{uri: {prefix: /debugs}}")),
    ).toEqual([])
    expect(texts(INEFFECTIVE, pair("{uri: {prefix: /debugs}}", "{uri: {prefix: /debug}}"))).toEqual([])
    expect(texts(INEFFECTIVE, pair("{uri: {prefix: /a}, method: {exact: POST}}", "{uri: {prefix: /ab}}"))).toEqual([])
  })
})
