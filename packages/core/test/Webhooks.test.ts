import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ClientIp from "../src/access/ClientIp.js"
import { Entropy } from "../src/shared/Entropy.js"
import * as Base64 from "../src/shared/internal/base64.js"
import { KeyRing, type SecretPurpose } from "../src/shared/KeyRing.js"
import * as Ssrf from "../src/webhooks/Ssrf.js"
import * as Schedule from "../src/webhooks/WebhookSchedule.js"
import * as Signature from "../src/webhooks/WebhookSignature.js"
import * as Webhooks from "../src/webhooks/Webhooks.js"

const material = (n: number) => Redacted.make(new Uint8Array(32).fill(n))
const ring = KeyRing.fromSecrets(
  Object.fromEntries(
    (["api-key", "ticket", "otp", "webhook"] as const).map((p, i) => [p, [{ id: `${p}-1`, material: material(i + 1) }]])
  ) as unknown as Record<SecretPurpose, ReadonlyArray<{ id: string; material: Redacted.Redacted<Uint8Array> }>>
)
const entropy = Layer.succeed(Entropy, {
  bytes: (n) => Effect.sync(() => globalThis.crypto.getRandomValues(new Uint8Array(n)))
})
const layer = Layer.merge(ring, entropy)

describe("WebhookSignature", () => {
  it.effect("reproduces the Standard Webhooks test vector", () =>
    Effect.gen(function* () {
      const signature = yield* Signature.sign(
        [Redacted.make("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")],
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}'
      )
      expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }).pipe(Effect.provide(layer))
  )

  it.effect("signs with every secret during a rotation, space-separated", () =>
    Effect.gen(function* () {
      const a = Redacted.make(Signature.formatSecret(new Uint8Array(32).fill(7)))
      const b = Redacted.make(Signature.formatSecret(new Uint8Array(32).fill(9)))
      const both = yield* Signature.sign([a, b], "evt_1", 1, "{}")
      const one = yield* Signature.sign([a], "evt_1", 1, "{}")
      const two = yield* Signature.sign([b], "evt_1", 1, "{}")
      expect(both).toBe(`${one} ${two}`)
    }).pipe(Effect.provide(layer))
  )

  it.prop("base64 round-trips and matches the platform's encoder", [fc.uint8Array({ maxLength: 80 })], ([bytes]) => {
    const text = Base64.encodeBase64(bytes)
    expect(text).toBe(btoa(String.fromCharCode(...bytes)))
    expect(Base64.decodeBase64(text)).toEqual(bytes)
    expect(Base64.decodeBase64Url(Base64.encodeBase64Url(bytes))).toEqual(bytes)
  })

  it("reads secrets with and without the whsec_ prefix", () => {
    const secret = Signature.formatSecret(new Uint8Array(32).fill(1))
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Signature.secretBytes(secret)).toEqual(Option.some(new Uint8Array(32).fill(1)))
    expect(Signature.secretBytes(secret.slice(6))).toEqual(Option.some(new Uint8Array(32).fill(1)))
    expect(Signature.secretBytes("whsec_!!")).toEqual(Option.none())
  })
})

