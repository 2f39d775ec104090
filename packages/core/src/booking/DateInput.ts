/**
 * @module DateInput
 *
 * Reads the `Pickupdate` / `Deliverdate` fields of a booking. The spec promises "any parsable
 * date string" plus the friendly `now` and `today`; `Date.parse` cannot be used for that
 * because it reads zone-less strings in the machine's zone (and its accepted forms differ
 * between engines), while a booking means the stop's zone. So the accepted forms are an
 * explicit grammar, parsed by hand; local ones go through {@link fromLocal}.
 *
 * Grammar (surrounding blanks ignored, runs of blanks read as one space, case-insensitive,
 * at most 80 characters):
 *
 * ```text
 * input    = "now" | "today" | unix | iso | written
 * unix     = 10 digits (Unix seconds) | 13 digits (Unix milliseconds)
 * iso      = YYYY-MM-DD [("T" | " ") HH:mm [:ss [.fff]] [zone-iso]]
 * zone-iso = "Z" | ±HH | ±HHmm | ±HH:mm
 * written  = [weekday [.] [,] " "] date [sep time [" "] [zone [" (" comment ")"]]]
 * date     = YYYY/M/D                           (year first: year, month, day)
 *          | M/D/YYYY | M-D-YYYY                (otherwise always US order: month first)
 *          | month [.] " " D [ordinal] [,] " " YYYY       (Nov 27 2026, November 27th, 2026)
 *          | D [ordinal] " " month [.] [,] " " YYYY       (27 Nov 2026, RFC 2822)
 * month    = a month name, or its first 3 or more letters (jan, sept, november)
 * weekday  = a weekday name, or its first 3 or more letters (fri, thurs, friday)
 * sep      = " " | ", " | "T" | " at "
 * time     = H:mm [:ss] [ampm] | H ampm          (H is 0-23, or 1-12 with ampm)
 * ampm     = "am" | "pm" | "a.m." | "p.m."
 * zone     = "Z" | "UT" | "UTC" | "GMT" | EST EDT CST CDT MST MDT PST PDT
 *          | ["GMT" | "UTC"] ±HH [[:]mm]         (-0600, +05:30, GMT-0600)
 * ```
 *
 * Meaning, so every accepted value is exactly one instant:
 * - Numeric dates are never guessed: a 4-digit first field is the year (`2026/11/12`),
 *   otherwise the month comes first (`11-12-2026` and `11/12/2026` are November 12); a day
 *   first (`27/11/2026`) is an invalid date, and two-digit years are not accepted.
 * - A date that does not exist (`Feb 30 2026`, `2026-02-29`) is an error, never rolled over.
 * - A weekday that contradicts the date is an error, not ignored.
 * - With a zone the instant is absolute. Without one the wall time is in the stop's zone; a
 *   wall time that occurs twice (the hour after DST ends) is the earlier instant, one that does
 *   not occur (the hour skipped when DST starts) moves forward by the gap.
 * - A date without a time means the opening of business (`BusinessHours.open`, 08:00 by
 *   default) that day in the stop's zone.
 * - `now` is the request instant; `today` is that too for a pickup, and today's close of
 *   business (never before now) for a delivery.
 * - A JSON number (not a string) is a Unix time too: seconds below 1e11, else milliseconds.
 */
import * as Either from "effect/Either"
import type { BusinessHours } from "../shared/index.js"
import { atClock, fromLocal, type LocalDateTime, parseClock, toLocal } from "../geo/index.js"

/** What a date input is read against: the request instant and the stop it belongs to. */
export interface DateInputContext {
  /** The request instant (epoch ms): what `now` means. */
  readonly nowMs: number
  /** IANA zone of the stop (pickup zone for Pickupdate, delivery zone for Deliverdate). */
  readonly timeZone: string
  /** Which field is read; only `today` depends on it. */
  readonly role: "pickup" | "deliver"
  readonly hours: BusinessHours
}

