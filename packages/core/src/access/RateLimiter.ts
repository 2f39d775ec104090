/**
 * @module RateLimiter
 *
 * Counters for rate limits and abuse controls: how many times a key was hit in the current
 * window. Windows are fixed and aligned to the epoch (a 60 s window runs from :00 to :59 of each
 * minute), so every host sharing a store (the SQL implementation in `@waybill/storage-kysely`)
 * agrees on which window a hit falls in without talking to the others, and two counters with the
 * same window length always reset at the same instant (the abuse rules count distinct accounts
 * with that property; see `Abuse`).
 *
 * The trade-off of fixed windows: a client can spend a whole window's budget at the end of one
 * window and again at the start of the next, so a burst of up to twice the limit is possible
 * across a boundary. In exchange a hit is one atomic increment, which a SQL store does in one
 * statement.
 *
 * {@link memory} is the in-process implementation (one host, or tests); its counting rule is the
 * pure {@link step}, shared with nothing else but documented as the contract every store keeps.
 *
 * A process-local buffer in front of a shared store (counts reach it in batches through
 * {@link RateLimiterShape.add}) is infrastructure, not domain: `@waybill/rate-limit-buffered`.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StorageError } from "../shared/index.js"

/** The outcome of one hit. */
export interface Quota {
  /** Whether this hit is within the limit (the hit counts either way). */
  readonly allowed: boolean
  readonly limit: number
  /** Hits left in this window after this one (0 once the limit is reached or passed). */
  readonly remaining: number
  /** Milliseconds until the window ends and the count starts again (at least 1). */
  readonly resetMs: number
  /** Hits in this window, this one included. */
  readonly count: number
}

/** What a counter store offers; every implementation passes `rateLimiterContract` (`@waybill/testkit`). */
export interface RateLimiterShape {
  /**
   * Counts one hit of `key` in the current `windowMs` window and says whether it is within
   * `limit`. Atomic: concurrent hits of one key (from any host sharing the store) each get a
   * distinct count.
   */
  readonly hit: (key: string, limit: number, windowMs: number) => Effect.Effect<Quota, StorageError>
  /**
   * Adds `n` hits of `key` in the current `windowMs` window at once, by the rule of {@link step}
   * (a later window starts again at `n`), and returns the counter as stored afterwards. `n = 0`
   * only reads: a key without a counter in this window reads as `count: 0` (a store need not
   * create one). Atomic like `hit`, with which it is consistent: `hit` is `add(key, 1)` plus the
   * verdict. `n` must be a whole number, 0 or more (see {@link isHitCount}); anything else is a
   * defect.
   */
  readonly add: (key: string, n: number, windowMs: number) => Effect.Effect<Counter, StorageError>
  /** Forgets the counts of `key` (an operator lifted a block; a test starts clean). */
  readonly reset: (key: string) => Effect.Effect<void, StorageError>
}

/** The counter store behind rate limits and abuse detection. */
export class RateLimiter extends Context.Tag("@waybill/core/RateLimiter")<RateLimiter, RateLimiterShape>() {}

/** Start of the fixed window `now` falls in (epoch-aligned). */
export const windowStart = (now: number, windowMs: number): number => Math.floor(now / windowMs) * windowMs

/** One key's counter as stored. */
export interface Counter {
  /** Epoch ms at which the counted window began. */
  readonly windowStart: number
  readonly count: number
}

/**
 * The counting rule every store implements: `n` hits (default one) in the stored window (or,
 * when hosts' clocks disagree, in a window the store already moved past) add `n`; hits in a
 * later window start again at `n`. With `n = 0` it is the count a read sees.
 */
export const step = (stored: Counter | undefined, now: number, windowMs: number, n = 1): Counter => {
  const start = windowStart(now, windowMs)
  return stored === undefined || stored.windowStart < start
    ? { windowStart: start, count: n }
    : { windowStart: stored.windowStart, count: stored.count + n }
}

/** Whether `n` is a valid number of hits for {@link RateLimiterShape.add}: a safe integer, 0 or more. */
export const isHitCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

/** The defect {@link RateLimiterShape.add} dies with when `n` is not a {@link isHitCount}. */
export const invalidHitCount = (n: number): Effect.Effect<never> =>
  Effect.die(new RangeError(`RateLimiter.add: n must be a whole number >= 0, got ${String(n)}`))

/** The quota a counter gives under `limit`. */
export const quotaOf = (counter: Counter, limit: number, windowMs: number, now: number): Quota => ({
  allowed: counter.count <= limit,
  limit,
  remaining: Math.max(0, limit - counter.count),
  resetMs: Math.max(1, counter.windowStart + windowMs - now),
  count: counter.count
})

/** Options of {@link makeMemory}. */
export interface MemoryOptions {
  /** Above this many keys, expired counters are swept before the next one is added. */
  readonly sweepAbove?: number
}

/**
 * An in-process counter store: a `Map` read and written synchronously, so hits are atomic
 * within one process. Counts are not shared between hosts; use the SQL store for that. Expired
 * counters are swept when the map grows past `sweepAbove` keys, so memory stays bounded by the
 * keys active in one window.
 */
export const makeMemory = (options: MemoryOptions = {}): RateLimiterShape => {
  const counters = new Map<string, Counter & { readonly windowMs: number }>()
  const sweepAbove = options.sweepAbove ?? 10_000
  const sweep = (now: number) => {
    for (const [key, c] of counters) if (c.windowStart + c.windowMs <= now) counters.delete(key)
  }
  const add = (key: string, n: number, windowMs: number, now: number): Counter => {
    const next = step(counters.get(key), now, windowMs, n)
    if (n === 0) return next // a read: nothing stored, so a missing key stays missing
    if (!counters.has(key) && counters.size >= sweepAbove) sweep(now)
    counters.set(key, { ...next, windowMs })
    return next
  }
  return {
    hit: (key, limit, windowMs) =>
      Effect.map(Clock.currentTimeMillis, (now) => quotaOf(add(key, 1, windowMs, now), limit, windowMs, now)),
    add: (key, n, windowMs) =>
      isHitCount(n) ? Effect.map(Clock.currentTimeMillis, (now) => add(key, n, windowMs, now)) : invalidHitCount(n),
    reset: (key) =>
      Effect.sync(() => {
        counters.delete(key)
      })
  }
}

/** {@link makeMemory} as a layer: a fresh store per build of the layer. */
export const memory: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => makeMemory())
