/**
 * @module LocalTime
 *
 * Wall-clock arithmetic in IANA time zones, built on `Intl` alone so the core stays pure and
 * never depends on the machine's own zone (`Date.prototype.getHours` and friends do). ETAs,
 * date inputs and the `estimated_delivery` / `destination_tz` fields of a booking all go
 * through here, so formatters are cached per zone: this runs hundreds of times per request.
 *
 * Instants are epoch milliseconds (`number`); local wall times are {@link LocalDateTime}
 * records with whole seconds.
 */
import type { BusinessHours } from "../shared/index.js"

/**
 * A wall-clock reading in some zone (the zone is not part of the value, exactly like the
 * `2026-11-21T16:30:00` strings of the spec). `month` is 1-12, `second` is whole.
 */
export interface LocalDateTime {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
}

/** A time of day parsed from an "HH:mm" configuration value such as `BusinessHours.open`. */
export interface Clock {
  readonly hour: number
  readonly minute: number
}

const MS_PER_SECOND = 1000
const MS_PER_DAY = 86_400_000

const partsFormatters = new Map<string, Intl.DateTimeFormat>()
const nameFormatters = new Map<string, Intl.DateTimeFormat>()

const partsFormatter = (timeZone: string): Intl.DateTimeFormat => {
  let f = partsFormatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      calendar: "gregory",
      numberingSystem: "latn",
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
    partsFormatters.set(timeZone, f)
  }
  return f
}

const nameFormatter = (timeZone: string): Intl.DateTimeFormat => {
  let f = nameFormatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "short" })
    nameFormatters.set(timeZone, f)
  }
  return f
}

/**
 * Whether `Intl` knows the zone. {@link toLocal} and everything built on it throw a
 * `RangeError` for an unknown zone (zones come from the ZIP table, so that is a defect);
 * callers holding a zone from elsewhere can check first.
 */
export const isValidTimeZone = (timeZone: string): boolean => {
  if (partsFormatters.has(timeZone)) return true
  try {
    partsFormatter(timeZone)
    return true
  } catch {
    return false
  }
}

/**
 * The epoch milliseconds of a wall time read as if it were UTC. Unlike `Date.UTC` it keeps
 * years 0-99 as they are, and it normalizes out-of-range fields (month 13 is next January).
 */
const utcOf = (l: LocalDateTime): number => {
  // Date.UTC is the fast way, but reads years 0-99 as 1900-1999.
  if (l.year >= 100) return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second)
  const d = new Date(0)
  d.setUTCFullYear(l.year, l.month - 1, l.day)
  d.setUTCHours(l.hour, l.minute, l.second, 0)
  return d.getTime()
}

/**
 * The UTC wall time of epoch milliseconds, by integer arithmetic (H. Hinnant's
 * civil_from_days): no Date object, which matters on the booking path that calls this often.
 * Instants outside +-10^15 ms (beyond Date's range anyway) go through Date.
 */
const fromUtc = (ms: number): LocalDateTime => {
  if (Number.isSafeInteger(ms) && Math.abs(ms) <= 1e15) {
    const days = Math.floor(ms / MS_PER_DAY)
    const inDay = ms - days * MS_PER_DAY
    const z = days + 719_468
    const era = Math.floor(z / 146_097)
    const doe = z - era * 146_097
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
    const mp = Math.floor((5 * doy + 2) / 153)
    const day = doy - Math.floor((153 * mp + 2) / 5) + 1
    const month = mp < 10 ? mp + 3 : mp - 9
    const seconds = Math.floor(inDay / 1000)
    return {
      year: yoe + era * 400 + (month <= 2 ? 1 : 0),
      month,
      day,
      hour: Math.floor(seconds / 3600),
      minute: Math.floor(seconds / 60) % 60,
      second: seconds % 60
    }
  }
  const d = new Date(ms)
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds()
  }
}

/** The wall-clock reading of an instant straight from Intl (one formatToParts call). */
const intlToLocal = (epochMs: number, timeZone: string): LocalDateTime => {
  const at = Math.floor(epochMs / MS_PER_SECOND) * MS_PER_SECOND
  let year = 0
  let month = 0
  let day = 0
  let hour = 0
  let minute = 0
  let second = 0
  let bc = false
  for (const p of partsFormatter(timeZone).formatToParts(at)) {
    switch (p.type) {
      case "year":
        year = Number(p.value)
        break
      case "month":
        month = Number(p.value)
        break
      case "day":
        day = Number(p.value)
        break
      case "hour":
        // Some ICU builds print midnight as "24" even with h23.
        hour = Number(p.value) % 24
        break
      case "minute":
        minute = Number(p.value)
        break
      case "second":
        second = Number(p.value)
        break
      case "era":
        bc = p.value.startsWith("B")
        break
    }
  }
  return { year: bc ? 1 - year : year, month, day, hour, minute, second }
}