/** Error texts, without the field name so the caller can prefix it (`Pickupdate is required`). */
export const DateInputMessages = {
  required: "is required",
  unrecognized: "is not a recognizable date",
  invalidDate: "is not a valid calendar date",
  invalidTime: "is not a valid time of day",
  invalidOffset: "has an invalid UTC offset",
  weekdayMismatch: "has a weekday that does not match the date",
  outOfRange: "is out of range"
} as const

/** Longer inputs are never dates (the longest form, a JavaScript `Date.toString()`, is ~60). */
const MAX_LENGTH = 80
/** Below this a numeric input is read as Unix seconds, from here on as milliseconds. */
const SECONDS_LIMIT = 1e11
/** The ECMAScript time value range. */
const MAX_EPOCH_MS = 8.64e15

const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december"
] as const
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const

/** Index of a name given in full or as its first 3 or more letters (`sept`, `thurs`), or -1. */
const nameIndex = (names: ReadonlyArray<string>, token: string): number =>
  token.length < 3 ? -1 : names.findIndex((n) => n.startsWith(token))
/** RFC 2822 section 4.3 named zones, in minutes east of UTC. */
const NAMED_ZONES: Readonly<Record<string, number>> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(z|[+-]\d{2}(?::?\d{2})?)?)?$/
const UNIX_SECONDS = /^\d{10}$/
const UNIX_MILLISECONDS = /^\d{13}$/

// The `written` grammar, read left to right; each part is anchored where the previous ended.
const WEEKDAY_PREFIX = /^([a-z]{3,9})\.?,? /
const DATE_YEAR_FIRST = /^(\d{4})\/(\d{1,2})\/(\d{1,2})/
const DATE_MONTH_FIRST = /^(\d{1,2})([/-])(\d{1,2})\2(\d{4})/
const DATE_NAME_FIRST = /^([a-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})/
const DATE_DAY_NAME = /^(\d{1,2})(?:st|nd|rd|th)? ([a-z]{3,9})\.?,? (\d{4})/
const TIME = /^(?:,? |t| at )(\d{1,2})(?::(\d{2})(?::(\d{2}))?)? ?(am|pm|a\.m\.|p\.m\.)?/
const ZONE = /^ ?([a-z]{1,3}|(?:gmt|utc)?[+-]\d{2}(?::?\d{2})?)(?: \([^()]{1,60}\))?$/

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0

const daysInMonth = (y: number, m: number): number =>
  m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31

const validDate = (y: number, m: number, d: number): boolean => m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m)

const validTime = (h: number, mi: number, s: number): boolean => h <= 23 && mi <= 59 && s <= 59

type Parsed = Either.Either<number, string>

/** A wall time in the context zone; a missing time is the opening of business. */
const local = (
  ctx: DateInputContext,
  y: number,
  m: number,
  d: number,
  time: { readonly hour: number; readonly minute: number; readonly second: number } | undefined,
  ms = 0
): Parsed => {
  if (!validDate(y, m, d)) return Either.left(DateInputMessages.invalidDate)
  const date: LocalDateTime = { year: y, month: m, day: d, hour: 0, minute: 0, second: 0 }
  if (time === undefined) return Either.right(fromLocal(atClock(date, parseClock(ctx.hours.open)), ctx.timeZone))
  if (!validTime(time.hour, time.minute, time.second)) return Either.left(DateInputMessages.invalidTime)
  return Either.right(fromLocal({ ...date, ...time }, ctx.timeZone) + ms)
}

/** An absolute instant given with its offset (minutes east of UTC). */
const absolute = (
  y: number,
  m: number,
  d: number,
  hour: number,
  minute: number,
  second: number,
  ms: number,
  offsetMinutes: number
): Parsed => {
  if (!validDate(y, m, d)) return Either.left(DateInputMessages.invalidDate)
  if (!validTime(hour, minute, second)) return Either.left(DateInputMessages.invalidTime)
  const utc = new Date(0)
  utc.setUTCFullYear(y, m - 1, d)
  utc.setUTCHours(hour, minute, second, ms)
  return Either.right(utc.getTime() - offsetMinutes * 60_000)
}

