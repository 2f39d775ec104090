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
 * {@link buffered} (and {@link bufferedLayer}) puts a process-local counter in front of a shared
 * store, so the common hit costs a `Map` update instead of a write to the database; counts reach
 * the store in batches ({@link RateLimiterShape.add}) at most `flushMs` apart. What that trades
 * away is spelled out on {@link buffered}.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
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

/** Options of {@link buffered}. */
export interface BufferedOptions {
  /**
   * Longest time, in ms, between two synchronisations of the local counts with the inner store
   * (default 1000). It bounds how stale a count can be: how many hits of other hosts a host may
   * not see yet, and how long a reset made by another process takes to apply. 0 turns buffering
   * off: every call goes to the inner store.
   */
  readonly flushMs?: number
  /**
   * Above this many keys, keys with nothing left to flush (and ended windows) are dropped before
   * another is added (default 10,000), so memory stays bounded between two flushes too.
   */
  readonly sweepAbove?: number
  /**
   * Which keys to buffer (default: all). Other keys go straight to the inner store on every
   * call, for counts that must be exact across hosts at once, or that another process resets
   * and expects to see reset immediately (the abuse counters an operator's `ip unblock` clears).
   */
  readonly select?: (key: string) => boolean
}

/** A {@link buffered} limiter: the port, plus a way to flush on demand. */
export interface BufferedRateLimiter extends RateLimiterShape {
  /**
   * Sends every key's pending hits to the inner store now, after a flush already running. Never
   * fails: a failure is logged as a warning and the hits stay pending for the next flush.
   */
  readonly flush: Effect.Effect<void>
}

/** Default of {@link BufferedOptions.flushMs}. */
export const defaultFlushMs = 1000

/** One key's local counter in a {@link buffered} limiter. */
interface Entry {
  readonly key: string
  /** Held by every call that talks to the inner store about this key, so they run one at a time. */
  readonly lock: Effect.Semaphore
  /** False until the first store call of this entry (a read-through) succeeded. */
  ready: boolean
  windowStart: number
  windowMs: number
  /** The store's count as of the last synchronisation (own hits sent so far included). */
  base: number
  /** Hits counted here and not yet acknowledged by the store. */
  pending: number
}

