import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import { defaults } from "../src/shared/Config.js"
import { type DateInputContext, DateInputMessages, parseDateInput } from "../src/booking/DateInput.js"
import { formatInZone } from "../src/geo/LocalTime.js"

const utc = (iso: string): number => {
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) throw new Error(`bad fixture ${iso}`)
  return ms
}

const chicago = "America/Chicago"
/** Friday 2026-11-20 09:00 CST. */
const NOW = utc("2026-11-20T15:00:00Z")
const ctx = (over: Partial<DateInputContext> = {}): DateInputContext => ({
  nowMs: NOW,
  timeZone: chicago,
  role: "pickup",
  hours: defaults.businessHours,
  ...over
})

/** The parsed instant as an ISO UTC string, or the error prefixed with "error: ". */
const read = (input: unknown, c: DateInputContext = ctx()): string =>
  Either.match(parseDateInput(input, c), {
    onLeft: (e) => `error: ${e}`,
    onRight: (ms) => new Date(ms).toISOString()
  })

/** The parsed instant as wall time in the context zone. */
const local = (input: unknown, c: DateInputContext = ctx()): string =>
  Either.match(parseDateInput(input, c), {
    onLeft: (e) => `error: ${e}`,
    onRight: (ms) => formatInZone(ms, c.timeZone)
  })

describe("parseDateInput: friendly values", () => {
  it("now is the request instant, whatever the case and blanks", () => {
    expect(read("now")).toBe("2026-11-20T15:00:00.000Z")
    expect(read("  NOW ")).toBe("2026-11-20T15:00:00.000Z")
    expect(read("Now", ctx({ role: "deliver" }))).toBe("2026-11-20T15:00:00.000Z")
  })

  it("today is now for a pickup and today's close for a delivery", () => {
    expect(read("today")).toBe("2026-11-20T15:00:00.000Z")
    expect(local("Today", ctx({ role: "deliver" }))).toBe("2026-11-20T18:00:00")
    expect(local("today", ctx({ role: "deliver", timeZone: "America/Los_Angeles" }))).toBe("2026-11-20T18:00:00")
  })

  it("today for a delivery after closing time is now, never in the past", () => {
    const late = utc("2026-11-21T02:00:00Z") // 20:00 CST
    expect(read("today", ctx({ role: "deliver", nowMs: late }))).toBe("2026-11-21T02:00:00.000Z")
  })
})

describe("parseDateInput: ISO 8601", () => {
  it("a date alone is the opening of business in the stop's zone", () => {
    expect(read("2026-11-21")).toBe("2026-11-21T14:00:00.000Z")
    expect(local("2026-11-21")).toBe("2026-11-21T08:00:00")
    expect(read("2026-07-01", ctx({ timeZone: "America/Phoenix" }))).toBe("2026-07-01T15:00:00.000Z")
    expect(local("2026-11-21", ctx({ hours: { ...defaults.businessHours, open: "07:30" } }))).toBe(
      "2026-11-21T07:30:00"
    )
  })

  it("a time without offset is local to the stop", () => {
    expect(read("2026-11-21T16:30")).toBe("2026-11-21T22:30:00.000Z")
    expect(read("2026-11-21T16:30:15")).toBe("2026-11-21T22:30:15.000Z")
    expect(read("2026-11-21 16:30:15")).toBe("2026-11-21T22:30:15.000Z")
    expect(read("2026-11-21t16:30:15.250")).toBe("2026-11-21T22:30:15.250Z")
    expect(read("2026-11-21T16:30:15.2")).toBe("2026-11-21T22:30:15.200Z")
    expect(read("2026-07-21T16:30", ctx({ timeZone: "Pacific/Honolulu" }))).toBe("2026-07-22T02:30:00.000Z")
  })

  it("a time in the spring-forward gap moves forward by the gap", () => {
    expect(local("2026-03-08T02:30")).toBe("2026-03-08T03:30:00")
    expect(read("2026-03-08T02:30")).toBe("2026-03-08T08:30:00.000Z")
  })

  it("a time in the fall-back overlap is the earlier instant (CDT)", () => {
    expect(read("2026-11-01T01:30")).toBe("2026-11-01T06:30:00.000Z")
  })

  it("an offset or Z makes it absolute", () => {
    expect(read("2026-11-21T16:30:00Z")).toBe("2026-11-21T16:30:00.000Z")
    expect(read("2026-11-21T16:30:00z")).toBe("2026-11-21T16:30:00.000Z")
    expect(read("2026-11-21T16:30:00-06:00")).toBe("2026-11-21T22:30:00.000Z")
    expect(read("2026-11-21T16:30:00-0600")).toBe("2026-11-21T22:30:00.000Z")
    expect(read("2026-11-21T16:30+05:30")).toBe("2026-11-21T11:00:00.000Z")
    expect(read("2026-11-21T16:30:00.5+01")).toBe("2026-11-21T15:30:00.500Z")
  })

  it("rejects impossible dates, times and offsets", () => {
    expect(read("2026-02-29")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("2028-02-29")).toBe("2028-02-29T14:00:00.000Z")
    expect(read("2026-13-01")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("2026-04-31T10:00")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("2026-11-21T24:00")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("2026-11-21T23:60")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("2026-11-21T23:59:60Z")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("2026-11-21T16:30+25:00")).toBe(`error: ${DateInputMessages.invalidOffset}`)
    expect(read("2026-11-21T16:30+05:75")).toBe(`error: ${DateInputMessages.invalidOffset}`)
  })
})