/** `Z`, `±HH`, `±HHmm` or `±HH:mm` in minutes east of UTC, or undefined when out of range. */
const isoOffset = (s: string): number | undefined => {
  if (s === "z") return 0
  const digits = s.slice(1).replace(":", "")
  const h = Number(digits.slice(0, 2))
  const mi = digits.length > 2 ? Number(digits.slice(2)) : 0
  if (h > 23 || mi > 59) return undefined
  return (s.startsWith("-") ? -1 : 1) * (h * 60 + mi)
}

const parseIso = (m: RegExpExecArray, ctx: DateInputContext): Parsed => {
  const [, ys, mos, ds, hs, mis, ss, frac, zone] = m
  const y = Number(ys)
  const mo = Number(mos)
  const d = Number(ds)
  if (hs === undefined) return local(ctx, y, mo, d, undefined)
  const time = { hour: Number(hs), minute: Number(mis), second: Number(ss ?? 0) }
  // Sub-millisecond digits are dropped, not rounded, so .9999 stays in the same second.
  const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, "0"))
  if (zone === undefined) return local(ctx, y, mo, d, time, ms)
  const offset = isoOffset(zone)
  if (offset === undefined) return Either.left(DateInputMessages.invalidOffset)
  return absolute(y, mo, d, time.hour, time.minute, time.second, ms, offset)
}

/** 1-12 for a month name or its abbreviation, -1 for any other word. */
const monthNumber = (token: string): number => {
  const i = nameIndex(MONTHS, token)
  return i < 0 ? -1 : i + 1
}

/** A zone of the written grammar in minutes east of UTC; a Left for unknown or impossible ones. */
const writtenZone = (zone: string): Either.Either<number, string> => {
  const numeric = /^(?:gmt|utc)?([+-])(\d{2}):?(\d{2})?$/.exec(zone)
  if (numeric === null) {
    return Object.hasOwn(NAMED_ZONES, zone)
      ? Either.right(NAMED_ZONES[zone]!)
      : Either.left(DateInputMessages.unrecognized)
  }
  const h = Number(numeric[2])
  const mi = Number(numeric[3] ?? 0)
  if (h > 23 || mi > 59) return Either.left(DateInputMessages.invalidOffset)
  return Either.right((numeric[1] === "-" ? -1 : 1) * (h * 60 + mi))
}