const makeBuffered_ = (
  inner: RateLimiterShape,
  options: BufferedOptions
): { readonly limiter: BufferedRateLimiter; readonly tick: Effect.Effect<void> } => {
  const flushMs = options.flushMs ?? defaultFlushMs
  const sweepAbove = options.sweepAbove ?? 10_000
  const counters = new Map<string, Entry>()
  let sweepAt = sweepAbove
  let lastFlush = Number.NEGATIVE_INFINITY
  /** An automatic flush (due by time) is queued or running. */
  let flushing = false
  const flushLock = Effect.unsafeMakeSemaphore(1)
  /** Set while a background flusher waits for work: completed by the next hit left pending. */
  let wake: Deferred.Deferred<void> | undefined

  /** Nothing to lose by forgetting: window over, or every hit already in the store. */
  const idle = (e: Entry, now: number) => e.ready && (e.pending === 0 || e.windowStart + e.windowMs <= now)

  const sweep = (now: number) => {
    for (const [key, e] of counters) if (idle(e, now)) counters.delete(key)
    sweepAt = Math.max(sweepAbove, counters.size * 2)
  }

  const fresh = (key: string, now: number): Entry => {
    if (counters.size >= sweepAt) sweep(now)
    const e: Entry = {
      key,
      lock: Effect.unsafeMakeSemaphore(1),
      ready: false,
      windowStart: 0,
      windowMs: 0,
      base: 0,
      pending: 0
    }
    counters.set(key, e)
    return e
  }

  /** Whether a ready entry counts hits of a `windowMs` window at `now` (the rule of `step`). */
  const live = (e: Entry, now: number, windowMs: number) => e.ready && e.windowStart >= windowStart(now, windowMs)

  /** The key's entry for the window of `now`, or a new one (not ready) in its place. */
  const entryFor = (key: string, now: number, windowMs: number): Entry => {
    const e = counters.get(key)
    return e !== undefined && (!e.ready || live(e, now, windowMs)) ? e : fresh(key, now)
  }

  /**
   * Runs `f` holding the lock of `e`, if `e` is still the key's entry once the lock is taken;
   * none when it is not (reset, flushed away, replaced by a later window): the caller starts
   * over. An entry left not ready by `f` (its first store call failed) is removed, so the next
   * call tries the store again.
   */
  const locked = <A>(e: Entry, f: (e: Entry) => Effect.Effect<Option.Option<A>, StorageError>) =>
    e.lock.withPermits(1)(
      Effect.suspend(() => (counters.get(e.key) === e ? f(e) : Effect.succeedNone)).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (!e.ready && counters.get(e.key) === e) counters.delete(e.key)
          })
        )
      )
    )

  /** First store call of an entry: adds `n` and adopts the stored counter. */
  const load = (e: Entry, n: number, windowMs: number): Effect.Effect<Counter, StorageError> =>
    Effect.map(inner.add(e.key, n, windowMs), (stored) => {
      e.windowStart = stored.windowStart
      e.windowMs = windowMs
      e.base = stored.count
      e.pending = 0
      e.ready = true
      return stored
    })

  /**
   * Sends the entry's pending hits plus `n` and adopts the stored count. Hits counted locally
   * while the call was on its way stay pending, and are ordered before it in the count returned.
   * On failure nothing changes, so the pending hits are sent again next time.
   */
  const sync = (e: Entry, n: number): Effect.Effect<Counter, StorageError> =>
    Effect.suspend(() => {
      const sent = e.pending
      return Effect.map(inner.add(e.key, sent + n, e.windowMs), (stored) => {
        e.pending -= sent
        if (stored.windowStart >= e.windowStart) {
          e.windowStart = stored.windowStart
          e.base = stored.count
        }
        return { windowStart: e.windowStart, count: e.base + e.pending }
      })
    })

  /** The flush itself: drops idle keys, then syncs each key with pending hits, one at a time. */
  const flushEntries: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    lastFlush = now
    const work: Array<Entry> = []
    for (const [key, e] of counters) {
      // A key with nothing pending is dropped rather than refreshed: its next hit reads the
      // store again, so no local count is ever older than one flush interval.
      if (idle(e, now)) counters.delete(key)
      else if (e.ready) work.push(e)
    }
    let done = 0
    return Effect.forEach(
      work,
      (e) =>
        Effect.zipRight(
          locked(e, (current) => Effect.asSome(sync(current, 0))),
          Effect.sync(() => {
            done += 1
          })
        ),
      { discard: true }
    ).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning(
          `waybill rate limiter: flush to the store failed; pending hits of ${work.length - done} key(s) kept for the next flush`,
          error
        )
      )
    )
  })

  /** One flush at a time; not interrupted halfway, so an acknowledged batch is never sent twice. */
  const flush: Effect.Effect<void> = Effect.uninterruptible(flushLock.withPermits(1)(flushEntries))

  const due = (now: number) => !flushing && (now - lastFlush >= flushMs || now < lastFlush)

  /** The flush that falls due by time, unless one is already queued or running. */
  const flushDue = (now: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!due(now)) return Effect.void
      flushing = true
      lastFlush = now
      return Effect.uninterruptible(
        flushLock.withPermits(1)(
          Effect.ensuring(
            flushEntries,
            Effect.sync(() => {
              flushing = false
            })
          )
        )
      )
    })

  const countAt = (key: string, limit: number, windowMs: number, now: number): Effect.Effect<Quota, StorageError> => {
    const e = counters.get(key)
    if (e !== undefined && live(e, now, windowMs)) {
      e.pending += 1
      e.windowMs = windowMs
      if (wake !== undefined) {
        Deferred.unsafeDone(wake, Effect.void)
        wake = undefined
      }
      return Effect.succeed(quotaOf({ windowStart: e.windowStart, count: e.base + e.pending }, limit, windowMs, now))
    }
    // First hit of the key in this window here (or a reset or first hit is in progress): read
    // the store by writing this hit through, or wait for the call in progress and count after it.
    return Effect.flatMap(
      locked(entryFor(key, now, windowMs), (current) =>
        current.ready ? Effect.succeedNone : Effect.asSome(load(current, 1, windowMs))
      ),
      Option.match({
        onNone: () => count(key, limit, windowMs),
        onSome: (stored) => Effect.succeed(quotaOf(stored, limit, windowMs, now))
      })
    )
  }

  const count = (key: string, limit: number, windowMs: number): Effect.Effect<Quota, StorageError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => countAt(key, limit, windowMs, now))

  const add = (key: string, n: number, windowMs: number): Effect.Effect<Counter, StorageError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.flatMap(
        locked(entryFor(key, now, windowMs), (current) =>
          !current.ready
            ? Effect.asSome(load(current, n, windowMs))
            : live(current, now, windowMs)
              ? Effect.asSome(Effect.uninterruptible(sync(current, n)))
              : Effect.succeedNone
        ),
        Option.match({ onNone: () => add(key, n, windowMs), onSome: Effect.succeed })
      )
    )

  const reset = (key: string): Effect.Effect<void, StorageError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.flatMap(
        // A placeholder when the key has no entry: hits arriving meanwhile wait for the reset.
        locked(counters.get(key) ?? fresh(key, now), (current) =>
          Effect.as(
            Effect.zipRight(
              inner.reset(key),
              Effect.sync(() => {
                if (counters.get(key) === current) counters.delete(key)
              })
            ),
            Option.some(undefined)
          )
        ),
        Option.match({ onNone: () => reset(key), onSome: () => Effect.void })
      )
    )

  const select = options.select ?? (() => true)
  const limiter: BufferedRateLimiter = {
    hit: (key, limit, windowMs) =>
      select(key)
        ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
            due(now) ? Effect.zipRight(flushDue(now), count(key, limit, windowMs)) : countAt(key, limit, windowMs, now)
          )
        : inner.hit(key, limit, windowMs),
    add: (key, n, windowMs) =>
      !isHitCount(n) ? invalidHitCount(n) : select(key) ? add(key, n, windowMs) : inner.add(key, n, windowMs),
    reset: (key) => (select(key) ? reset(key) : inner.reset(key)),
    flush
  }

  const anyPending = () => {
    for (const e of counters.values()) if (e.pending > 0) return true
    return false
  }

  /**
   * Parks a background flusher while no hit is pending, so an idle process (or a test moving a
   * `TestClock` by hours) does not wake it every interval.
   */
  const idleWait: Effect.Effect<void> = Effect.flatMap(Deferred.make<void>(), (d) =>
    Effect.suspend(() => {
      if (anyPending()) return Effect.void
      wake = d
      return Deferred.await(d)
    })
  )

  /** One step of a background flusher: sleep until the next flush is due, or run it. */
  const tick: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const wait = Math.min(flushMs, lastFlush + flushMs - now)
    if (wait > 0 && now >= lastFlush) return Effect.sleep(wait)
    // Due; if a flush is queued or running already, wait for it rather than spin.
    if (flushing) return flushLock.withPermits(1)(Effect.void)
    return Effect.zipRight(flushDue(now), idleWait)
  })

  return { limiter, tick }
}