describe("parseDateInput: MM/DD/YYYY", () => {
  it("a date alone is the opening of business", () => {
    expect(local("11/21/2026")).toBe("2026-11-21T08:00:00")
    expect(local("1/2/2026")).toBe("2026-01-02T08:00:00")
  })

  it("24-hour and AM/PM times are local", () => {
    expect(local("11/21/2026 16:30")).toBe("2026-11-21T16:30:00")
    expect(local("11/21/2026 4:30 PM")).toBe("2026-11-21T16:30:00")
    expect(local("11/21/2026 4:30pm")).toBe("2026-11-21T16:30:00")
    expect(local("11/21/2026, 4:30:15 p.m.")).toBe("2026-11-21T16:30:15")
    expect(local("11/21/2026 12:05 AM")).toBe("2026-11-21T00:05:00")
    expect(local("11/21/2026 12:05 PM")).toBe("2026-11-21T12:05:00")
    expect(read("11/21/2026 4:30 PM")).toBe("2026-11-21T22:30:00.000Z")
  })

  it("rejects impossible dates and times", () => {
    expect(read("02/30/2026")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("13/01/2026")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("00/10/2026")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("11/21/2026 24:00")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("11/21/2026 13:00 PM")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("11/21/2026 0:30 AM")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("11/21/26")).toBe(`error: ${DateInputMessages.unrecognized}`)
  })
})

describe("parseDateInput: RFC 2822", () => {
  it("numeric and named zones are absolute", () => {
    expect(read("Sat, 21 Nov 2026 16:30:00 -0600")).toBe("2026-11-21T22:30:00.000Z")
    expect(read("21 Nov 2026 16:30:00 -0600")).toBe("2026-11-21T22:30:00.000Z")
    expect(read("Sat, 21 Nov 2026 16:30 +0100")).toBe("2026-11-21T15:30:00.000Z")
    expect(read("Sat, 21 Nov 2026 16:30:00 GMT")).toBe("2026-11-21T16:30:00.000Z")
    expect(read("Sat, 21 Nov 2026 16:30:00 UT")).toBe("2026-11-21T16:30:00.000Z")
    expect(read("Sat, 21 Nov 2026 16:30:00 EST")).toBe("2026-11-21T21:30:00.000Z")
    expect(read("Sat, 21 Nov 2026 16:30:00 PDT")).toBe("2026-11-21T23:30:00.000Z")
    expect(read("Saturday, 21 November 2026 16:30:00 CST")).toBe("2026-11-21T22:30:00.000Z")
  })

  it("without a zone it is local, without a time the opening of business", () => {
    expect(local("Sat, 21 Nov 2026 16:30:00")).toBe("2026-11-21T16:30:00")
    expect(local("21 Nov 2026")).toBe("2026-11-21T08:00:00")
  })

  it("rejects a contradicting weekday, impossible dates and unknown zones", () => {
    expect(read("Mon, 21 Nov 2026 16:30:00 -0600")).toBe(`error: ${DateInputMessages.weekdayMismatch}`)
    expect(read("Sat, 31 Nov 2026 16:30:00 -0600")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("21 Nov 2026 24:00:00 -0600")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("21 Nov 2026 16:30:00 XYZ")).toBe(`error: ${DateInputMessages.unrecognized}`)
    expect(read("21 Nov 2026 16:30:00 -2400")).toBe(`error: ${DateInputMessages.invalidOffset}`)
    expect(read("21 Foo 2026")).toBe(`error: ${DateInputMessages.unrecognized}`)
  })
})