const QUARTER_HOUR = 15 * 60 * MS_PER_SECOND
const offsets = new Map<string, Map<number, number>>()
const abbreviations = new Map<string, Map<number, string>>()

/** Per-zone memo by quarter hour, bounded so a long-running process does not grow without end. */
const memo = <A>(table: Map<string, Map<number, A>>, timeZone: string, block: number, compute: () => A): A => {
  let zone = table.get(timeZone)
  if (zone === undefined) {
    zone = new Map()
    table.set(timeZone, zone)
  }
  let value = zone.get(block)
  if (value === undefined) {
    if (zone.size >= 8192) zone.clear()
    value = compute()
    zone.set(block, value)
  }
  return value
}

/**
 * A zone reading (offset, abbreviation) at an instant, memoized by quarter hour: one Intl call
 * per zone and quarter hour serves the booking hot path. Most transitions fall on quarter
 * hours, but not all (St. John's changed at 00:01 local until 2011), so a quarter hour's
 * reading is trusted only when the next quarter hour reads the same; inside the one quarter
 * hour that holds a transition the instant itself is read.
 */
const readAt = <A extends number | string>(
  table: Map<string, Map<number, A>>,
  timeZone: string,
  epochMs: number,
  read: (at: number) => A
): A => {
  const block = Math.floor(epochMs / QUARTER_HOUR)
  const here = memo(table, timeZone, block, () => read(block * QUARTER_HOUR))
  const next = memo(table, timeZone, block + 1, () => read((block + 1) * QUARTER_HOUR))
  return here === next ? here : read(epochMs)
}

/** Offset of the zone from UTC at an instant, in ms (Chicago in winter: -6 h). */
const offsetAt = (epochMs: number, timeZone: string): number =>
  readAt(offsets, timeZone, epochMs, (at) => utcOf(intlToLocal(at, timeZone)) - at)

/**
 * The wall-clock reading of an instant in an IANA zone (whole seconds; milliseconds are dropped
 * towards the past, so 07:59:59.999 is still before 08:00).
 */
export const toLocal = (epochMs: number, timeZone: string): LocalDateTime => {
  const at = Math.floor(epochMs / MS_PER_SECOND) * MS_PER_SECOND
  return fromUtc(at + offsetAt(at, timeZone))
}

const sameLocal = (a: LocalDateTime, b: LocalDateTime): boolean =>
  a.year === b.year &&
  a.month === b.month &&
  a.day === b.day &&
  a.hour === b.hour &&
  a.minute === b.minute &&
  a.second === b.second

/**
 * The instant at which `timeZone` reads `local` (out-of-range fields are carried over first,
 * like `Date.UTC`). Wall times that do not exist (spring-forward gap) move forward by the
 * length of the gap, so 02:30 on 2026-03-08 in New York is 03:30 EDT; wall times that occur
 * twice (fall-back overlap) give the earlier instant. Both match Temporal's "compatible"
 * disambiguation, which is what people mean when they write such a time.
 */
export const fromLocal = (local: LocalDateTime, timeZone: string): number => {
  const naive = utcOf(local)
  const wanted = fromUtc(naive)
  // Real zones change offset at most once in any two days, so the offsets one day either
  // side are the only candidates.
  const before = offsetAt(naive - MS_PER_DAY, timeZone)
  const after = offsetAt(naive + MS_PER_DAY, timeZone)
  const a = naive - before
  if (before === after) return a
  const b = naive - after
  const aOk = sameLocal(toLocal(a, timeZone), wanted)
  const bOk = sameLocal(toLocal(b, timeZone), wanted)
  if (aOk && bOk) return Math.min(a, b)
  if (aOk) return a
  if (bOk) return b
  // In a gap: read the wall time with the offset in force before the transition.
  return a
}

const pad = (n: number, width: number): string => {
  const s = String(Math.abs(n)).padStart(width, "0")
  return n < 0 ? `-${s}` : s
}

/** `2026-11-21T16:30:00`: the spec's "ISO 8601 local timestamp without offset". */
export const formatLocal = (local: LocalDateTime): string =>
  `${pad(local.year, 4)}-${pad(local.month, 2)}-${pad(local.day, 2)}T${pad(local.hour, 2)}:${pad(
    local.minute,
    2
  )}:${pad(local.second, 2)}`

/** {@link formatLocal} of the instant's wall time in `timeZone`. */
export const formatInZone = (epochMs: number, timeZone: string): string => formatLocal(toLocal(epochMs, timeZone))

/**
 * The short zone name US customers expect next to a local time (`destination_tz`): CST/CDT,
 * PST/PDT, MST for Phoenix, AKST, HST, AST for Puerto Rico. Where en-US has no abbreviation
 * Intl answers like `GMT+5:30`, and that is returned unchanged rather than invented.
 */