/** The `written` forms (see the module comment); undefined when the text is not one of them. */
const parseWritten = (text: string, ctx: DateInputContext): Parsed | undefined => {
  let rest = text
  let weekday = -1
  const wd = WEEKDAY_PREFIX.exec(rest)
  if (wd !== null && nameIndex(WEEKDAYS, wd[1]!) >= 0) {
    weekday = nameIndex(WEEKDAYS, wd[1]!)
    rest = rest.slice(wd[0].length)
  }
  // [year, month, day]; a month name that is not one is -1, told apart from a numeric month 0.
  let ymd: readonly [number, number, number]
  let m: RegExpExecArray | null
  if ((m = DATE_YEAR_FIRST.exec(rest)) !== null) ymd = [Number(m[1]), Number(m[2]), Number(m[3])]
  else if ((m = DATE_MONTH_FIRST.exec(rest)) !== null) ymd = [Number(m[4]), Number(m[1]), Number(m[3])]
  else if ((m = DATE_NAME_FIRST.exec(rest)) !== null) ymd = [Number(m[3]), monthNumber(m[1]!), Number(m[2])]
  else if ((m = DATE_DAY_NAME.exec(rest)) !== null) ymd = [Number(m[3]), monthNumber(m[2]!), Number(m[1])]
  else return undefined
  const [y, mo, d] = ymd
  if (mo === -1) return Either.left(DateInputMessages.unrecognized)
  rest = rest.slice(m[0].length)

  let time: { hour: number; minute: number; second: number } | undefined
  let zone: string | undefined
  if (rest !== "") {
    const t = TIME.exec(rest)
    if (t === null) return undefined
    const [, hs, mis, ss, meridiem] = t
    // An hour alone is a time only with am/pm ("3 pm"); "Nov 27 2026 10" is not a date.
    if (mis === undefined && meridiem === undefined) return undefined
    rest = rest.slice(t[0].length)
    if (rest !== "") {
      const z = ZONE.exec(rest)
      if (z === null) return undefined
      zone = z[1]
    }
    let hour = Number(hs)
    if (meridiem !== undefined) {
      if (hour < 1 || hour > 12) return Either.left(DateInputMessages.invalidTime)
      hour = (hour % 12) + (meridiem.startsWith("p") ? 12 : 0)
    }
    time = { hour, minute: Number(mis ?? 0), second: Number(ss ?? 0) }
  }

  if (!validDate(y, mo, d)) return Either.left(DateInputMessages.invalidDate)
  if (weekday >= 0) {
    const probe = new Date(0)
    probe.setUTCFullYear(y, mo - 1, d)
    if (probe.getUTCDay() !== weekday) return Either.left(DateInputMessages.weekdayMismatch)
  }
  if (time === undefined) return local(ctx, y, mo, d, undefined)
  if (zone === undefined) return local(ctx, y, mo, d, time)
  const offset = writtenZone(zone)
  if (Either.isLeft(offset)) return Either.left(offset.left)
  return absolute(y, mo, d, time.hour, time.minute, time.second, 0, offset.right)
}

const inRange = (r: Parsed): Parsed =>
  Either.flatMap(r, (ms) =>
    Math.abs(ms) <= MAX_EPOCH_MS ? Either.right(ms) : Either.left(DateInputMessages.outOfRange)
  )

const parseString = (text: string, ctx: DateInputContext): Parsed => {
  if (text.length > MAX_LENGTH * 4) return Either.left(DateInputMessages.unrecognized)
  const s = text.trim().toLowerCase().replace(/\s+/g, " ")
  if (s === "") return Either.left(DateInputMessages.required)
  if (s.length > MAX_LENGTH) return Either.left(DateInputMessages.unrecognized)
  if (s === "now") return Either.right(ctx.nowMs)
  if (s === "today") {
    if (ctx.role === "pickup") return Either.right(ctx.nowMs)
    const close = atClock(toLocal(ctx.nowMs, ctx.timeZone), parseClock(ctx.hours.close))
    return Either.right(Math.max(ctx.nowMs, fromLocal(close, ctx.timeZone)))
  }
  if (UNIX_SECONDS.test(s)) return inRange(Either.right(Number(s) * 1000))
  if (UNIX_MILLISECONDS.test(s)) return inRange(Either.right(Number(s)))
  const iso = ISO.exec(s)
  if (iso !== null) return inRange(parseIso(iso, ctx))
  return inRange(parseWritten(s, ctx) ?? Either.left(DateInputMessages.unrecognized))
}

/**
 * Reads a date field into an instant (epoch ms). Never throws for any `input` (given a
 * context with a valid zone and schema-valid hours): unreadable values are a `Left` holding a
 * short message without the field name, such as "is not a recognizable date", so the booking
 * can report every problem of a shipment at once.
 */
export const parseDateInput = (input: unknown, ctx: DateInputContext): Either.Either<number, string> => {
  if (typeof input === "string") return parseString(input, ctx)
  if (typeof input === "number") {
    if (!Number.isFinite(input)) return Either.left(DateInputMessages.unrecognized)
    return inRange(Either.right(Math.abs(input) < SECONDS_LIMIT ? input * 1000 : input))
  }
  return Either.left(DateInputMessages.required)
}
