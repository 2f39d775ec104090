/**
 * @module Ssrf
 *
 * Which addresses a webhook may be sent to. A customer chooses the URL, so without a check a
 * webhook is a way to make Waybill's servers call the courier's own network (loopback admin
 * ports, the cloud metadata service, private ranges). Only public unicast addresses pass;
 * everything else goes through an explicit allow-list the host configures (tests use it for
 * their loopback receiver). Addresses come from `ClientIp.parse`, which already refuses
 * octal/hex/short IPv4 forms and unwraps IPv4-mapped IPv6, so `::ffff:127.0.0.1` is checked
 * as `127.0.0.1`.
 */
import * as Option from "effect/Option"
import { ClientIp } from "../access/index.js"

const cidrs = (list: ReadonlyArray<string>): ReadonlyArray<ClientIp.Cidr> =>
  list.map((s) => Option.getOrThrowWith(ClientIp.parseCidr(s), () => new Error(`Ssrf: bad CIDR ${s}`)))

/** IPv4 ranges that are not public unicast (RFC 6890 special-purpose registry and friends). */
const refusedV4 = cidrs([
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // RFC 1918
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local, incl. 169.254.169.254 cloud metadata
  "172.16.0.0/12", // RFC 1918
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation
  "192.88.99.0/24", // 6to4 relay anycast
  "192.168.0.0/16", // RFC 1918
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast
  "240.0.0.0/4" // reserved, incl. 255.255.255.255 broadcast
])

/** Global unicast IPv6 is 2000::/3; these parts of it still lead somewhere else. */
const globalV6 = cidrs(["2000::/3"])
const refusedV6 = cidrs([
  "2001::/32", // Teredo (tunnels to an embedded IPv4)
  "2001:2::/48", // benchmarking
  "2001:10::/28", // ORCHID
  "2001:20::/28", // ORCHIDv2
  "2001:db8::/32", // documentation
  "2002::/16", // 6to4 (tunnels to an embedded IPv4)
  "3fff::/20" // documentation (RFC 9637)
])
// Outside 2000::/3 and therefore refused too, named for the reader: ::/128, ::1 loopback,
// ::/96 IPv4-compatible, 64:ff9b::/96 and 64:ff9b:1::/48 NAT64, 100::/64 discard,
// fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.

/**
 * True when `address` is a public unicast address a webhook may reach. Pure, so the transport
 * checks every DNS answer with exactly the rules the tests pin down.
 */
export const isPublicUnicast = (address: ClientIp.Address): boolean =>
  address.version === 4
    ? !refusedV4.some((c) => ClientIp.contains(c, address))
    : globalV6.some((c) => ClientIp.contains(c, address)) && !refusedV6.some((c) => ClientIp.contains(c, address))

/**
 * Parses the host's allow-list (`--webhook-allow-private 127.0.0.1,::1,10.0.0.0/8`): addresses
 * or CIDRs, comma-separated. None when any entry is invalid, so a typo never widens or silently
 * narrows what is allowed.
 */
export const parseAllowList = (input: string): Option.Option<ReadonlyArray<ClientIp.Cidr>> => {
  const out: Array<ClientIp.Cidr> = []
  for (const raw of input.split(",")) {
    const s = raw.trim()
    if (s === "") continue
    const parsed = s.includes("/")
      ? ClientIp.parseCidr(s)
      : Option.map(ClientIp.parse(s), (address) => ({ address, prefix: address.version === 4 ? 32 : 128 }))
    if (Option.isNone(parsed)) return Option.none()
    out.push(parsed.value)
  }
  return Option.some(out)
}

/** Why an address may not be used, or none when it may: public unicast, or on the allow-list. */
export const check = (
  address: string,
  allow: ReadonlyArray<ClientIp.Cidr> = []
): Option.Option<"unparsable" | "not-public"> => {
  const parsed = ClientIp.parse(address)
  if (Option.isNone(parsed)) return Option.some("unparsable")
  if (isPublicUnicast(parsed.value)) return Option.none()
  return allow.some((c) => ClientIp.contains(c, parsed.value)) ? Option.none() : Option.some("not-public")
}

/**
 * Rules for the URL itself, checked when an endpoint is added and again before every attempt:
 * HTTPS only, no credentials, no fragment. The host name is resolved and checked by the
 * transport at each attempt (a DNS answer may change); an IP literal is checked here already.
 * WHATWG URL parsing normalizes decimal, hex and octal IPv4 spellings (`https://2130706433/`,
 * `https://0x7f.1/`) to dotted form, so they are caught as the loopback address they are.
 */
export const checkUrl = (input: string, allow: ReadonlyArray<ClientIp.Cidr> = []): Option.Option<string> => {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return Option.some("not a valid URL")
  }
  if (url.protocol !== "https:") return Option.some("the URL must use https")
  if (url.username !== "" || url.password !== "") return Option.some("the URL must not contain credentials")
  if (url.hash !== "") return Option.some("the URL must not contain a fragment")
  if (input.length > 2048) return Option.some("the URL is longer than 2048 characters")
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  if (Option.isSome(ClientIp.parse(host)) && Option.isSome(check(host, allow)))
    return Option.some("the URL points to a private or reserved address")
  if (host === "localhost" || host.endsWith(".localhost"))
    return Option.some("the URL points to a private or reserved address")
  return Option.none()
}
