import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { RateLimiter, type RateLimiterShape, RateLimits, StorageError } from "@waybill/core"
import { rateLimiterContract } from "@waybill/testkit"
import { RateLimitBuffered } from "../src/index.js"

const MINUTE = 60_000

// Per instance a buffered limiter is exact, so the port's whole suite applies. Over the SQL
// store it runs in the example host's tests, which compose the two adapters.
rateLimiterContract("RateLimitBuffered.bufferedLayer over memory", () =>
  RateLimitBuffered.bufferedLayer().pipe(Layer.provide(RateLimits.memory))
)

// A flush due at nearly every hit (the cases move the clock), so flushes interleave with them.
rateLimiterContract("RateLimitBuffered.bufferedLayer over memory, flushMs 1", () =>
  RateLimitBuffered.bufferedLayer({ flushMs: 1 }).pipe(Layer.provide(RateLimits.memory))
)

// Without the background fiber: flushes only when a hit finds one due.
rateLimiterContract("RateLimitBuffered.buffered over memory", () =>
  Layer.sync(RateLimiter, () => RateLimitBuffered.buffered(RateLimits.makeMemory()))
)

/**
 * A store over `inner` that records every call, can be made to fail, and suspends once per call
 * (like a database round trip) so other fibers run while a call is on its way.
 */
const instrumented = (inner: RateLimiterShape = RateLimits.makeMemory()) => {
  const calls: Array<string> = []
  const state = { failing: false }
  const guard = <A>(op: string, self: Effect.Effect<A, StorageError>) =>
    Effect.suspend(() => {
      calls.push(op)
      return state.failing
        ? Effect.fail(new StorageError({ operation: op, cause: "store down" }))
        : Effect.zipRight(Effect.yieldNow(), self)
    })
  const store: RateLimiterShape = {
    hit: (key, limit, windowMs) => guard(`hit ${key}`, inner.hit(key, limit, windowMs)),
    add: (key, n, windowMs) => guard(`add ${key} ${n}`, inner.add(key, n, windowMs)),
    reset: (key) => guard(`reset ${key}`, inner.reset(key))
  }
  return { store, calls, state, inner }
}

/** The count the store itself holds for `key` now. */
const stored = (store: RateLimiterShape, key: string) => Effect.map(store.add(key, 0, MINUTE), (c) => c.count)

const counts = (limiter: RateLimiterShape, key: string, times: number, limit = 1000) =>
  Effect.forEach(Array.from({ length: times }), () => Effect.map(limiter.hit(key, limit, MINUTE), (q) => q.count))

