import { describe, expect, it } from "vitest"
import { bindHosts, browserCommand, dashboardUrl, UIS } from "../../../src/services/dashboard/uis.js"

describe("dashboard UIs", () => {
  it("know their pod ports, selectors and paths", () => {
    expect(Object.values(UIS).map((ui) => [ui.name, ui.uiPort, ui.selector, ui.path])).toEqual([
      ["controlz", 9876, "app=meshd", "/"],
      ["meshd-debug", 15014, "app=meshd", "/debug/ui"],
      ["proxy", 15000, "", "/"],
      ["grafana", 3000, "app=grafana", "/"],
      ["jaeger", 16686, "app=jaeger", "/"],
      ["kiali", 20001, "app=kiali", "/kiali"],
      ["prometheus", 9090, "app=prometheus", "/"],
      ["zipkin", 9411, "app=zipkin", "/"],
      ["skywalking", 8080, "app=skywalking-ui", "/"],
    ])
  })

  it("bind both loopbacks for localhost, one IP otherwise, and refuse host names", () => {
    expect(bindHosts("localhost")).toEqual(["127.0.0.1", "::1"])
    expect(bindHosts("0.0.0.0")).toEqual(["0.0.0.0"])
    expect(bindHosts("fe80::1")).toEqual(["fe80::1"])
    expect(bindHosts("::ffff:10.0.0.1")).toEqual(["::ffff:10.0.0.1"])
    for (const bad of ["example.com", "256.1.1.1", "1:2::3::4", ""])
      expect(bindHosts(bad)).toBe(`--address ${bad}: only an IP address or localhost is allowed`)
  })

  it("print URLs with IPv6 bracketed and open them with the platform's opener", () => {
    expect(dashboardUrl("localhost", 4321, "/debug")).toBe("http://localhost:4321/debug")
    expect(dashboardUrl("::1", 80, "/")).toBe("http://[::1]:80/")
    expect(browserCommand("linux").command).toBe("xdg-open")
    expect(browserCommand("darwin").command).toBe("open")
  })
})
