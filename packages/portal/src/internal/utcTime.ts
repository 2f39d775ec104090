/**
 * @module utcTime
 *
 * Times as the portal shows and reads them: always UTC, said so on the page, so what a person
 * types means the same instant whatever their browser's time zone. A `datetime-local` input
 * sends `YYYY-MM-DDTHH:MM` (seconds optional); the portal reads it as UTC.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** `2026-11-24 19:36:25 UTC`: how a time reads in a table. */
export const formatUtc = (ms: number): string => {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes()
  )}:${pad(d.getUTCSeconds())} UTC`
}

/** The ISO form of a time, for `<time datetime>`. */
export const isoUtc = (ms: number): string => new Date(ms).toISOString()

/** The `value` of a `datetime-local` input for a time, in UTC, to the minute: `2026-11-24T19:36`. */
export const toUtcLocalInput = (ms: number): string => isoUtc(ms).slice(0, 16)

const LOCAL_INPUT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/

/**
 * The instant a `datetime-local` value names, read as UTC, or undefined when it is not one (a
 * malformed text, or a date that does not exist such as 2026-02-30 or 24:00).
 */
export const parseUtcLocalInput = (text: string): number | undefined => {
  const m = LOCAL_INPUT.exec(text.trim())
  if (m === null) return undefined
  const [year, month, day, hour, minute, second, fraction] = m
    .slice(1)
    .map((part, i) => (part === undefined ? 0 : i === 6 ? Number(part.padEnd(3, "0")) : Number(part)))
  const ms = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!, fraction!)
  const back = new Date(ms)
  // Date.UTC rolls an impossible date over (Feb 30 -> Mar 2): refuse it instead.
  if (
    year! < 1970 ||
    back.getUTCFullYear() !== year ||
    back.getUTCMonth() !== month! - 1 ||
    back.getUTCDate() !== day ||
    back.getUTCHours() !== hour ||
    back.getUTCMinutes() !== minute ||
    back.getUTCSeconds() !== second
  )
    return undefined
  return ms
}
