import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { defaults } from "../src/shared/Config.js"
import {
  abbreviation,
  addDays,
  atClock,
  formatInZone,
  formatLocal,
  fromLocal,
  isBusinessDay,
  isoWeekday,
  isValidTimeZone,
  type LocalDateTime,
  nextBusinessDay,
  parseClock,
  rollToBusinessHours,
  startOfDay,
  toLocal
} from "../src/geo/LocalTime.js"

const hours = defaults.businessHours
const utc = (iso: string): number => {
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) throw new Error(`bad fixture ${iso}`)
  return ms
}
const ldt = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0): LocalDateTime => ({
  year,
  month,
  day,
  hour,
  minute,
  second
})
/** Parses formatLocal output back independently of the module under test. */
const parseLocal = (s: string): LocalDateTime => {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(s)
  if (m === null) throw new Error(`not a local timestamp: ${s}`)
  return ldt(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]))
}

const ZONES = [
  "America/Chicago",
  "America/Phoenix",
  "Pacific/Honolulu",
  "America/Anchorage",
  "America/New_York",
  "America/Los_Angeles",
  "America/Denver",
  "America/Puerto_Rico",
  "Asia/Kolkata",
  "Australia/Lord_Howe"
] as const
const zoneArb = fc.constantFrom(...ZONES)
/** Whole-second instants from 1971 to 2099. */
const instantArb = fc.integer({ min: 31_536_000, max: 4_102_444_800 - 1 }).map((s) => s * 1000)
const localArb = fc.record({
  year: fc.integer({ min: 1971, max: 2099 }),
  month: fc.integer({ min: 1, max: 12 }),
  day: fc.integer({ min: 1, max: 28 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  second: fc.integer({ min: 0, max: 59 })
})

describe("toLocal / formatInZone", () => {
  it("reads wall time in the zone, not the machine zone", () => {
    const t = utc("2026-11-21T22:30:00Z")
    expect(formatInZone(t, "America/Chicago")).toBe("2026-11-21T16:30:00")
    expect(formatInZone(t, "America/Phoenix")).toBe("2026-11-21T15:30:00")
    expect(formatInZone(t, "Pacific/Honolulu")).toBe("2026-11-21T12:30:00")
    expect(formatInZone(t, "America/Anchorage")).toBe("2026-11-21T13:30:00")
    expect(formatInZone(t, "Asia/Kolkata")).toBe("2026-11-22T04:00:00")
    expect(toLocal(t, "America/Chicago")).toEqual(ldt(2026, 11, 21, 16, 30, 0))
  })

  it("drops milliseconds towards the past, also before 1970", () => {
    expect(formatInZone(utc("2026-11-21T13:59:59.999Z"), "UTC")).toBe("2026-11-21T13:59:59")
    expect(formatInZone(-1, "UTC")).toBe("1969-12-31T23:59:59")
  })

  it("prints midnight as 00 and pads small years", () => {
    expect(formatInZone(utc("2026-01-01T06:00:00Z"), "America/Chicago")).toBe("2026-01-01T00:00:00")
    expect(formatLocal(ldt(50, 1, 2, 3, 4, 5))).toBe("0050-01-02T03:04:05")
    expect(toLocal(utc("0050-06-01T00:00:00Z"), "UTC")).toEqual(ldt(50, 6, 1))
  })

  it("knows valid zones", () => {
    expect(isValidTimeZone("America/Chicago")).toBe(true)
    expect(isValidTimeZone("Mars/Olympus_Mons")).toBe(false)
    expect(() => toLocal(0, "Mars/Olympus_Mons")).toThrow(RangeError)
  })
})

describe("fromLocal", () => {
  it("converts plain wall times", () => {
    expect(fromLocal(ldt(2026, 11, 21, 16, 30), "America/Chicago")).toBe(utc("2026-11-21T22:30:00Z"))
    expect(fromLocal(ldt(2026, 7, 1, 8), "America/Chicago")).toBe(utc("2026-07-01T13:00:00Z"))
    expect(fromLocal(ldt(2026, 7, 1, 8), "America/Phoenix")).toBe(utc("2026-07-01T15:00:00Z"))
  })

  it("moves a spring-forward gap time forward by the gap", () => {
    const ny = fromLocal(ldt(2026, 3, 8, 2, 30), "America/New_York")
    expect(formatInZone(ny, "America/New_York")).toBe("2026-03-08T03:30:00")
    expect(abbreviation(ny, "America/New_York")).toBe("EDT")
    expect(fromLocal(ldt(2026, 3, 8, 2, 0), "America/Chicago")).toBe(utc("2026-03-08T08:00:00Z"))
    // Lord Howe springs forward by 30 minutes.
    const lh = fromLocal(ldt(2026, 10, 4, 2, 10), "Australia/Lord_Howe")
    expect(formatInZone(lh, "Australia/Lord_Howe")).toBe("2026-10-04T02:40:00")
  })

  it("takes the earlier instant in a fall-back overlap", () => {
    expect(fromLocal(ldt(2026, 11, 1, 1, 30), "America/Chicago")).toBe(utc("2026-11-01T06:30:00Z"))
    expect(abbreviation(utc("2026-11-01T06:30:00Z"), "America/Chicago")).toBe("CDT")
    expect(abbreviation(utc("2026-11-01T07:30:00Z"), "America/Chicago")).toBe("CST")
    expect(formatInZone(utc("2026-11-01T07:30:00Z"), "America/Chicago")).toBe("2026-11-01T01:30:00")
  })

  it("carries over out-of-range fields", () => {
    expect(fromLocal(ldt(2026, 13, 1, 0), "UTC")).toBe(utc("2027-01-01T00:00:00Z"))
    expect(fromLocal(ldt(2026, 3, 0, 12), "UTC")).toBe(utc("2026-02-28T12:00:00Z"))
  })

  it("property: formatInZone parses back to the same instant unless an earlier instant reads the same", () => {
    fc.assert(
      fc.property(instantArb, zoneArb, (t, zone) => {
        const s = formatInZone(t, zone)
        const back = fromLocal(parseLocal(s), zone)
        const inOverlap = formatInZone(t - 3_600_000, zone) === s || formatInZone(t - 1_800_000, zone) === s
        if (inOverlap) {
          expect(back).toBeLessThan(t)
          expect(formatInZone(back, zone)).toBe(s)
        } else {
          expect(back).toBe(t)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("property: round-trips exactly around every 2026 US DST transition (hour by hour)", () => {
    const starts = ["2026-03-08T00:00:00Z", "2026-11-01T00:00:00Z"].map(utc)
    for (const zone of ["America/Chicago", "America/New_York", "America/Los_Angeles", "America/Anchorage"]) {
      for (const start of starts) {
        for (let t = start; t < start + 2 * 86_400_000; t += 15 * 60_000) {
          const s = formatInZone(t, zone)
          const overlap = formatInZone(t - 3_600_000, zone) === s
          expect(fromLocal(parseLocal(s), zone)).toBe(overlap ? t - 3_600_000 : t)
        }
      }
    }
  })

  it("property: every wall time maps to itself, or, in a gap, to a later wall time within the gap", () => {
    fc.assert(
      fc.property(localArb, zoneArb, (l, zone) => {
        const t = fromLocal(l, zone)
        const s = formatLocal(l)
        const shown = formatInZone(t, zone)
        if (shown !== s) {
          // Skipped: an hour earlier the clock read before it, at t it reads after it.
          expect(formatInZone(t - 3_600_000, zone) < s).toBe(true)
          expect(shown > s).toBe(true)
        }
      }),
      { numRuns: 500 }
    )
  })
})

describe("abbreviation", () => {
  it("gives US abbreviations", () => {
    const winter = utc("2026-01-15T18:00:00Z")
    const summer = utc("2026-07-15T18:00:00Z")
    expect(abbreviation(winter, "America/Chicago")).toBe("CST")
    expect(abbreviation(summer, "America/Chicago")).toBe("CDT")
    expect(abbreviation(winter, "America/Los_Angeles")).toBe("PST")
    expect(abbreviation(summer, "America/Los_Angeles")).toBe("PDT")
    expect(abbreviation(summer, "America/Phoenix")).toBe("MST")
    expect(abbreviation(winter, "America/Anchorage")).toBe("AKST")
    expect(abbreviation(summer, "Pacific/Honolulu")).toBe("HST")
    expect(abbreviation(summer, "America/Puerto_Rico")).toBe("AST")
  })

  it("passes GMT-style names through", () => {
    expect(abbreviation(utc("2026-07-15T18:00:00Z"), "Asia/Kolkata")).toBe("GMT+5:30")
  })

  it("switches exactly at the 2026 Chicago transitions", () => {
    // 2026-03-08 02:00 CST -> 03:00 CDT (08:00Z); 2026-11-01 02:00 CDT -> 01:00 CST (07:00Z).
    expect(abbreviation(utc("2026-03-08T07:59:59Z"), "America/Chicago")).toBe("CST")
    expect(abbreviation(utc("2026-03-08T08:00:00Z"), "America/Chicago")).toBe("CDT")
    expect(formatInZone(utc("2026-03-08T08:00:00Z"), "America/Chicago")).toBe("2026-03-08T03:00:00")
    expect(abbreviation(utc("2026-11-01T06:59:59Z"), "America/Chicago")).toBe("CDT")
    expect(abbreviation(utc("2026-11-01T07:00:00Z"), "America/Chicago")).toBe("CST")
  })

  it("property: Chicago is CDT exactly between the 2026 transitions", () => {
    const springs = utc("2026-03-08T08:00:00Z")
    const falls = utc("2026-11-01T07:00:00Z")
    fc.assert(
      fc.property(
        fc.integer({ min: utc("2026-01-01T00:00:00Z") / 1000, max: utc("2027-01-01T00:00:00Z") / 1000 }),
        (s) => {
          const t = s * 1000
          expect(abbreviation(t, "America/Chicago")).toBe(t >= springs && t < falls ? "CDT" : "CST")
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("calendar helpers", () => {
  it("isoWeekday", () => {
    expect(isoWeekday(ldt(2026, 11, 20))).toBe(5)
    expect(isoWeekday(ldt(2026, 11, 21, 23, 59))).toBe(6)
    expect(isoWeekday(ldt(2026, 11, 22))).toBe(7)
    expect(isoWeekday(ldt(2026, 11, 23))).toBe(1)
  })

  it("parseClock", () => {
    expect(parseClock("08:00")).toEqual({ hour: 8, minute: 0 })
    expect(parseClock("23:59")).toEqual({ hour: 23, minute: 59 })
    expect(() => parseClock("24:00")).toThrow(RangeError)
    expect(() => parseClock("8am")).toThrow(RangeError)
  })

  it("addDays counts calendar days and keeps the wall time across DST", () => {
    expect(addDays(ldt(2026, 3, 7, 8), 1)).toEqual(ldt(2026, 3, 8, 8))
    expect(addDays(ldt(2026, 1, 31, 9, 15, 5), 1)).toEqual(ldt(2026, 2, 1, 9, 15, 5))
    expect(addDays(ldt(2028, 2, 28), 1)).toEqual(ldt(2028, 2, 29))
    expect(addDays(ldt(2026, 1, 1), -1)).toEqual(ldt(2025, 12, 31))
    expect(addDays(ldt(2026, 12, 31), 365)).toEqual(ldt(2027, 12, 31))
  })

  it("startOfDay and atClock", () => {
    expect(startOfDay(ldt(2026, 11, 21, 16, 30, 12))).toEqual(ldt(2026, 11, 21))
    expect(atClock(ldt(2026, 11, 21, 16, 30, 12), { hour: 8, minute: 5 })).toEqual(ldt(2026, 11, 21, 8, 5))
  })

  it("nextBusinessDay is strictly after the date", () => {
    expect(nextBusinessDay(ldt(2026, 11, 20, 7), hours)).toEqual(ldt(2026, 11, 23)) // Fri -> Mon
    expect(nextBusinessDay(ldt(2026, 11, 21, 12), hours)).toEqual(ldt(2026, 11, 23)) // Sat -> Mon
    expect(nextBusinessDay(ldt(2026, 11, 18, 23), hours)).toEqual(ldt(2026, 11, 19)) // Wed -> Thu
    expect(nextBusinessDay(ldt(2026, 12, 31), hours)).toEqual(ldt(2027, 1, 1))
    expect(nextBusinessDay(ldt(2026, 11, 21), { ...hours, days: [6] })).toEqual(ldt(2026, 11, 28))
    expect(() => nextBusinessDay(ldt(2026, 11, 21), { ...hours, days: [] })).toThrow(RangeError)
  })
})

describe("rollToBusinessHours", () => {
  const chicago = "America/Chicago"
  const roll = (iso: string) =>
    formatInZone(rollToBusinessHours(fromLocal(parseLocal(iso), chicago), chicago, hours), chicago)

  it("keeps times inside business hours", () => {
    expect(roll("2026-11-20T08:00:00")).toBe("2026-11-20T08:00:00")
    expect(roll("2026-11-20T17:59:59")).toBe("2026-11-20T17:59:59")
  })

  it("moves early times to today's open and late or weekend times to the next business open", () => {
    expect(roll("2026-11-19T07:59:59")).toBe("2026-11-19T08:00:00")
    expect(roll("2026-11-19T00:00:00")).toBe("2026-11-19T08:00:00")
    expect(roll("2026-11-19T18:00:00")).toBe("2026-11-20T08:00:00")
    expect(roll("2026-11-20T18:00:00")).toBe("2026-11-23T08:00:00")
    expect(roll("2026-11-21T10:00:00")).toBe("2026-11-23T08:00:00")
    expect(roll("2026-11-22T07:00:00")).toBe("2026-11-23T08:00:00")
  })

  it("rolls across a DST weekend to the new offset", () => {
    const t = rollToBusinessHours(utc("2026-03-07T16:00:00Z"), chicago, hours)
    expect(formatInZone(t, chicago)).toBe("2026-03-09T08:00:00")
    expect(t).toBe(utc("2026-03-09T13:00:00Z"))
  })

  it("refuses unusable hours", () => {
    expect(() => rollToBusinessHours(0, chicago, { ...hours, open: "18:00", close: "08:00" })).toThrow(RangeError)
    expect(() => rollToBusinessHours(0, chicago, { ...hours, days: [] })).toThrow(RangeError)
  })

  const hoursArb = fc
    .record({
      open: fc.integer({ min: 0, max: 22 * 60 }),
      length: fc.integer({ min: 15, max: 12 * 60 }),
      days: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 })
    })
    .filter((h) => h.open + h.length < 24 * 60 && h.open >= 4 * 60) // stay clear of 00:00-04:00 DST switches
    .map((h) => {
      const clock = (m: number) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`
      return { open: clock(h.open), close: clock(h.open + h.length), days: h.days }
    })

  it("property: the result is within business hours, not before the input, and the opening if moved", () => {
    fc.assert(
      fc.property(instantArb, zoneArb, fc.oneof(fc.constant(hours), hoursArb), (t, zone, h) => {
        const r = rollToBusinessHours(t, zone, h)
        expect(r).toBeGreaterThanOrEqual(t)
        const l = toLocal(r, zone)
        expect(isBusinessDay(l, h)).toBe(true)
        const hhmm = formatLocal(l).slice(11, 16)
        expect(hhmm >= h.open && hhmm < h.close).toBe(true)
        if (r !== t) expect(formatLocal(l).slice(11)).toBe(`${h.open}:00`)
        expect(rollToBusinessHours(r, zone, h)).toBe(r)
      }),
      { numRuns: 500 }
    )
  })

  it("property: monotone (a later input never rolls to an earlier result)", () => {
    fc.assert(
      fc.property(instantArb, fc.integer({ min: 0, max: 7 * 86_400 }), zoneArb, (t, d, zone) => {
        expect(rollToBusinessHours(t + d * 1000, zone, hours)).toBeGreaterThanOrEqual(
          rollToBusinessHours(t, zone, hours)
        )
      })
    )
  })
})

describe("toLocal cache", () => {
  const zones = [
    "America/Chicago",
    "America/New_York",
    "America/Phoenix",
    "America/St_Johns",
    "Asia/Kathmandu",
    "Australia/Lord_Howe",
    "Pacific/Honolulu"
  ]
  const direct = (ms: number, timeZone: string) => {
    const parts = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    }).formatToParts(ms)
    const get = (t: string) => Number(parts.find((p) => p.type === t)!.value)
    return {
      year: get("year"),
      month: get("month"),
      day: get("day"),
      hour: get("hour") % 24,
      minute: get("minute"),
      second: get("second")
    }
  }
  it("transitions off the quarter hour: St. John's changed at 00:01 local until 2011", () => {
    const name = (ms: number) =>
      new Intl.DateTimeFormat("en-US", { timeZone: "America/St_Johns", timeZoneName: "short" })
        .formatToParts(ms)
        .find((p) => p.type === "timeZoneName")!.value
    // Both 2008 changes, minute by minute across the hour around each (02:31 and 03:31 UTC).
    for (const start of [Date.UTC(2008, 10, 2, 2, 0), Date.UTC(2008, 2, 9, 3, 0)]) {
      for (let ms = start; ms < start + 3_600_000; ms += 30_000) {
        expect(toLocal(ms, "America/St_Johns")).toEqual(direct(ms, "America/St_Johns"))
        expect(abbreviation(ms, "America/St_Johns")).toBe(name(ms))
      }
    }
    expect(toLocal(1225593060000, "America/St_Johns")).toEqual(direct(1225593060000, "America/St_Johns"))
  })

  it("property: the quarter-hour offset cache reads every instant as Intl does (incl. 30/45-minute zones)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2040, 0, 1) }),
        fc.constantFrom(...zones),
        (ms, zone) => {
          expect(toLocal(ms, zone)).toEqual(direct(ms, zone))
        }
      ),
      { numRuns: 3000 }
    )
  })
})
