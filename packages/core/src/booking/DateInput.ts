/**
 * @module DateInput
 *
 * Reads the `Pickupdate` / `Deliverdate` fields of a booking. The spec promises "any parsable
 * date string" plus the friendly `now` and `today`; `Date.parse` cannot be used for that
 * because it reads zone-less strings in the machine's zone, while a booking means the stop's
 * zone. So the accepted forms are parsed by hand, local ones through {@link fromLocal}.
 *
 * Accepted (surrounding blanks ignored, case-insensitive):
 * - `now`; `today` (pickup: the request instant; deliver: today's closing time, never before now);
 * - ISO 8601 `YYYY-MM-DD`, `YYYY-MM-DDTHH:mm[:ss[.fff]]` (or a space for `T`), optionally
 *   followed by `Z`, `±HH`, `±HHmm` or `±HH:mm`;
 * - US `MM/DD/YYYY` and `MM/DD/YYYY H:mm[:ss]`, optionally with `AM`/`PM` (a comma after the
 *   year is allowed, as en-US `toLocaleString` writes it);
 * - RFC 2822 `[Sat, ]21 Nov 2026 16:30[:00] -0600` (zone `±hhmm`, `UT`, `GMT`, `Z` or a US
 *   zone name; full day and month names too), and the same without a zone, or without time
 *   and zone, read locally. A weekday that contradicts the date is an error, not ignored;
 * - a finite number: a Unix timestamp, in seconds when below 1e11 (before the year 5138),
 *   otherwise in milliseconds (every ms timestamp after 1973-03-03).
 * A date without a time means the opening of business (`BusinessHours.open`) that day.
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

/** Longer inputs are never dates; refusing them early keeps the regexes cheap. */
const MAX_LENGTH = 64
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

/** Index of a name given in full or as its first three letters, or -1. */
const nameIndex = (names: ReadonlyArray<string>, token: string): number =>
  names.findIndex((n) => n === token || n.slice(0, 3) === token)
/** RFC 2822 section 4.3 named zones, in minutes east of UTC. */
const NAMED_ZONES: Readonly<Record<string, number>> = {
  ut: 0,
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
const US = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:(?:,?\s+|t)(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?)?$/
const RFC2822 =
  /^(?:([a-z]{3,9}),?\s+)?(\d{1,2})\s+([a-z]{3,9})\s+(\d{4})(?:\s+(\d{2}):(\d{2})(?::(\d{2}))?(?:\s+([+-]\d{4}|[a-z]{1,3}))?)?$/

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

const parseUs = (m: RegExpExecArray, ctx: DateInputContext): Parsed => {
  const [, mos, ds, ys, hs, mis, ss, meridiem] = m
  const y = Number(ys)
  const mo = Number(mos)
  const d = Number(ds)
  if (hs === undefined) return local(ctx, y, mo, d, undefined)
  let hour = Number(hs)
  if (meridiem !== undefined) {
    if (hour < 1 || hour > 12) return Either.left(DateInputMessages.invalidTime)
    hour = (hour % 12) + (meridiem.startsWith("p") ? 12 : 0)
  }
  return local(ctx, y, mo, d, { hour, minute: Number(mis), second: Number(ss ?? 0) })
}

const parseRfc2822 = (m: RegExpExecArray, ctx: DateInputContext): Parsed => {
  const [, wd, ds, mon, ys, hs, mis, ss, zone] = m
  const mo = nameIndex(MONTHS, mon ?? "") + 1
  if (mo === 0) return Either.left(DateInputMessages.unrecognized)
  const y = Number(ys)
  const d = Number(ds)
  if (!validDate(y, mo, d)) return Either.left(DateInputMessages.invalidDate)
  if (wd !== undefined) {
    const wi = nameIndex(WEEKDAYS, wd)
    if (wi < 0) return Either.left(DateInputMessages.unrecognized)
    const probe = new Date(0)
    probe.setUTCFullYear(y, mo - 1, d)
    if (probe.getUTCDay() !== wi) return Either.left(DateInputMessages.weekdayMismatch)
  }
  if (hs === undefined) return local(ctx, y, mo, d, undefined)
  const time = { hour: Number(hs), minute: Number(mis), second: Number(ss ?? 0) }
  if (zone === undefined) return local(ctx, y, mo, d, time)
  let offset: number | undefined
  if (zone.startsWith("+") || zone.startsWith("-")) {
    const h = Number(zone.slice(1, 3))
    const mi = Number(zone.slice(3, 5))
    offset = h > 23 || mi > 59 ? undefined : (zone.startsWith("-") ? -1 : 1) * (h * 60 + mi)
    if (offset === undefined) return Either.left(DateInputMessages.invalidOffset)
  } else {
    offset = Object.hasOwn(NAMED_ZONES, zone) ? NAMED_ZONES[zone] : undefined
    if (offset === undefined) return Either.left(DateInputMessages.unrecognized)
  }
  return absolute(y, mo, d, time.hour, time.minute, time.second, 0, offset)
}

const inRange = (r: Parsed): Parsed =>
  Either.flatMap(r, (ms) =>
    Math.abs(ms) <= MAX_EPOCH_MS ? Either.right(ms) : Either.left(DateInputMessages.outOfRange)
  )

const parseString = (text: string, ctx: DateInputContext): Parsed => {
  const s = text.trim().toLowerCase()
  if (s === "") return Either.left(DateInputMessages.required)
  if (s.length > MAX_LENGTH) return Either.left(DateInputMessages.unrecognized)
  if (s === "now") return Either.right(ctx.nowMs)
  if (s === "today") {
    if (ctx.role === "pickup") return Either.right(ctx.nowMs)
    const close = atClock(toLocal(ctx.nowMs, ctx.timeZone), parseClock(ctx.hours.close))
    return Either.right(Math.max(ctx.nowMs, fromLocal(close, ctx.timeZone)))
  }
  const iso = ISO.exec(s)
  if (iso !== null) return inRange(parseIso(iso, ctx))
  const us = US.exec(s)
  if (us !== null) return inRange(parseUs(us, ctx))
  const rfc = RFC2822.exec(s)
  if (rfc !== null) return inRange(parseRfc2822(rfc, ctx))
  return Either.left(DateInputMessages.unrecognized)
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
