/** The addresses WASM_REFUSE_METADATA_ADDRESSES refuses, in every spelling, and those it lets through. */
import { describe, expect, it } from "vitest"
import { refuseMetadataAddresses } from "../../../../src/services/agent/wasm/address-policy.js"

describe("Wasm address policy", () => {
  const refuse = refuseMetadataAddresses()

  it.each([
    ["169.254.169.254", "link-local"],
    ["169.254.0.1", "link-local"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["0:0:0:0:0:ffff:a9fe:a9fe", "link-local"],
    ["[::ffff:a9fe:1]", "link-local"],
    ["fe80::1", "link-local"],
    ["fd00:ec2::254", "AWS IPv6"],
    ["FD00:EC2::254", "AWS IPv6"],
    ["100.100.100.200", "Alibaba"],
    ["::ffff:100.100.100.200", "Alibaba"],
    ["64:ff9b::169.254.169.254", "NAT64"],
  ])("refuses %s (%s)", (address, what) => {
    const reason = refuse(address)
    expect(reason).toContain(what)
    expect(reason).toContain("WASM_REFUSE_METADATA_ADDRESSES")
  })

  it.each([
    "127.0.0.1",
    "::1",
    "10.0.0.5",
    "192.168.1.1",
    "100.100.100.201",
    "169.255.0.1",
    "fd00:ec3::1",
    "::ffff:127.0.0.1",
    "example.com",
  ])("lets %s through", (address) => {
    expect(refuse(address)).toBeUndefined()
  })
})
