/**
 * @module RateLimitBuffered
 *
 * A process-local counter in front of a shared `RateLimiter` store (`@waybill/storage-kysely`'s
 * SQL counters), so the common hit costs a `Map` update instead of a write to the database;
 * counts reach the store in batches (`RateLimiterShape.add`) at most `flushMs` apart. What that
 * trades away (a bounded over-admission across hosts) is spelled out on {@link buffered}.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { RateLimiter, type RateLimiterShape, RateLimits, type Quota, type StorageError } from "@waybill/core"

type Counter = RateLimits.Counter
const { invalidHitCount, isHitCount, quotaOf, windowStart } = RateLimits

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
