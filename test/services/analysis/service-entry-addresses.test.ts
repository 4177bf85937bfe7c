/** serviceentry.Analyzer (MSH0134) counts addresses the control plane allocated (issue 35 group 6). */
import { describe, expect, it } from "@effect/vitest"
import { analyze, summary } from "./support.js"

const entry = (status: string) =>
  `apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: db, namespace: default}\nspec: {hosts: [db.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS}\n${status}`

describe("serviceentry.Analyzer and allocated addresses", () => {
  it("accepts an entry whose status holds allocated addresses", () => {
    expect(
      analyze("serviceentry.Analyzer", entry("status: {addresses: [{value: 240.240.0.1, host: db.example.com}]}\n")),
    ).toEqual([])
  })

  it("still reports an entry whose status allocated nothing", () => {
    expect(summary(analyze("serviceentry.Analyzer", entry("status: {addresses: []}\n")))).toEqual([
      "MSH0134 ServiceEntry/default/db",
    ])
    expect(summary(analyze("serviceentry.Analyzer", entry("")))).toEqual(["MSH0134 ServiceEntry/default/db"])
  })
})