describe("parseDateInput: other inputs", () => {
  it("missing, empty and non-string values are required errors", () => {
    for (const v of [undefined, null, "", "   ", {}, [], true, Symbol("x"), () => 1]) {
      expect(read(v)).toBe(`error: ${DateInputMessages.required}`)
    }
  })

  it("unparseable strings are recognizable-date errors", () => {
    for (const v of [
      "tomorrow",
      "banana",
      "2026",
      "2026-11",
      "11-21-2026",
      "16:30",
      "2026-11-21T16",
      "x".repeat(500)
    ]) {
      expect(read(v)).toBe(`error: ${DateInputMessages.unrecognized}`)
    }
  })

  it("numbers are Unix timestamps in seconds or milliseconds", () => {
    expect(read(1_795_278_600)).toBe("2026-11-21T16:30:00.000Z")
    expect(read(1_795_278_600_000)).toBe("2026-11-21T16:30:00.000Z")
    expect(read(Number.NaN)).toBe(`error: ${DateInputMessages.unrecognized}`)
    expect(read(Number.POSITIVE_INFINITY)).toBe(`error: ${DateInputMessages.unrecognized}`)
    expect(read(1e17)).toBe(`error: ${DateInputMessages.outOfRange}`)
  })

  it("does not depend on the machine's time zone", () => {
    const saved = process.env.TZ
    const inputs = ["2026-11-21", "2026-11-21T16:30", "11/21/2026 4:30 PM", "21 Nov 2026 16:30", "today"]
    const before = inputs.map((i) => read(i, ctx({ role: "deliver" })))
    try {
      process.env.TZ = "Asia/Tokyo"
      expect(new Date(2026, 0, 1).getTimezoneOffset()).toBe(-540) // the switch took effect
      expect(inputs.map((i) => read(i, ctx({ role: "deliver" })))).toEqual(before)
    } finally {
      if (saved === undefined) delete process.env.TZ
      else process.env.TZ = saved
    }
  })
})

