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

describe("parseDateInput: written forms", () => {
  it("reads the common written forms people send (issue 16)", () => {
    expect(local("Nov 27 2026")).toBe("2026-11-27T08:00:00")
    expect(local("November 27, 2026 10:00")).toBe("2026-11-27T10:00:00")
    expect(local("2026/11/27")).toBe("2026-11-27T08:00:00")
    expect(local("11-27-2026")).toBe("2026-11-27T08:00:00")
    expect(read("1795278600")).toBe("2026-11-21T16:30:00.000Z")
    expect(read("1795278600000")).toBe("2026-11-21T16:30:00.000Z")
  })

  it("numeric dates: year first when it has 4 digits, otherwise always month first (US)", () => {
    expect(local("11-12-2026")).toBe("2026-11-12T08:00:00") // November 12, never 11 December
    expect(local("12-11-2026")).toBe("2026-12-11T08:00:00")
    expect(local("11/12/2026")).toBe(local("11-12-2026"))
    expect(local("2026/1/2 7:05")).toBe("2026-01-02T07:05:00")
    expect(local("1-2-2026 7:05 pm")).toBe("2026-01-02T19:05:00")
    expect(read("27-11-2026")).toBe(`error: ${DateInputMessages.invalidDate}`) // day first is not guessed
    expect(read("27/11/2026")).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(read("11-27/2026")).toBe(`error: ${DateInputMessages.unrecognized}`) // mixed separators
    expect(read("11-27-26")).toBe(`error: ${DateInputMessages.unrecognized}`) // two-digit year
    expect(read("2026/27/11")).toBe(`error: ${DateInputMessages.invalidDate}`)
  })

  it("month names, abbreviations, ordinals, weekdays and commas", () => {
    for (const s of [
      "Nov 27, 2026",
      "nov. 27 2026",
      "NOVEMBER 27TH, 2026",
      "27 Nov 2026",
      "27th November, 2026",
      "Fri Nov 27 2026",
      "Friday, November 27, 2026",
      "fri. 27 nov 2026",
      "Fri, Nov 27, 2026"
    ])
      expect(local(s), s).toBe("2026-11-27T08:00:00")
    expect(local("Sept 3 2026")).toBe("2026-09-03T08:00:00")
    expect(local("Thurs, Sep 3 2026")).toBe("2026-09-03T08:00:00")
    expect(read("Sat, Nov 27 2026")).toBe(`error: ${DateInputMessages.weekdayMismatch}`)
    expect(read("Novem 27 2026")).toBe(read("Nov 27 2026"))
    expect(read("Nox 27 2026")).toBe(`error: ${DateInputMessages.unrecognized}`)
    expect(read("No 27 2026")).toBe(`error: ${DateInputMessages.unrecognized}`)
  })

  it("times: 24-hour, am/pm, an hour with am/pm, 'at', and zones", () => {
    expect(local("Nov 27 2026 10:00")).toBe("2026-11-27T10:00:00")
    expect(local("Nov 27 2026, 10:00:30 PM")).toBe("2026-11-27T22:00:30")
    expect(local("November 27, 2026 at 3 pm")).toBe("2026-11-27T15:00:00")
    expect(local("November 27, 2026 at 3pm")).toBe("2026-11-27T15:00:00")
    expect(local("2026/11/27 12:15 a.m.")).toBe("2026-11-27T00:15:00")
    expect(local("2026/11/27T09:45")).toBe("2026-11-27T09:45:00")
    expect(read("Nov 27 2026 10:00 CST")).toBe("2026-11-27T16:00:00.000Z")
    expect(read("Nov 27 2026 10:00 am EST")).toBe("2026-11-27T15:00:00.000Z")
    expect(read("11/27/2026 10:00 UTC")).toBe("2026-11-27T10:00:00.000Z")
    expect(read("11/27/2026 10:00 +05:30")).toBe("2026-11-27T04:30:00.000Z")
    expect(read("Fri Nov 27 2026 10:00:00 GMT-0600 (Central Standard Time)")).toBe("2026-11-27T16:00:00.000Z")
    expect(read("Fri Nov 27 2026 17:00:00 GMT+0100 (Central European Standard Time)")).toBe("2026-11-27T16:00:00.000Z")
    expect(read("Nov 27 2026 10")).toBe(`error: ${DateInputMessages.unrecognized}`) // an hour alone needs am/pm
    expect(read("Nov 27 2026 13 pm")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("Nov 27 2026 10:61")).toBe(`error: ${DateInputMessages.invalidTime}`)
    expect(read("Nov 27 2026 10:00 XYZ")).toBe(`error: ${DateInputMessages.unrecognized}`)
    expect(read("Nov 27 2026 10:00 -2500")).toBe(`error: ${DateInputMessages.invalidOffset}`)
    expect(read("Nov 27 2026 (comment)")).toBe(`error: ${DateInputMessages.unrecognized}`)
  })

  it("rejects impossible dates in every form, never rolling them over", () => {
    for (const s of [
      "Feb 30 2026",
      "February 30, 2026 10:00",
      "30 Feb 2026",
      "2026/02/30",
      "02-30-2026",
      "02/30/2026 9:00 am",
      "Feb 29 2026",
      "Apr 31 2026",
      "Nov 0 2026",
      "2026/00/10"
    ])
      expect(read(s), s).toBe(`error: ${DateInputMessages.invalidDate}`)
    expect(local("Feb 29 2028")).toBe("2028-02-29T08:00:00")
  })

  it("Unix time as a string: exactly 10 digits are seconds, exactly 13 milliseconds", () => {
    expect(read(" 1795278600 ")).toBe("2026-11-21T16:30:00.000Z")
    expect(read("1795278600123")).toBe("2026-11-21T16:30:00.123Z")
    for (const s of ["179527860", "17952786000", "179527860000", "17952786000000", "1795278600.5", "-1795278600"])
      expect(read(s), s).toBe(`error: ${DateInputMessages.unrecognized}`)
  })

  it("blanks and case do not matter", () => {
    expect(read("  NOV   27,  2026  ")).toBe(read("nov 27, 2026"))
    expect(read("November\t27,\n2026   10:00")).toBe(read("november 27, 2026 10:00"))
  })
})