export const abbreviation = (epochMs: number, timeZone: string): string =>
  readAt(abbreviations, timeZone, epochMs, (at) => {
    for (const p of nameFormatter(timeZone).formatToParts(at)) {
      if (p.type === "timeZoneName") return p.value
    }
    return timeZone
  })

/** ISO weekday of the local date: 1 = Monday ... 7 = Sunday, as in `BusinessHours.days`. */
export const isoWeekday = (local: LocalDateTime): number => {
  const d = new Date(utcOf({ ...local, hour: 12, minute: 0, second: 0 })).getUTCDay()
  return d === 0 ? 7 : d
}

/**
 * Parses an "HH:mm" configuration clock. Configuration is schema-checked, so a malformed value
 * is a defect and throws a `RangeError` instead of being silently read as midnight.
 */
const clocks = new Map<string, Clock>()

export const parseClock = (hhmm: string): Clock => {
  const known = clocks.get(hhmm)
  if (known !== undefined) return known
  const m = /^(\d{1,2}):(\d{2})$/.exec(hhmm)
  const hour = Number(m?.[1])
  const minute = Number(m?.[2])
  if (m === null || hour > 23 || minute > 59) {
    throw new RangeError(`Invalid "HH:mm" clock: ${JSON.stringify(hhmm)}`)
  }
  // Configuration holds a handful of clocks; memoised so the booking path parses none.
  const clock = { hour, minute }
  if (clocks.size < 256) clocks.set(hhmm, clock)
  return clock
}

/**
 * The same wall time `n` calendar days later (or earlier for negative `n`). Calendar days, not
 * 24-hour periods: across a DST change 08:00 stays 08:00.
 */
export const addDays = (local: LocalDateTime, n: number): LocalDateTime =>
  fromUtc(utcOf({ ...local, day: local.day + n }))

/** 00:00:00 of the same local date. */
export const startOfDay = (local: LocalDateTime): LocalDateTime => ({ ...local, hour: 0, minute: 0, second: 0 })

/** The same local date at a configured clock (e.g. `open` or a service `deadline`), second 0. */
export const atClock = (local: LocalDateTime, clock: Clock): LocalDateTime => ({
  ...local,
  hour: clock.hour,
  minute: clock.minute,
  second: 0
})

/** Whether the local date falls on one of `hours.days`. */
export const isBusinessDay = (local: LocalDateTime, hours: BusinessHours): boolean =>
  hours.days.includes(isoWeekday(local))

const checkDays = (hours: BusinessHours): void => {
  if (!hours.days.some((d) => d >= 1 && d <= 7)) {
    throw new RangeError("BusinessHours.days has no weekday between 1 and 7")
  }
}

/**
 * The first business day strictly after the local date, at 00:00:00 (set the time with
 * {@link atClock}). Throws a `RangeError` when `hours.days` names no weekday at all, since
 * then no such day exists.
 */
export const nextBusinessDay = (local: LocalDateTime, hours: BusinessHours): LocalDateTime => {
  checkDays(hours)
  let d = startOfDay(local)
  for (let i = 0; i < 7; i++) {
    d = addDays(d, 1)
    if (isBusinessDay(d, hours)) return d
  }
  // Unreachable after checkDays: every weekday occurs within seven days.
  throw new RangeError("BusinessHours.days has no weekday between 1 and 7")
}

const secondsOfDay = (hour: number, minute: number, second: number): number => hour * 3600 + minute * 60 + second

/**
 * Moves an instant into business hours in `timeZone`: unchanged when it is on a business day
 * within [open, close); today's opening when it is earlier than that on a business day;
 * otherwise the next business day's opening. Requires `open` before `close` and at least one
 * business day (a `RangeError` otherwise: there would be no business hours to roll into).
 */
export const rollToBusinessHours = (epochMs: number, timeZone: string, hours: BusinessHours): number => {
  const open = parseClock(hours.open)
  const close = parseClock(hours.close)
  const openS = secondsOfDay(open.hour, open.minute, 0)
  const closeS = secondsOfDay(close.hour, close.minute, 0)
  if (openS >= closeS) throw new RangeError(`BusinessHours.open ${hours.open} is not before close ${hours.close}`)
  checkDays(hours)
  const local = toLocal(epochMs, timeZone)
  if (isBusinessDay(local, hours)) {
    const s = secondsOfDay(local.hour, local.minute, local.second)
    if (s >= openS && s < closeS) return epochMs
    if (s < openS) return Math.max(epochMs, fromLocal(atClock(local, open), timeZone))
  }
  return fromLocal(atClock(nextBusinessDay(local, hours), open), timeZone)
}
