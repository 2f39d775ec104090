/**
 * The pure rules of portal sessions: timeouts, the write-at-most-once-a-minute rule, recent
 * authentication, CSRF comparison, the same-origin check and the sign-in lock thresholds.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as RateLimits from "../src/access/RateLimiter.js"
import * as Sessions from "../src/access/Sessions.js"

const T0 = 1_800_000_000_000

describe("Sessions.sessionState", () => {
  it("live inside both timeouts; idle after 30 minutes without a request; expired after 12 hours", () => {
    expect(Sessions.sessionState({ createdAt: T0, lastSeenAt: T0 }, T0)).toBe("live")
    expect(Sessions.sessionState({ createdAt: T0, lastSeenAt: T0 }, T0 + Sessions.IDLE_MS - 1)).toBe("live")
    expect(Sessions.sessionState({ createdAt: T0, lastSeenAt: T0 }, T0 + Sessions.IDLE_MS)).toBe("idle")
    const busy = { createdAt: T0, lastSeenAt: T0 + Sessions.ABSOLUTE_MS - 60_000 }
    expect(Sessions.sessionState(busy, T0 + Sessions.ABSOLUTE_MS - 1)).toBe("live")
    expect(Sessions.sessionState(busy, T0 + Sessions.ABSOLUTE_MS)).toBe("expired")
  })

  it.prop(
    "a session is live exactly when within 30 minutes of its last request and 12 hours of its start",
    {
      created: fc.integer({ min: 0, max: 1e12 }),
      seenAfter: fc.integer({ min: 0, max: 13 * 3_600_000 }),
      nowAfter: fc.integer({ min: 0, max: 2 * 3_600_000 })
    },
    ({ created, nowAfter, seenAfter }) => {
      const session = { createdAt: created, lastSeenAt: created + seenAfter }
      const now = session.lastSeenAt + nowAfter
      const live = now - session.lastSeenAt < Sessions.IDLE_MS && now - created < Sessions.ABSOLUTE_MS
      expect(Sessions.sessionState(session, now) === "live").toBe(live)
      // Time only ever ends a session: a later instant is never more alive.
      if (!live) expect(Sessions.sessionState(session, now + 1)).not.toBe("live")
    }
  )

  it.prop(
    "lastSeenAt is written at most once a minute",
    { last: fc.integer({ min: 0, max: 1e12 }), after: fc.integer({ min: 0, max: 600_000 }) },
    ({ after, last }) => {
      expect(Sessions.needsTouch(last, last + after)).toBe(after >= Sessions.TOUCH_INTERVAL_MS)
    }
  )
})

describe("Sessions.isRecent", () => {
  it.prop(
    "recent exactly for 10 minutes after the password was entered",
    { at: fc.integer({ min: 0, max: 1e12 }), after: fc.integer({ min: -60_000, max: 3_600_000 }) },
    ({ after, at }) => {
      expect(Sessions.isRecent({ authenticatedAt: at }, at + after)).toBe(after >= 0 && after < Sessions.RECENT_AUTH_MS)
    }
  )
})

describe("Sessions.checkCsrf", () => {
  const token = "k3Jx9v8Q2m4Zt1Yb6Wc0Pa5Ls7Ne2Rd4Hf8Gj1Ku3Mq"
  const viewer = { csrfToken: Redacted.make(token) }

  it("accepts the session's token only; missing and empty ones never", () => {
    expect(Sessions.checkCsrf(viewer, token)).toBe(true)
    expect(Sessions.checkCsrf(viewer, undefined)).toBe(false)
    expect(Sessions.checkCsrf(viewer, "")).toBe(false)
    expect(Sessions.checkCsrf(viewer, token.slice(0, -1))).toBe(false)
    expect(Sessions.checkCsrf(viewer, `${token}x`)).toBe(false)
    expect(Sessions.checkCsrf({ csrfToken: Redacted.make("") }, "")).toBe(false)
  })

  it.prop("equal strings pass, different ones fail", { a: fc.string(), b: fc.string() }, ({ a, b }) => {
    expect(Sessions.checkCsrf({ csrfToken: Redacted.make(a) }, b)).toBe(a !== "" && a === b)
    expect(Sessions.checkCsrf({ csrfToken: Redacted.make(a) }, a)).toBe(a !== "")
  })
})

describe("Sessions.sameOrigin", () => {
  const expected = "https://portal.example.com"

  it("the Origin header decides; else the Referer; neither, or null, is refused", () => {
    const check = (origin: string | null, referer: string | null, base = expected) =>
      Sessions.sameOrigin({ origin, referer, expected: base })
    expect(check("https://portal.example.com", null)).toBe(true)
    expect(check("https://PORTAL.example.com:443", null)).toBe(true)
    expect(check("https://evil.example", "https://portal.example.com/portal/")).toBe(false)
    expect(check(null, "https://portal.example.com/portal/keys/?x=1")).toBe(true)
    expect(check(null, "https://portal.example.com.evil.example/")).toBe(false)
    expect(check("http://portal.example.com", null)).toBe(false)
    expect(check("https://portal.example.com:8443", null)).toBe(false)
    expect(check("null", null)).toBe(false)
    expect(check(null, null)).toBe(false)
    expect(check("", "")).toBe(false)
    expect(check("https://portal.example.com", null, "https://portal.example.com/some/base/")).toBe(true)
    expect(check("https://portal.example.com", null, "not a url")).toBe(false)
  })

  it.prop(
    "a request is same-origin only when its origin is the expected one",
    {
      scheme: fc.constantFrom("http", "https"),
      host: fc.domain(),
      other: fc.domain(),
      port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })
    },
    ({ host, other, port, scheme }) => {
      const base = `${scheme}://${host}${port === undefined ? "" : `:${port}`}`
      const origin = new URL(base).origin
      expect(Sessions.sameOrigin({ origin, referer: null, expected: base })).toBe(true)
      expect(Sessions.sameOrigin({ origin: null, referer: `${origin}/portal/x`, expected: base })).toBe(true)
      const foreign = `${scheme}://${other}${port === undefined ? "" : `:${port}`}`
      expect(Sessions.sameOrigin({ origin: new URL(foreign).origin, referer: null, expected: base })).toBe(
        new URL(foreign).origin === origin
      )
    }
  )
})

describe("Sessions sign-in limits", () => {
  it("10 failures per name per 15 minutes, 50 per address per hour, then 15 minutes locked", () => {
    expect(Sessions.SIGN_IN_LIMITS).toEqual({
      perAccount: { limit: 10, windowMs: 15 * 60_000 },
      perAddress: { limit: 50, windowMs: 3_600_000 },
      lockoutMs: 15 * 60_000
    })
  })

  it.prop(
    "the failure that reaches the limit locks; none before it does",
    {
      count: fc.integer({ min: 1, max: 200 }),
      limit: fc.constantFrom(Sessions.SIGN_IN_LIMITS.perAccount, Sessions.SIGN_IN_LIMITS.perAddress)
    },
    ({ count, limit }) => {
      expect(Sessions.locks(count, limit)).toBe(count >= limit.limit)
    }
  )

  it.prop(
    "counted in fixed windows: failures spread over more than a window never add up to a lock",
    {
      start: fc.integer({ min: 0, max: 1e12 }),
      gaps: fc.array(fc.integer({ min: 0, max: 20 * 60_000 }), { maxLength: 40 })
    },
    ({ gaps, start }) => {
      const limit = Sessions.SIGN_IN_LIMITS.perAccount
      let counter: RateLimits.Counter | undefined
      let now = start
      for (const gap of gaps) {
        now += gap
        counter = RateLimits.step(counter, now, limit.windowMs)
        // The counter only holds failures of the current window.
        const inWindow = counter.count
        expect(RateLimits.windowStart(now, limit.windowMs)).toBe(counter.windowStart)
        if (Sessions.locks(inWindow, limit)) expect(inWindow).toBeGreaterThanOrEqual(10)
      }
    }
  )

  it("keys: names compared without case; an IPv6 address by its /64; no key for an unknown address", () => {
    expect(Sessions.accountKey(" Ada@Acme.COM ")).toBe(Sessions.accountKey("ada@acme.com"))
    expect(Sessions.addressKey("2001:db8:1:2::5")).toBe(Sessions.addressKey("2001:db8:1:2:ffff::1"))
    expect(Sessions.addressKey("2001:db8:1:3::5")).not.toBe(Sessions.addressKey("2001:db8:1:2::5"))
    expect(Sessions.addressKey("203.0.113.7")).not.toBe(Sessions.addressKey("203.0.113.8"))
    expect(Sessions.addressKey("")).toBeUndefined()
    expect(Sessions.addressKey("unknown")).toBeUndefined()
    expect(Sessions.addressKey("not an address")).toBeUndefined()
  })

  it("tokens have one shape: 43 base64url characters", () => {
    expect(Sessions.isTokenShaped("A".repeat(43))).toBe(true)
    expect(Sessions.isTokenShaped("A".repeat(42))).toBe(false)
    expect(Sessions.isTokenShaped(`${"A".repeat(42)}=`)).toBe(false)
  })
})