describe("parseDateInput: other inputs", () => {
  it("missing, empty and non-string values are required errors", () => {
    for (const v of [undefined, null, "", "   ", {}, [], true, Symbol("x"), () => 1]) {
      expect(read(v)).toBe(`error: ${DateInputMessages.required}`)
    }
  })

  it("unparseable strings are recognizable-date errors", () => {
    for (const v of ["tomorrow", "banana", "2026", "2026-11", "16:30", "2026-11-21T16", "x".repeat(500)]) {
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
    const inputs = [
      "2026-11-21",
      "2026-11-21T16:30",
      "11/21/2026 4:30 PM",
      "21 Nov 2026 16:30",
      "today",
      "Nov 27 2026",
      "November 27, 2026 10:00",
      "2026/11/27",
      "11-27-2026",
      "1795278600"
    ]
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

describe("parseDateInput: every accepted form means one instant", () => {
  const MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December"
  ]
  const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
  /** Wall-time fields of an instant in a zone, via the same LocalTime the parser trusts. */
  const wall = (t: number, zone: string) => {
    const [d, time] = formatInZone(t, zone).split("T") as [string, string]
    const [year, month, day] = d.split("-").map(Number) as [number, number, number]
    const [hour, minute, second] = time.split(":").map(Number) as [number, number, number]
    const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay()
    return { year, month, day, hour, minute, second, weekday }
  }
  /** The same wall time written in every local (zone-less) form of the grammar. */
  const localForms = (w: ReturnType<typeof wall>): ReadonlyArray<string> => {
    const h12 = w.hour % 12 === 0 ? 12 : w.hour % 12
    const ap = w.hour < 12 ? "am" : "pm"
    const hms = `${p2(w.hour)}:${p2(w.minute)}:${p2(w.second)}`
    const h12ms = `${h12}:${p2(w.minute)}:${p2(w.second)}`
    const mon = MONTHS[w.month - 1]!
    return [
      `${w.year}-${p2(w.month)}-${p2(w.day)}T${hms}`,
      `${w.year}/${p2(w.month)}/${p2(w.day)} ${hms}`,
      `${w.year}/${w.month}/${w.day} ${h12ms} ${ap.toUpperCase()}`,
      `${p2(w.month)}-${p2(w.day)}-${w.year} ${hms}`,
      `${w.month}/${w.day}/${w.year}, ${h12ms} ${ap}`,
      `${mon.slice(0, 3)} ${w.day} ${w.year} ${hms}`,
      `${mon} ${w.day}, ${w.year} at ${h12ms}${ap}`,
      `${DAYS[w.weekday]}, ${mon} ${w.day}, ${w.year} ${hms}`,
      `${DAYS[w.weekday]!.slice(0, 3)}, ${w.day} ${mon.slice(0, 3)} ${w.year} ${hms}`
    ]
  }
  const instant = fc
    .integer({ min: Date.UTC(1971, 0, 1) / 1000, max: Date.UTC(2099, 11, 31) / 1000 })
    .map((s) => s * 1000)

  it("property: a random instant written in every form, local or absolute, parses back to that instant", () => {
    fc.assert(
      fc.property(
        instant,
        fc.constantFrom(...ZONES),
        fc.constantFrom("pickup" as const, "deliver" as const),
        (t, zone, role) => {
          const c = ctx({ timeZone: zone, role })
          const w = wall(t, zone)
          const shown = formatInZone(t, zone)
          for (const s of localForms(w)) {
            const r = parseDateInput(s, c)
            if (Either.isLeft(r)) throw new Error(`${s}: ${r.left}`)
            // The same wall time; the same instant unless that wall time occurs twice (DST end),
            // where the earlier one is meant, at most an hour before.
            expect(formatInZone(r.right, zone), s).toBe(shown)
            expect(r.right === t || (r.right < t && t - r.right <= 3_600_000), s).toBe(true)
            // Deterministic: the same text means the same instant again.
            expect(parseDateInput(s, c), s).toEqual(r)
          }
          // Absolute forms name the instant itself, whatever the stop's zone.
          const u = new Date(t)
          const hmsUtc = `${p2(u.getUTCHours())}:${p2(u.getUTCMinutes())}:${p2(u.getUTCSeconds())}`
          const mon = MONTHS[u.getUTCMonth()]!.slice(0, 3)
          for (const s of [
            String(t / 1000),
            String(t),
            `${u.getUTCFullYear()}-${p2(u.getUTCMonth() + 1)}-${p2(u.getUTCDate())}T${hmsUtc}Z`,
            `${DAYS[u.getUTCDay()]!.slice(0, 3)}, ${u.getUTCDate()} ${mon} ${u.getUTCFullYear()} ${hmsUtc} GMT`,
            `${DAYS[u.getUTCDay()]!.slice(0, 3)} ${mon} ${p2(u.getUTCDate())} ${u.getUTCFullYear()} ${hmsUtc} GMT+0000 (Coordinated Universal Time)`,
            `${u.getUTCMonth() + 1}/${u.getUTCDate()}/${u.getUTCFullYear()} ${hmsUtc} UTC`
          ]) {
            // Unix strings are read only with exactly 10 or 13 digits (from September 2001 on).
            if (/^\d+$/.test(s) && s.length !== 10 && s.length !== 13) continue
            expect(parseDateInput(s, c), s).toEqual(Either.right(t))
          }
        }
      ),
      { numRuns: 400 }
    )
  })

  it("property: a date without a time is the opening of business that day in the stop's zone, in every form", () => {
    fc.assert(
      fc.property(localArb, fc.constantFrom(...ZONES), (l, zone) => {
        const mon = MONTHS[l.month - 1]!
        const expected = `${l.year}-${p2(l.month)}-${p2(l.day)}T08:00:00`
        for (const s of [
          `${l.year}-${p2(l.month)}-${p2(l.day)}`,
          `${l.year}/${l.month}/${l.day}`,
          `${l.month}-${l.day}-${l.year}`,
          `${p2(l.month)}/${p2(l.day)}/${l.year}`,
          `${mon} ${l.day} ${l.year}`,
          `${mon.slice(0, 3)}. ${l.day}, ${l.year}`,
          `${l.day} ${mon} ${l.year}`
        ])
          expect(local(s, ctx({ timeZone: zone })), s).toBe(expected)
      }),
      { numRuns: 300 }
    )
  })

  it("property: a day past the month's end is an invalid date in every form", () => {
    const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate()
    fc.assert(
      fc.property(
        fc.integer({ min: 1971, max: 2099 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 3 }),
        (y, m, over) => {
          const d = daysIn(y, m) + over
          const mon = MONTHS[m - 1]!
          for (const s of [
            `${y}-${p2(m)}-${p2(d)}`,
            `${y}/${m}/${d}`,
            `${m}-${d}-${y}`,
            `${m}/${d}/${y} 10:00`,
            `${mon} ${d} ${y}`,
            `${d} ${mon.slice(0, 3)} ${y} 10:00 GMT`
          ])
            expect(read(s), s).toBe(`error: ${DateInputMessages.invalidDate}`)
        }
      ),
      { numRuns: 200 }
    )
  })
})
