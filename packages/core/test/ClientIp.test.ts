import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import * as ClientIp from "../src/access/ClientIp.js"

const fmt = (s: string) => Option.map(ClientIp.parse(s), ClientIp.format)
const cidrs = (...xs: Array<string>) => xs.map((x) => Option.getOrThrow(ClientIp.parseCidr(x)))
const resolved = (peer: string | undefined, xff: string | null, trusted: Array<string>) =>
  Option.map(ClientIp.resolve(peer, xff, cidrs(...trusted)), ClientIp.format)

describe("ClientIp", () => {
  it("parses and canonicalises IPv4 and IPv6", () => {
    expect(fmt("192.0.2.7")).toEqual(Option.some("192.0.2.7"))
    expect(fmt("2001:DB8:0:0:0:0:0:1")).toEqual(Option.some("2001:db8::1"))
    expect(fmt("[::1]")).toEqual(Option.some("::1"))
    expect(fmt("fe80::1%eth0")).toEqual(Option.some("fe80::1"))
    expect(fmt("::")).toEqual(Option.some("::"))
    expect(fmt("1:2:3:4:5:6:7:8")).toEqual(Option.some("1:2:3:4:5:6:7:8"))
  })

  it("unwraps IPv4-mapped IPv6", () => {
    expect(fmt("::ffff:127.0.0.1")).toEqual(Option.some("127.0.0.1"))
    expect(fmt("::ffff:7f00:1")).toEqual(Option.some("127.0.0.1"))
  })

  it("refuses octal, hex, short and out-of-range forms", () => {
    for (const bad of [
      "010.0.0.1",
      "0x7f.0.0.1",
      "127.1",
      "2130706433",
      "256.0.0.1",
      "1.2.3.4.5",
      "1::2::3",
      "12345::",
      "1:2:3:4:5:6:7:8:9",
      "",
      "localhost",
      "::ffff:1.2.3"
    ]) {
      expect(ClientIp.parse(bad), bad).toEqual(Option.none())
    }
  })

  it("blocks IPv6 by /64 and IPv4 by address", () => {
    const k = (s: string) => ClientIp.blockKey(Option.getOrThrow(ClientIp.parse(s)))
    expect(k("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64")
    expect(k("2001:db8:1:2:bbbb::9")).toBe(k("2001:db8:1:2:aaaa::1"))
    expect(k("2001:db8:1:3::1")).not.toBe(k("2001:db8:1:2::1"))
    expect(k("203.0.113.9")).toBe("203.0.113.9")
  })

  it("matches CIDRs", () => {
    const [ten, v6] = cidrs("10.0.0.0/8", "2001:db8::/32")
    expect(ClientIp.contains(ten!, Option.getOrThrow(ClientIp.parse("10.200.1.1")))).toBe(true)
    expect(ClientIp.contains(ten!, Option.getOrThrow(ClientIp.parse("11.0.0.1")))).toBe(false)
    expect(ClientIp.contains(v6!, Option.getOrThrow(ClientIp.parse("2001:db8:ffff::1")))).toBe(true)
    expect(ClientIp.contains(ten!, Option.getOrThrow(ClientIp.parse("2001:db8::1")))).toBe(false)
    expect(ClientIp.parseCidr("10.0.0.0/33")).toEqual(Option.none())
  })

  it("believes X-Forwarded-For only from trusted proxies", () => {
    expect(resolved("203.0.113.5", "1.2.3.4", [])).toEqual(Option.some("203.0.113.5"))
    expect(resolved("10.0.0.2", "1.2.3.4", ["10.0.0.0/8"])).toEqual(Option.some("1.2.3.4"))
    // the client's own claim (left) is ignored; the right-most untrusted hop counts
    expect(resolved("10.0.0.2", "6.6.6.6, 1.2.3.4, 10.0.0.9", ["10.0.0.0/8"])).toEqual(Option.some("1.2.3.4"))
    expect(resolved("10.0.0.2", "garbage", ["10.0.0.0/8"])).toEqual(Option.some("10.0.0.2"))
    expect(resolved(undefined, "1.2.3.4", [])).toEqual(Option.none())
  })

  it("property: format and parse round-trip for every IPv4 and IPv6 address", () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(fmt(ip)).toEqual(Option.some(ip))
      })
    )
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const once = Option.getOrThrow(ClientIp.parse(ip))
        const text = ClientIp.format(once)
        expect(Option.map(ClientIp.parse(text), ClientIp.format)).toEqual(Option.some(text))
      })
    )
  })

  it("property: arbitrary strings never throw, and an untrusted peer's header never matters", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (peer, xff) => {
        expect(() => ClientIp.parse(peer)).not.toThrow()
        expect(ClientIp.resolve(peer, xff, [])).toEqual(ClientIp.parse(peer))
      })
    )
  })
})