describe("WebhookSchedule", () => {
  const s = 1000
  const m = 60 * s
  const h = 60 * m

  it("follows the schedule at the middle of the jitter", () => {
    const expected = [5 * s, 30 * s, 2 * m, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 14 * h, 20 * h, 24 * h]
    expected.forEach((d, i) =>
      expect(Schedule.nextDelay({ attempts: i + 1, status: 500 }, 0.5)).toEqual(Option.some(d))
    )
    expect(Schedule.nextDelay({ attempts: 12, status: 500 }, 0.5)).toEqual(Option.none())
    expect(Schedule.maxAttempts).toBe(12)
    // About three days in all.
    const total = expected.reduce((a, b) => a + b, 0)
    expect(total).toBeGreaterThan(3 * 24 * h)
    expect(total).toBeLessThan(3.5 * 24 * h)
  })

  it.prop(
    "stays within +-20% of the schedule",
    [fc.integer({ min: 1, max: 11 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })],
    ([attempts, random]) => {
      const base = Schedule.delays[attempts - 1]!
      const d = Option.getOrThrow(Schedule.nextDelay({ attempts, status: 503 }, random))
      expect(d).toBeGreaterThanOrEqual(Math.floor(base * 0.8))
      expect(d).toBeLessThanOrEqual(Math.ceil(base * 1.2))
    }
  )

  it.prop(
    "waits at least 60 s after a timeout or a 429",
    [fc.integer({ min: 1, max: 11 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.boolean()],
    ([attempts, random, timedOut]) => {
      const d = Option.getOrThrow(
        Schedule.nextDelay(timedOut ? { attempts, timedOut: true } : { attempts, status: 429 }, random)
      )
      expect(d).toBeGreaterThanOrEqual(60_000)
    }
  )

  it.prop(
    "honours Retry-After up to 2 h beyond the schedule",
    [
      fc.integer({ min: 1, max: 11 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      fc.integer({ min: 0, max: 48 * 3600 })
    ],
    ([attempts, random, seconds]) => {
      const plain = Option.getOrThrow(Schedule.nextDelay({ attempts, status: 429 }, random))
      const d = Option.getOrThrow(Schedule.nextDelay({ attempts, status: 429, retryAfterMs: seconds * 1000 }, random))
      expect(d).toBeGreaterThanOrEqual(Math.min(seconds * 1000, plain + 2 * h))
      expect(d).toBeGreaterThanOrEqual(plain)
      expect(d).toBeLessThanOrEqual(plain + 2 * h)
    }
  )

  it("parses Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-21T12:00:00Z")
    expect(Schedule.parseRetryAfter("120", now)).toEqual(Option.some(120_000))
    expect(Schedule.parseRetryAfter("Sat, 21 Nov 2026 12:05:00 GMT", now)).toEqual(Option.some(300_000))
    expect(Schedule.parseRetryAfter("Sat, 21 Nov 2026 11:00:00 GMT", now)).toEqual(Option.some(0))
    expect(Schedule.parseRetryAfter("soon", now)).toEqual(Option.none())
    expect(Schedule.parseRetryAfter("-5", now)).toEqual(Option.none())
    expect(Schedule.parseRetryAfter(undefined, now)).toEqual(Option.none())
  })
})

describe("Ssrf", () => {
  const pub = (s: string) => Ssrf.isPublicUnicast(Option.getOrThrow(ClientIp.parse(s)))

  it("refuses loopback, private, link-local, metadata, CGNAT, multicast, reserved and tunnels", () => {
    for (const a of [
      "127.0.0.1",
      "127.255.255.254",
      "0.0.0.0",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "169.254.0.1",
      "100.64.0.1",
      "100.127.255.255",
      "224.0.0.1",
      "239.255.255.250",
      "240.0.0.1",
      "255.255.255.255",
      "192.0.2.1",
      "198.51.100.1",
      "203.0.113.1",
      "198.18.0.1",
      "::",
      "::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::ffff:10.0.0.1",
      "::127.0.0.1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "fe80::1%eth0",
      "fec0::1",
      "ff02::1",
      "64:ff9b::7f00:1",
      "64:ff9b::a9fe:a9fe",
      "2002:7f00:1::",
      "2001::1",
      "2001:db8::1",
      "100::1"
    ]) {
      expect([a, pub(a)]).toEqual([a, false])
    }
  })

  it("allows public unicast", () => {
    for (const a of [
      "8.8.8.8",
      "1.1.1.1",
      "93.184.216.34",
      "172.32.0.1",
      "100.128.0.1",
      "2606:4700::1111",
      "2a00:1450::1",
      "::ffff:8.8.8.8"
    ]) {
      expect([a, pub(a)]).toEqual([a, true])
    }
  })

  it("never parses decimal, hex or octal IPv4 spellings as addresses (so they are not trusted as such)", () => {
    for (const a of ["2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "017700000001", "127.1", "127.0.1"]) {
      expect(Ssrf.check(a)).toEqual(Option.some("unparsable"))
    }
  })

  it("refuses URLs to internal addresses in every spelling, and non-HTTPS or credentials", () => {
    for (const url of [
      "https://127.0.0.1/hook",
      "https://2130706433/",
      "https://0x7f000001/",
      "https://0x7f.0.0.1/",
      "https://0177.0.0.1/",
      "https://127.1/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:a9fe:a9fe]/",
      "https://169.254.169.254/latest/meta-data/",
      "https://[fd00::1]/",
      "https://localhost/",
      "http://example.com/",
      "https://user:pw@example.com/",
      "https://example.com/#x",
      "ftp://example.com/",
      "not a url"
    ]) {
      expect([url, Option.isSome(Ssrf.checkUrl(url))]).toEqual([url, true])
    }
    expect(Ssrf.checkUrl("https://example.com/hooks?x=1")).toEqual(Option.none())
    expect(Ssrf.checkUrl("https://8.8.8.8/")).toEqual(Option.none())
  })

  it("lets the allow-list through, and only it", () => {
    const allow = Option.getOrThrow(Ssrf.parseAllowList("127.0.0.1, ::1,10.0.0.0/8"))
    expect(Ssrf.check("127.0.0.1", allow)).toEqual(Option.none())
    expect(Ssrf.check("::1", allow)).toEqual(Option.none())
    expect(Ssrf.check("10.9.9.9", allow)).toEqual(Option.none())
    expect(Ssrf.check("127.0.0.2", allow)).toEqual(Option.some("not-public"))
    expect(Ssrf.check("169.254.169.254", allow)).toEqual(Option.some("not-public"))
    expect(Ssrf.checkUrl("https://127.0.0.1:8443/", allow)).toEqual(Option.none())
    expect(Ssrf.parseAllowList("127.0.0.1,nope")).toEqual(Option.none())
  })

  it.prop(
    "every IPv4 address in a refused block is refused, in mapped form too",
    [fc.constantFrom("10.", "127.", "169.254.", "192.168.", "100.64."), fc.nat(255), fc.nat(255)],
    ([prefix, x, y]) => {
      const a = prefix.split(".").length === 2 ? `${prefix}${x}.${y}.1` : `${prefix}${x}.${y}`
      expect(pub(a)).toBe(false)
      expect(pub(`::ffff:${a}`)).toBe(false)
    }
  )
})

describe("Webhooks", () => {
  it("builds the envelope with data embedded byte for byte", () => {
    const body = Webhooks.envelope({
      id: "evt_01",
      type: "shipment.booked",
      customerNo: "1",
      trackNo: "T1",
      sequence: 3,
      livemode: true,
      occurredAt: Date.parse("2026-11-21T12:00:00.000Z"),
      dataJson: '{"track_no":"T1","name":"Zoë 🚚"}'
    })
    expect(body).toBe(
      '{"id":"evt_01","type":"shipment.booked","timestamp":"2026-11-21T12:00:00.000Z","livemode":true,"sequence":3,"data":{"track_no":"T1","name":"Zoë 🚚"}}'
    )
    expect(JSON.parse(body)).toMatchObject({ id: "evt_01", sequence: 3, data: { name: "Zoë 🚚" } })
  })

  it.effect("seals secrets at rest and opens them again", () =>
    Effect.gen(function* () {
      const secret = Redacted.make(Signature.formatSecret(new Uint8Array(32).fill(3)))
      const sealed = yield* Webhooks.sealSecret(secret)
      expect(sealed).toMatch(/^sealed:v1:webhook-1:/)
      expect(sealed).not.toContain(Redacted.value(secret).slice(6))
      expect(Redacted.value(yield* Webhooks.openSecret(sealed))).toBe(Redacted.value(secret))
      expect(Redacted.value(yield* Webhooks.openSecret("whsec_plain"))).toBe("whsec_plain")
    }).pipe(Effect.provide(layer))
  )
})