describe("RateLimitBuffered.buffered", () => {
  it.effect("buffers only the keys select picks; the others reach the store on every call", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store, { flushMs: 1000, select: (key) => key.startsWith("key:") })
      yield* TestClock.setTime(10 * MINUTE)
      expect(yield* counts(limiter, "key:a", 3)).toEqual([1, 2, 3])
      expect(yield* counts(limiter, "abuse:x", 3)).toEqual([1, 2, 3])
      yield* limiter.reset("abuse:x")
      expect(yield* counts(limiter, "abuse:x", 1)).toEqual([1])
      expect(calls).toEqual([
        "add key:a 1",
        "hit abuse:x",
        "hit abuse:x",
        "hit abuse:x",
        "reset abuse:x",
        "hit abuse:x"
      ])
    })
  )

  it.effect("counts locally after one write-through, and flushes a key's hits in one add", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store, { flushMs: 1000 })
      yield* TestClock.setTime(10 * MINUTE)
      expect(yield* counts(limiter, "k", 100)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
      expect(calls).toEqual(["add k 1"])
      yield* TestClock.adjust("999 millis")
      yield* limiter.hit("k", 1000, MINUTE)
      expect(calls).toEqual(["add k 1"])
      // The first hit at or after the interval flushes before it is counted.
      yield* TestClock.adjust("1 milli")
      expect((yield* limiter.hit("k", 1000, MINUTE)).count).toBe(102)
      expect(calls).toEqual(["add k 1", "add k 100"])
      expect(yield* stored(store, "k")).toBe(101)
    })
  )

  it.effect("the first hit of a fresh process starts from the store's count", () =>
    Effect.gen(function* () {
      const { store } = instrumented()
      yield* TestClock.setTime(10 * MINUTE)
      yield* store.add("k", 7, MINUTE)
      const limiter = RateLimitBuffered.buffered(store)
      const q = yield* limiter.hit("k", 8, MINUTE)
      expect([q.allowed, q.count, q.remaining]).toEqual([true, 8, 0])
      expect((yield* limiter.hit("k", 8, MINUTE)).allowed).toBe(false)
    })
  )

  it.effect("concurrent first hits of a key wait for one store call, then each gets its own count", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store)
      yield* TestClock.setTime(10 * MINUTE)
      const quotas = yield* Effect.all(
        Array.from({ length: 20 }, () => limiter.hit("k", 15, MINUTE)),
        { concurrency: "unbounded" }
      )
      expect(quotas.map((q) => q.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
      expect(quotas.filter((q) => q.allowed)).toHaveLength(15)
      expect(calls).toEqual(["add k 1"])
    })
  )

  it.effect("a new window is read from the store again, and the old window's hits are dropped", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store, { flushMs: 10 * MINUTE })
      yield* TestClock.setTime(10 * MINUTE + 30_000)
      yield* counts(limiter, "k", 5)
      yield* TestClock.adjust("30 seconds")
      const q = yield* limiter.hit("k", 1000, MINUTE)
      expect([q.count, q.resetMs]).toEqual([1, MINUTE])
      expect(calls).toEqual(["add k 1", "add k 1"])
      yield* limiter.flush
      expect(calls).toEqual(["add k 1", "add k 1"]) // nothing pending in the new window
    })
  )

  it.effect("two limiters over one store converge once both have flushed", () =>
    Effect.gen(function* () {
      const { store } = instrumented()
      const a = RateLimitBuffered.buffered(store)
      const b = RateLimitBuffered.buffered(store)
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(a, "k", 30)
      yield* counts(b, "k", 20)
      // Before any flush, each sees the other's first (written-through) hit only.
      expect((yield* a.hit("k", 1000, MINUTE)).count).toBe(31)
      expect((yield* b.hit("k", 1000, MINUTE)).count).toBe(22)
      yield* TestClock.adjust("1 second")
      yield* a.flush
      yield* b.flush
      expect(yield* stored(store, "k")).toBe(52)
      // a flushed before b's hits reached the store: it still lacks them for one more interval.
      yield* TestClock.adjust("1 second")
      expect((yield* a.hit("k", 1000, MINUTE)).count).toBe(53)
      expect((yield* b.hit("k", 1000, MINUTE)).count).toBe(54)
    })
  )

  it.effect("over-admission across hosts is bounded by the hits the others have not flushed", () =>
    Effect.gen(function* () {
      const { store } = instrumented()
      const hosts = [
        RateLimitBuffered.buffered(store),
        RateLimitBuffered.buffered(store),
        RateLimitBuffered.buffered(store)
      ]
      yield* TestClock.setTime(10 * MINUTE)
      const limit = 100
      let allowed = 0
      // Each host takes a request every 10 ms for 3 s.
      for (let tick = 0; tick < 300; tick++) {
        for (const host of hosts) if ((yield* host.hit("k", limit, MINUTE)).allowed) allowed += 1
        yield* TestClock.adjust("10 millis")
      }
      // Without buffering exactly 100 pass. A host misses at most the other hosts' unflushed
      // hits, one flush interval (1 s, 100 hits) each, and the limit is reached within the first
      // interval: 100 + 99 + 98 pass (each host's first hit is written through).
      expect(allowed).toBeLessThanOrEqual(limit + 2 * 100)
      expect(allowed).toBe(297)
      // After one interval more every host refuses.
      yield* TestClock.adjust("1 second")
      for (const host of hosts) yield* host.hit("k", limit, MINUTE)
      yield* TestClock.adjust("1 second")
      for (const host of hosts) expect((yield* host.hit("k", limit, MINUTE)).allowed).toBe(false)
    })
  )

  it.effect.prop(
    "a host's count never exceeds the true count and misses only other hosts' unflushed hits",
    {
      ops: fc.array(
        fc.oneof(
          fc.record({ op: fc.constant("hit" as const), host: fc.integer({ min: 0, max: 1 }) }),
          fc.record({ op: fc.constant("flush" as const), host: fc.integer({ min: 0, max: 1 }) })
        ),
        { maxLength: 80 }
      )
    },
    ({ ops }) =>
      Effect.gen(function* () {
        const { store } = instrumented()
        const hosts = [
          RateLimitBuffered.buffered(store, { flushMs: MINUTE }),
          RateLimitBuffered.buffered(store, { flushMs: MINUTE })
        ]
        yield* TestClock.setTime(10 * MINUTE)
        // Bookkeeping of the test, not of the limiter: hits per host, and per host the other
        // host's hits that were in the store as of this host's last flush.
        const own = [0, 0]
        const flushedUpTo = [0, 0] // hits of a host included in its last flush
        const seenOfOther = [0, 0] // the other host's flushed hits as of this host's last flush
        for (const { host, op } of ops) {
          const other = 1 - host
          if (op === "flush") {
            yield* hosts[host]!.flush
            flushedUpTo[host] = own[host]!
            seenOfOther[host] = flushedUpTo[other]!
          } else {
            own[host]! += 1
            const { count } = yield* hosts[host]!.hit("k", 1000, MINUTE)
            expect(count).toBeLessThanOrEqual(own[0]! + own[1]!)
            expect(count).toBeGreaterThanOrEqual(own[host]! + seenOfOther[host]!)
          }
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect("a failed flush keeps the pending hits, fails no request, and logs a warning", () =>
    Effect.gen(function* () {
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
      })
      const { state, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store)
      yield* Effect.gen(function* () {
        yield* TestClock.setTime(10 * MINUTE)
        yield* counts(limiter, "k", 5) // 1 written through, 4 pending
        state.failing = true
        yield* TestClock.adjust("1 second")
        expect((yield* limiter.hit("k", 1000, MINUTE)).count).toBe(6) // the flush failed; the hit did not
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toMatch(/flush to the store failed; pending hits of 1 key\(s\) kept/)
        yield* limiter.flush
        expect(warnings).toHaveLength(2)
        state.failing = false
        expect(yield* stored(store, "k")).toBe(1)
        yield* TestClock.adjust("1 second")
        expect((yield* limiter.hit("k", 1000, MINUTE)).count).toBe(7)
        expect(yield* stored(store, "k")).toBe(6) // everything before this last hit
        yield* limiter.flush
        expect(yield* stored(store, "k")).toBe(7)
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    })
  )

  it.effect("a failed write-through fails the hit like the store would, and the next hit tries again", () =>
    Effect.gen(function* () {
      const { calls, state, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store)
      yield* TestClock.setTime(10 * MINUTE)
      state.failing = true
      const failed = yield* Effect.flip(limiter.hit("k", 5, MINUTE))
      expect(failed._tag).toBe("StorageError")
      state.failing = false
      expect((yield* limiter.hit("k", 5, MINUTE)).count).toBe(1)
      expect(calls).toEqual(["add k 1", "add k 1"])
    })
  )

  it.effect("a reset by another process applies within one flush interval", () =>
    Effect.gen(function* () {
      const { store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store)
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(limiter, "k", 5, 3)
      yield* limiter.flush // the host's background flush
      yield* TestClock.adjust("200 millis")
      yield* store.reset("k") // `pnpm waybill ip unblock` in another process
      expect((yield* limiter.hit("k", 3, MINUTE)).allowed).toBe(false) // not yet seen here
      yield* TestClock.adjust("800 millis")
      const q = yield* limiter.hit("k", 3, MINUTE)
      // The hit refused above came after the reset; it and this one are all that count.
      expect([q.allowed, q.count]).toEqual([true, 2])
      expect(yield* stored(store, "k")).toBe(1)
    })
  )

  it.effect("a key idle for a flush interval is read from the store again", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store)
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(limiter, "k", 3)
      yield* TestClock.adjust("1 second")
      yield* counts(limiter, "other", 1) // flushes k's 2 pending hits
      yield* store.reset("k")
      yield* TestClock.adjust("1 second")
      yield* counts(limiter, "other", 1) // k had nothing pending: dropped
      expect((yield* limiter.hit("k", 1000, MINUTE)).count).toBe(1)
      expect(calls.filter((c) => c.startsWith("add k"))).toEqual(["add k 1", "add k 2", "add k 1"])
    })
  )

  it.effect("reset resets the store and the local count, and waits for nothing pending to come back", () =>
    Effect.gen(function* () {
      const { store } = instrumented()
      const a = RateLimitBuffered.buffered(store)
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(a, "k", 4)
      yield* a.reset("k")
      expect(yield* stored(store, "k")).toBe(0)
      expect((yield* a.hit("k", 1000, MINUTE)).count).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* a.flush
      expect(yield* stored(store, "k")).toBe(1) // the 3 hits pending before the reset are gone
      yield* a.reset("never-used")
    })
  )

  it.effect("add sends the key's pending hits with it and returns the count including them", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store)
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(limiter, "k", 4)
      expect(yield* limiter.add("k", 10, MINUTE)).toEqual({ windowStart: 10 * MINUTE, count: 14 })
      expect(calls).toEqual(["add k 1", "add k 13"])
      expect((yield* limiter.hit("k", 1000, MINUTE)).count).toBe(15)
    })
  )

  it.effect("memory stays bounded: past sweepAbove keys, keys with nothing pending are dropped", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store, { sweepAbove: 10, flushMs: 10 * MINUTE })
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(limiter, "k0", 2) // one pending hit: kept by sweeps
      for (let i = 1; i <= 30; i++) yield* limiter.hit(`k${i}`, 1000, MINUTE)
      calls.length = 0
      expect((yield* limiter.hit("k0", 1000, MINUTE)).count).toBe(3)
      expect((yield* limiter.hit("k1", 1000, MINUTE)).count).toBe(2)
      expect(calls).toEqual(["add k1 1"]) // k1 was swept and read again; k0 was not
    })
  )

  it.effect("flushMs 0 turns buffering off", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const limiter = RateLimitBuffered.buffered(store, { flushMs: 0 })
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(limiter, "k", 3)
      expect(calls).toEqual(["hit k", "hit k", "hit k"])
    })
  )

  it.effect.prop(
    "one buffered limiter answers exactly like the plain memory store",
    {
      flushMs: fc.integer({ min: 1, max: 5000 }),
      ops: fc.array(
        fc.oneof(
          { weight: 8, arbitrary: fc.record({ op: fc.constant("hit" as const), key: fc.integer({ min: 0, max: 3 }) }) },
          {
            weight: 3,
            arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 3000 }) })
          },
          {
            weight: 1,
            arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 90_000 }) })
          },
          {
            weight: 1,
            arbitrary: fc.record({ op: fc.constant("reset" as const), key: fc.integer({ min: 0, max: 3 }) })
          },
          {
            weight: 1,
            arbitrary: fc.record({
              op: fc.constant("add" as const),
              key: fc.integer({ min: 0, max: 3 }),
              n: fc.integer({ min: 0, max: 5 })
            })
          },
          { weight: 1, arbitrary: fc.constant({ op: "flush" as const }) }
        ),
        { maxLength: 120 }
      )
    },
    ({ flushMs, ops }) =>
      Effect.gen(function* () {
        // Key i has limit 3 + i and a window of 10 s, 1 min, 10 s, 1 h.
        const windows = [10_000, MINUTE, 10_000, 60 * MINUTE]
        const plain = RateLimits.makeMemory()
        const limiter = RateLimitBuffered.buffered(instrumented().store, { flushMs })
        yield* TestClock.setTime(1_000_000)
        for (const op of ops) {
          if (op.op === "advance") yield* TestClock.adjust(op.ms)
          else if (op.op === "flush") yield* limiter.flush
          else if (op.op === "reset") {
            yield* plain.reset(`k${op.key}`)
            yield* limiter.reset(`k${op.key}`)
          } else if (op.op === "add") {
            const expected = yield* plain.add(`k${op.key}`, op.n, windows[op.key]!)
            expect(yield* limiter.add(`k${op.key}`, op.n, windows[op.key]!)).toEqual(expected)
          } else {
            const expected = yield* plain.hit(`k${op.key}`, 3 + op.key, windows[op.key]!)
            expect(yield* limiter.hit(`k${op.key}`, 3 + op.key, windows[op.key]!)).toEqual(expected)
          }
        }
      }),
    { fastCheck: { numRuns: 300 } }
  )
})

