/**
 * @module WebhookSchedule
 *
 * When a failed webhook delivery is tried again. Pure, so the schedule, its jitter bounds and
 * the `Retry-After` rules are tested without waiting. After the first try: 5 s, 30 s, 2 m,
 * 5 m, 30 m, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (about 3 days), each +-20% so a receiver that
 * came back is not hit by every queued delivery in the same second; at least 60 s after a
 * timeout or 429; a `Retry-After` is honoured up to 2 h beyond the schedule.
 */
import * as Option from "effect/Option"

const s = 1000
const m = 60 * s
const h = 60 * m

/** Delays after the 1st, 2nd, ... failed attempt. */
export const delays: ReadonlyArray<number> = [
  5 * s,
  30 * s,
  2 * m,
  5 * m,
  30 * m,
  2 * h,
  5 * h,
  10 * h,
  14 * h,
  20 * h,
  24 * h
]

/** Attempts in all: the first try plus one per delay. */
export const maxAttempts = delays.length + 1

/** Jitter: +-20%. */
export const jitter = 0.2

/** The floor after a timeout or a 429. */
export const slowDownFloorMs = 60 * s

/** How far beyond the schedule a `Retry-After` is honoured. */
export const retryAfterCapMs = 2 * h

/** What the failed attempt looked like, as far as the schedule cares. */
export interface Failure {
  /** Attempts made so far, including the one that just failed (1 for the first try). */
  readonly attempts: number
  /** The answer's status, when there was one. */
  readonly status?: number | undefined
  readonly timedOut?: boolean | undefined
  /** A parsed `Retry-After`, in milliseconds from now. */
  readonly retryAfterMs?: number | undefined
}

/**
 * Milliseconds until the next attempt, or none when the schedule is exhausted. `random` is a
 * uniform number in [0, 1) from the `Entropy` port.
 */
export const nextDelay = (failure: Failure, random: number): Option.Option<number> => {
  const base = delays[failure.attempts - 1]
  if (base === undefined || failure.attempts < 1) return Option.none()
  let delay = Math.round(base * (1 - jitter + 2 * jitter * random))
  if (failure.timedOut === true || failure.status === 429) delay = Math.max(delay, slowDownFloorMs)
  if (failure.retryAfterMs !== undefined && failure.retryAfterMs > delay)
    delay = Math.min(failure.retryAfterMs, delay + retryAfterCapMs)
  return Option.some(delay)
}

/**
 * Parses `Retry-After` (delay seconds or an HTTP date) into milliseconds from `now`; none when
 * absent or malformed, and never negative.
 */
export const parseRetryAfter = (value: string | undefined, now: number): Option.Option<number> => {
  if (value === undefined) return Option.none()
  const v = value.trim()
  if (/^\d{1,10}$/.test(v)) return Option.some(Number(v) * 1000)
  const at = Date.parse(v)
  return Number.isNaN(at) || !/[a-z]/i.test(v) ? Option.none() : Option.some(Math.max(0, at - now))
}