/**
 * A limiter that counts in process memory and synchronises with `inner` (the shared SQL store,
 * typically) at most `flushMs` apart, so a hit usually costs a `Map` update instead of a write.
 *
 * - A hit of a key this process already counts in the current window is decided locally: its
 *   count is the store's count at the last synchronisation, plus this process's hits since, plus
 *   one. No storage call.
 * - The first hit of a key in a window (and the first after the key was idle for a whole flush
 *   interval) is written through with `inner.add(key, 1)`, so a fresh process starts from what
 *   the other hosts have counted, not from zero. Concurrent first hits of one key wait for that
 *   one call and then count locally. If it fails, the hit fails, as it would on `inner`.
 * - A flush, due `flushMs` after the previous one, is run by the first hit that notices it is due
 *   (before that hit is counted), by {@link BufferedRateLimiter.flush}, and, with
 *   {@link makeBuffered} / {@link bufferedLayer}, by a background fiber. It sends each key's
 *   pending hits with one `inner.add(key, pending)` and adopts the returned count, which carries
 *   other hosts' hits and resets made by other processes. Keys with nothing pending and ended
 *   windows are dropped instead (their next hit reads the store again). A failed flush stops at
 *   the first failing key, logs a warning, keeps every unsent hit pending, and fails no request.
 * - `add` and `reset` go to `inner` (with the key's pending hits, for `add`) and update the local
 *   state; `reset` forgets the key's pending hits.
 *
 * What it trades away, precisely:
 * - Within one process counting stays exact: every hit gets its own count, and a sequence of hits
 *   gets the same verdicts, counts and reset times as `inner` alone would give.
 * - Across hosts, a host decides on counts that may lack other hosts' hits that those hosts have
 *   not flushed yet: at most `flushMs` worth of hits per other host (while flushes run on time),
 *   by which the fleet as a whole may exceed a limit. Hits of a window that ends before they are
 *   flushed never reach the store. Verdicts never err the other way: a count is never higher
 *   than the true number of hits.
 * - A reset made by another process (`pnpm waybill ip unblock`) takes effect here within
 *   `flushMs`; hits this host counted before the reset and had not flushed yet are added after it
 *   (so they are not forgotten).
 * - A counter whose only question is "first hit?" (the abuse rules' per-account markers) stays
 *   exact across hosts: every host writes the first hit of a key in a window through.
 *
 * Memory holds the keys active since the last flush; see {@link BufferedOptions.sweepAbove}.
 * Time comes from Effect's `Clock`. Flushes happen only on hits or explicit flushes here; use
 * {@link makeBuffered} or {@link bufferedLayer} for a host, so an idle process flushes too and the
 * last hits are flushed when it stops.
 */