const ZONES = [
  "America/Chicago",
  "America/Phoenix",
  "Pacific/Honolulu",
  "America/Anchorage",
  "America/New_York"
] as const
const localArb = fc.record({
  year: fc.integer({ min: 1971, max: 2099 }),
  month: fc.integer({ min: 1, max: 12 }),
  day: fc.integer({ min: 1, max: 28 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  second: fc.integer({ min: 0, max: 59 })
})
const p2 = (n: number) => String(n).padStart(2, "0")

describe("parseDateInput: properties", () => {
  it("never throws on arbitrary values", () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const r = parseDateInput(v, ctx())
        expect(Either.isEither(r)).toBe(true)
      }),
      { numRuns: 500 }
    )
  })

  it("never throws on date-like strings, and a Right is always a valid instant", () => {
    const chars = fc.constantFrom(..."0123456789-/:.,+ TZtzAMPampSatNovGMTEST".split(""))
    const dateLike = fc.oneof(
      fc.string(),
      fc.array(chars, { maxLength: 40 }).map((a) => a.join("")),
      fc
        .tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 9999 }))
        .map(([a, b, y]) => `${a}/${b}/${String(y).padStart(4, "0")}`),
      fc
        .tuple(
          fc.integer({ min: 0, max: 9999 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 99 })
        )
        .map(([y, m, d, h, mi]) => `${String(y).padStart(4, "0")}-${p2(m)}-${p2(d)}T${p2(h)}:${p2(mi)}`)
    )
    fc.assert(
      fc.property(
        dateLike,
        fc.constantFrom(...ZONES),
        fc.constantFrom("pickup" as const, "deliver" as const),
        (s, zone, role) => {
          const r = parseDateInput(s, ctx({ timeZone: zone, role }))
          if (Either.isRight(r)) expect(Number.isFinite(new Date(r.right).getTime())).toBe(true)
          else expect(r.left.length).toBeGreaterThan(0)
        }
      ),
      { numRuns: 1000 }
    )
  })

  it("ISO local strings round-trip (gap times move forward)", () => {
    fc.assert(
      fc.property(localArb, fc.constantFrom(...ZONES), (l, zone) => {
        const s = `${l.year}-${p2(l.month)}-${p2(l.day)}T${p2(l.hour)}:${p2(l.minute)}:${p2(l.second)}`
        const r = parseDateInput(s, ctx({ timeZone: zone }))
        if (Either.isLeft(r)) throw new Error(`${s}: ${r.left}`)
        const shown = formatInZone(r.right, zone)
        if (shown !== s) {
          expect(formatInZone(r.right - 3_600_000, zone) < s && s < shown).toBe(true)
        }
        // The space-separated form means the same.
        expect(parseDateInput(s.replace("T", " "), ctx({ timeZone: zone }))).toEqual(r)
      }),
      { numRuns: 500 }
    )
  })

  it("MM/DD/YYYY with AM/PM means the same as the ISO local form", () => {
    fc.assert(
      fc.property(localArb, fc.constantFrom(...ZONES), (l, zone) => {
        const iso = parseDateInput(
          `${l.year}-${p2(l.month)}-${p2(l.day)}T${p2(l.hour)}:${p2(l.minute)}:${p2(l.second)}`,
          ctx({ timeZone: zone })
        )
        const h12 = l.hour % 12 === 0 ? 12 : l.hour % 12
        const us12 = `${l.month}/${l.day}/${l.year} ${h12}:${p2(l.minute)}:${p2(l.second)} ${l.hour < 12 ? "AM" : "PM"}`
        const us24 = `${p2(l.month)}/${p2(l.day)}/${l.year} ${l.hour}:${p2(l.minute)}:${p2(l.second)}`
        expect(parseDateInput(us12, ctx({ timeZone: zone }))).toEqual(iso)
        expect(parseDateInput(us24, ctx({ timeZone: zone }))).toEqual(iso)
      }),
      { numRuns: 300 }
    )
  })

  it("absolute forms (ISO with offset, RFC 2822) give back the instant whatever the stop zone", () => {
    const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    fc.assert(
      fc.property(
        fc.integer({ min: 31_536_000, max: 4_102_444_799 }),
        fc.integer({ min: -12 * 4, max: 14 * 4 }).map((q) => q * 15),
        fc.constantFrom(...ZONES),
        (s, offset, zone) => {
          const t = s * 1000
          const w = new Date(t + offset * 60_000) // wall time at that offset, read through UTC getters
          const sign = offset < 0 ? "-" : "+"
          const oh = p2(Math.floor(Math.abs(offset) / 60))
          const om = p2(Math.abs(offset) % 60)
          const date = `${w.getUTCFullYear()}-${p2(w.getUTCMonth() + 1)}-${p2(w.getUTCDate())}`
          const time = `${p2(w.getUTCHours())}:${p2(w.getUTCMinutes())}:${p2(w.getUTCSeconds())}`
          const iso = `${date}T${time}${sign}${oh}:${om}`
          const rfc = `${DAYS[w.getUTCDay()]}, ${w.getUTCDate()} ${MONTHS[w.getUTCMonth()]} ${w.getUTCFullYear()} ${time} ${sign}${oh}${om}`
          expect(parseDateInput(iso, ctx({ timeZone: zone }))).toEqual(Either.right(t))
          expect(parseDateInput(rfc, ctx({ timeZone: zone }))).toEqual(Either.right(t))
        }
      ),
      { numRuns: 500 }
    )
  })
})