describe("RateLimitBuffered.makeBuffered / bufferedLayer", () => {
  it.effect("a background fiber flushes an idle host; closing the scope flushes the rest and stops it", () =>
    Effect.gen(function* () {
      const { calls, store } = instrumented()
      const scope = yield* Scope.make()
      const limiter = yield* Scope.extend(RateLimitBuffered.makeBuffered(store), scope)
      yield* TestClock.setTime(10 * MINUTE)
      yield* counts(limiter, "k", 1)
      yield* TestClock.adjust("1 hour") // nothing pending: the fiber waits without waking
      expect(calls).toEqual(["add k 1"])
      yield* counts(limiter, "k", 5)
      expect(yield* stored(store, "k")).toBe(1) // the window began anew: one written through, 4 pending
      yield* TestClock.adjust("1 second") // no hit: the fiber flushes
      expect(yield* stored(store, "k")).toBe(5)
      yield* counts(limiter, "k", 2)
      yield* Scope.close(scope, Exit.void)
      expect(yield* stored(store, "k")).toBe(7)
      calls.length = 0
      yield* TestClock.adjust("10 seconds")
      expect(calls).toEqual([])
    })
  )

  it.effect("the layer wraps the RateLimiter below it, and wins over it in provideMerge", () =>
    Effect.gen(function* () {
      class Other extends Context.Tag("test/Other")<Other, number>() {}
      const below = Layer.merge(RateLimits.memory, Layer.succeed(Other, 42))
      const check = Effect.gen(function* () {
        const limiter = yield* RateLimiter
        yield* TestClock.setTime(10 * MINUTE)
        expect("flush" in limiter).toBe(true)
        expect((yield* limiter.hit("k", 5, MINUTE)).count).toBe(1)
        expect((yield* limiter.hit("k", 5, MINUTE)).count).toBe(2)
      })
      yield* Effect.provide(check, RateLimitBuffered.bufferedLayer().pipe(Layer.provide(below)))
      yield* Effect.provide(Effect.zipRight(check, Other), Layer.provideMerge(RateLimitBuffered.bufferedLayer(), below))
    })
  )
})