export const buffered = (inner: RateLimiterShape, options: BufferedOptions = {}): BufferedRateLimiter =>
  unbuffered(options) ? { ...inner, flush: Effect.void } : makeBuffered_(inner, options).limiter

/** `flushMs` 0 (or not a positive number): no buffering. */
const unbuffered = (options: BufferedOptions) => !((options.flushMs ?? defaultFlushMs) > 0)

/**
 * {@link buffered} for a scope: a fiber flushes pending hits `flushMs` after the previous flush
 * even when no hit comes (and waits without waking while nothing is pending), and the scope's
 * close stops it and flushes what is pending (a failure is logged). No fiber outlives the scope.
 */
export const makeBuffered = (
  inner: RateLimiterShape,
  options: BufferedOptions = {}
): Effect.Effect<BufferedRateLimiter, never, Scope.Scope> =>
  Effect.gen(function* () {
    if (unbuffered(options)) return buffered(inner, options)
    const { limiter, tick } = makeBuffered_(inner, options)
    yield* Effect.addFinalizer(() => limiter.flush)
    // Forked after the finalizer above, so it is stopped before that last flush runs.
    yield* Effect.forkScoped(Effect.forever(tick))
    return limiter
  })

/**
 * Wraps the `RateLimiter` provided below it in {@link makeBuffered}, for the lifetime of the
 * layer: `bufferedLayer().pipe(Layer.provide(storage))` is the buffered store alone, and
 * `Layer.provideMerge(bufferedLayer(), storage)` is the storage services with the buffered
 * limiter in place of the plain one.
 */
export const bufferedLayer = (options: BufferedOptions = {}): Layer.Layer<RateLimiter, never, RateLimiter> =>
  Layer.scoped(
    RateLimiter,
    Effect.flatMap(RateLimiter, (inner) => makeBuffered(inner, options))
  )
