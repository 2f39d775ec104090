/**
 * @module ClientIp
 *
 * Which address a request comes from, decided without trusting what a client can forge: the
 * socket's peer address, or `X-Forwarded-For` only when the peer is one of the host's trusted
 * proxies (then the right-most address that is not itself a trusted proxy). Addresses are
 * counted and blocked by a key: an IPv4 address as is, an IPv6 address by its /64 (one
 * customer's router usually owns a whole /64, so single v6 addresses are free to rotate).
 */
import * as Option from "effect/Option"

/** A parsed address: 4 or 16 bytes. IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is unwrapped to IPv4. */
export interface Address {
  readonly version: 4 | 6
  readonly bytes: Uint8Array
}

/** A CIDR block. */
export interface Cidr {
  readonly address: Address
  readonly prefix: number
}

const parseV4 = (s: string): Uint8Array | undefined => {
  const parts = s.split(".")
  if (parts.length !== 4) return undefined
  const out = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!
    // Dotted decimal only: no octal (010), hex (0x1) or short forms, which resolvers read differently.
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined
    out[i] = Number(p)
  }
  return out
}

const parseV6 = (input: string): Uint8Array | undefined => {
  let s = input
  const zone = s.indexOf("%")
  if (zone >= 0) s = s.slice(0, zone)
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.length > 45) return undefined
  if (s.includes(".")) {
    // A dotted IPv4 tail (::ffff:1.2.3.4) becomes its two hex groups.
    const colon = s.lastIndexOf(":")
    const v4 = parseV4(s.slice(colon + 1))
    if (v4 === undefined) return undefined
    s = `${s.slice(0, colon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`
  }
  const halves = s.split("::")
  if (halves.length > 2) return undefined
  const group = (h: string): Array<number> | undefined => {
    if (h === "") return []
    const out: Array<number> = []
    for (const g of h.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
      out.push(parseInt(g, 16))
    }
    return out
  }
  const head = group(halves[0]!)
  const rest = halves.length === 2 ? group(halves[1]!) : []
  if (head === undefined || rest === undefined) return undefined
  const count = head.length + rest.length
  if (halves.length === 2 ? count > 7 : count !== 8) return undefined
  const full = halves.length === 2 ? [...head, ...Array<number>(8 - count).fill(0), ...rest] : head
  const out = new Uint8Array(16)
  full.forEach((w, i) => {
    out[i * 2] = w >> 8
    out[i * 2 + 1] = w & 0xff
  })
  return out
}

const isMapped = (b: Uint8Array) => b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff

/** Parses an IPv4 or IPv6 address (brackets and a zone id are allowed); anything else is none. */
export const parse = (input: string): Option.Option<Address> => {
  const s = input.trim().replace(/^\[(.*)\]$/, "$1")
  const v4 = parseV4(s)
  if (v4 !== undefined) return Option.some({ version: 4, bytes: v4 })
  const v6 = parseV6(s)
  if (v6 === undefined) return Option.none()
  return Option.some(isMapped(v6) ? { version: 4, bytes: v6.slice(12) } : { version: 6, bytes: v6 })
}

/** Canonical text: dotted IPv4, or compressed lowercase IPv6 (RFC 5952). */
export const format = (a: Address): string => {
  if (a.version === 4) return Array.from(a.bytes).join(".")
  const words = Array.from({ length: 8 }, (_, i) => (a.bytes[i * 2]! << 8) | a.bytes[i * 2 + 1]!)
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && words[j] === 0) j++
    if (j - i > bestLen) {
      best = i
      bestLen = j - i
    }
    i = j
  }
  const hex = words.map((w) => w.toString(16))
  if (best < 0) return hex.join(":")
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`
}

const maskTo = (a: Address, prefix: number): Address => {
  const bytes = new Uint8Array(a.bytes)
  for (let i = 0; i < bytes.length; i++) {
    const bits = Math.max(0, Math.min(8, prefix - i * 8))
    bytes[i] = bytes[i]! & ((0xff << (8 - bits)) & 0xff)
  }
  return { version: a.version, bytes }
}

/**
 * The key an address is counted and blocked by: IPv4 as is, IPv6 as its /64 (`2001:db8::/64`).
 */
export const blockKey = (a: Address): string => (a.version === 4 ? format(a) : `${format(maskTo(a, 64))}/64`)

/** Parses `10.0.0.0/8`, `2001:db8::/32`, or a bare address (a /32 or /128). */
export const parseCidr = (input: string): Option.Option<Cidr> => {
  const [addr, bits, extra] = input.trim().split("/")
  if (extra !== undefined || addr === undefined) return Option.none()
  return Option.flatMap(parse(addr), (address) => {
    const max = address.version === 4 ? 32 : 128
    if (bits === undefined) return Option.some({ address, prefix: max })
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return Option.none()
    return Option.some({ address: maskTo(address, Number(bits)), prefix: Number(bits) })
  })
}

/** Whether the address lies in the block. */
export const contains = (cidr: Cidr, a: Address): boolean => {
  if (cidr.address.version !== a.version) return false
  const masked = maskTo(a, cidr.prefix)
  return masked.bytes.every((b, i) => b === cidr.address.bytes[i])
}

/**
 * The client address: the peer itself unless the peer is a trusted proxy; then the right-most
 * `X-Forwarded-For` entry that is not a trusted proxy (entries left of it are the client's own
 * claims and cannot be believed). None when the peer address is unknown or unparsable.
 */
export const resolve = (
  peer: string | undefined,
  forwardedFor: string | null,
  trustedProxies: ReadonlyArray<Cidr>
): Option.Option<Address> => {
  if (peer === undefined) return Option.none()
  const direct = parse(peer)
  if (Option.isNone(direct)) return Option.none()
  const trusted = (a: Address) => trustedProxies.some((c) => contains(c, a))
  if (!trusted(direct.value) || forwardedFor === null) return direct
  const hops = forwardedFor
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "")
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parse(hops[i]!)
    if (Option.isNone(hop)) return direct // a garbled chain: fall back to what we know
    if (!trusted(hop.value)) return hop
  }
  return direct
}
