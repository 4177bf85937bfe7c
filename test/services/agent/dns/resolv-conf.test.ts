/** resolv.conf, upstream addresses and DNS_PROXY_ADDR parsing. */
import { describe, expect, it } from "vitest"
import { parseListenAddress } from "../../../../src/services/agent/dns/listen-address.js"
import { parseResolvConf, parseUpstream } from "../../../../src/services/agent/dns/resolv-conf.js"

describe("parseResolvConf", () => {
  it("reads nameservers (port 53) and the last search line, ignoring comments and options", () => {
    const conf = parseResolvConf(
      [
        "# generated",
        "domain old.example",
        "search default.svc.cluster.local svc.cluster.local cluster.local. ; trailing",
        "nameserver 10.96.0.10",
        "nameserver fd00::10",
        "nameserver not-an-ip",
        "options ndots:5",
      ].join("\n"),
    )
    expect(conf.nameservers).toEqual([
      { host: "10.96.0.10", port: 53 },
      { host: "fd00::10", port: 53 },
    ])
    expect(conf.search).toEqual(["default.svc.cluster.local", "svc.cluster.local", "cluster.local"])
  })

  it("gives nothing for an empty file", () => {
    expect(parseResolvConf("")).toEqual({ nameservers: [], search: [] })
  })
})

describe("parseUpstream", () => {
  it("accepts ip:port, [v6]:port and a bare IP", () => {
    expect(parseUpstream("127.0.0.1:5353")).toEqual({ host: "127.0.0.1", port: 5353 })
    expect(parseUpstream("[::1]:5353")).toEqual({ host: "::1", port: 5353 })
    expect(parseUpstream("::1")).toEqual({ host: "::1", port: 53 })
    expect(parseUpstream("10.0.0.1")).toEqual({ host: "10.0.0.1", port: 53 })
    expect(parseUpstream("dns.example:53")).toBeUndefined()
    expect(parseUpstream("10.0.0.1:70000")).toBeUndefined()
  })
})

describe("parseListenAddress", () => {
  it("localhost is the IPv4 loopback, and the IPv6 one where available", () => {
    expect(parseListenAddress("localhost:15053")).toEqual({ required: ["127.0.0.1"], optional: ["::1"], port: 15053 })
  })

  it("takes IPs, bracketed IPv6 and an empty host", () => {
    expect(parseListenAddress("127.0.0.1:53")).toEqual({ required: ["127.0.0.1"], optional: [], port: 53 })
    expect(parseListenAddress("[::1]:15053")).toEqual({ required: ["::1"], optional: [], port: 15053 })
    expect(parseListenAddress(":15053")).toEqual({ required: ["0.0.0.0"], optional: [], port: 15053 })
  })

  it("rejects what it cannot listen on", () => {
    expect(parseListenAddress("localhost")).toMatch(/missing port/)
    expect(parseListenAddress("localhost:x")).toMatch(/bad port/)
    expect(parseListenAddress("localhost:99999")).toMatch(/bad port/)
    expect(parseListenAddress("dns.example:53")).toMatch(/IP address or localhost/)
  })
})
