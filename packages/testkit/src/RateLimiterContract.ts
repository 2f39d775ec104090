/**
 * @module RateLimiterContract
 *
 * The conformance suite of the `RateLimiter` port: every implementation (core's in-memory one,
 * the SQL one in `@waybill/storage-kysely`, core's `RateLimits.buffered` over either, a host's
 * Redis one) must count exactly as `RateLimits.step` says, atomically, in epoch-aligned fixed
 * windows, by single hits (`hit`) and in batches (`add`) alike. Abuse detection depends on that:
 * it counts distinct accounts by comparing two counters that must reset at the same instant.
 *
 * Every case works on one limiter instance. A buffered limiter is exact per instance, so it
 * passes too; what it gives up (other hosts' unflushed hits) is tested where it is built.
 *
 * Time comes from Effect's `Clock`, so the cases move it with `TestClock`; an implementation must
 * read the clock through Effect (never `Date.now()`).
 */
import { expect } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { RateLimiter } from "@waybill/core"
import { registerCases, skipReasons } from "./internal/contract.js"

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "the first hit of a window is allowed and resets at the window's end",
  "hits past the limit are refused with nothing remaining, and still counted",
  "a later window starts again at one",
  "windows are aligned to the epoch, not to the first hit",
  "keys count apart",
  "concurrent hits of one key each get their own count",
  "reset forgets a key's count",
  "a limit of zero refuses every hit",
  "add counts n hits at once, and hit counts like add of one",
  "add of zero reads the count without counting",
  "add in a later window starts again at n",
  "concurrent hits and adds of one key are serialised",
  "reset forgets what add counted",
  "add of a negative or fractional n is a defect"
] as const

/** The name of one case of the suite. */
export type RateLimiterCase = (typeof cases)[number]

/** A case an implementation cannot pass yet, with the reason shown in the test report. */
export interface SkippedRateLimiterCase {
  readonly case: RateLimiterCase
  readonly reason: string
}

const MINUTE = 60_000

let counter = 0
/** A key no other case (or earlier run on a shared store) has used. */
const freshKey = (label: string) => `contract:${label}:${Date.now().toString(36)}:${(counter++).toString(36)}`

const body: { readonly [K in RateLimiterCase]: Effect.Effect<void, unknown, RateLimiter> } = {
  "the first hit of a window is allowed and resets at the window's end": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(10 * MINUTE + 15_000)
    const q = yield* limiter.hit(freshKey("first"), 5, MINUTE)
    expect(q).toEqual({ allowed: true, limit: 5, remaining: 4, resetMs: 45_000, count: 1 })
  }),

  "hits past the limit are refused with nothing remaining, and still counted": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(20 * MINUTE)
    const key = freshKey("limit")
    const seen: Array<[boolean, number, number]> = []
    for (let i = 0; i < 5; i++) {
      const q = yield* limiter.hit(key, 3, MINUTE)
      seen.push([q.allowed, q.remaining, q.count])
    }
    expect(seen).toEqual([
      [true, 2, 1],
      [true, 1, 2],
      [true, 0, 3],
      [false, 0, 4],
      [false, 0, 5]
    ])
  }),

  "a later window starts again at one": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(30 * MINUTE + 59_000)
    const key = freshKey("window")
    yield* limiter.hit(key, 1, MINUTE)
    expect((yield* limiter.hit(key, 1, MINUTE)).allowed).toBe(false)
    yield* TestClock.adjust("1 second")
    const q = yield* limiter.hit(key, 1, MINUTE)
    expect(q).toEqual({ allowed: true, limit: 1, remaining: 0, resetMs: MINUTE, count: 1 })
    // Skipping whole windows also starts again.
    yield* TestClock.adjust("5 minutes")
    expect((yield* limiter.hit(key, 1, MINUTE)).count).toBe(1)
  }),

  "windows are aligned to the epoch, not to the first hit": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    const hour = 60 * MINUTE
    yield* TestClock.setTime(5 * hour + 59 * MINUTE)
    const key = freshKey("aligned")
    expect((yield* limiter.hit(key, 10, hour)).resetMs).toBe(MINUTE)
    yield* TestClock.adjust("1 minute")
    const q = yield* limiter.hit(key, 10, hour)
    expect([q.count, q.resetMs]).toEqual([1, hour])
  }),

  "keys count apart": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(40 * MINUTE)
    const a = freshKey("a")
    const b = freshKey("b")
    yield* limiter.hit(a, 10, MINUTE)
    yield* limiter.hit(a, 10, MINUTE)
    expect((yield* limiter.hit(b, 10, MINUTE)).count).toBe(1)
    expect((yield* limiter.hit(a, 10, MINUTE)).count).toBe(3)
  }),

  "concurrent hits of one key each get their own count": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(50 * MINUTE)
    const key = freshKey("concurrent")
    const quotas = yield* Effect.all(
      Array.from({ length: 20 }, () => limiter.hit(key, 15, MINUTE)),
      { concurrency: "unbounded" }
    )
    expect(quotas.map((q) => q.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(quotas.filter((q) => q.allowed)).toHaveLength(15)
  }),

  "reset forgets a key's count": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(60 * MINUTE)
    const key = freshKey("reset")
    const other = freshKey("kept")
    yield* limiter.hit(key, 1, MINUTE)
    yield* limiter.hit(key, 1, MINUTE)
    yield* limiter.hit(other, 5, MINUTE)
    yield* limiter.reset(key)
    yield* limiter.reset(freshKey("never-used"))
    expect((yield* limiter.hit(key, 1, MINUTE)).allowed).toBe(true)
    expect((yield* limiter.hit(other, 5, MINUTE)).count).toBe(2)
  }),

  "a limit of zero refuses every hit": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(70 * MINUTE)
    const q = yield* limiter.hit(freshKey("zero"), 0, MINUTE)
    expect([q.allowed, q.remaining, q.count]).toEqual([false, 0, 1])
  }),

  "add counts n hits at once, and hit counts like add of one": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(80 * MINUTE + 5_000)
    const key = freshKey("add")
    expect(yield* limiter.add(key, 3, MINUTE)).toEqual({ windowStart: 80 * MINUTE, count: 3 })
    expect(yield* limiter.add(key, 2, MINUTE)).toEqual({ windowStart: 80 * MINUTE, count: 5 })
    const q = yield* limiter.hit(key, 6, MINUTE)
    expect(q).toEqual({ allowed: true, limit: 6, remaining: 0, resetMs: 55_000, count: 6 })
    expect((yield* limiter.hit(key, 6, MINUTE)).allowed).toBe(false)
    expect(yield* limiter.add(key, 1, MINUTE)).toEqual({ windowStart: 80 * MINUTE, count: 8 })
    // A key first counted by hit continues under add.
    const other = freshKey("hit-then-add")
    yield* limiter.hit(other, 10, MINUTE)
    expect((yield* limiter.add(other, 4, MINUTE)).count).toBe(5)
  }),

  "add of zero reads the count without counting": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(90 * MINUTE + 30_000)
    const key = freshKey("read")
    expect(yield* limiter.add(key, 0, MINUTE)).toEqual({ windowStart: 90 * MINUTE, count: 0 })
    expect((yield* limiter.hit(key, 5, MINUTE)).count).toBe(1)
    yield* limiter.hit(key, 5, MINUTE)
    expect(yield* limiter.add(key, 0, MINUTE)).toEqual({ windowStart: 90 * MINUTE, count: 2 })
    expect(yield* limiter.add(key, 0, MINUTE)).toEqual({ windowStart: 90 * MINUTE, count: 2 })
    expect((yield* limiter.hit(key, 5, MINUTE)).count).toBe(3)
    // The window of the last hits is over: a read sees the new, empty window.
    yield* TestClock.adjust("1 minute")
    expect(yield* limiter.add(key, 0, MINUTE)).toEqual({ windowStart: 91 * MINUTE, count: 0 })
  }),

  "add in a later window starts again at n": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(100 * MINUTE + 59_000)
    const key = freshKey("add-window")
    yield* limiter.add(key, 7, MINUTE)
    yield* limiter.hit(key, 10, MINUTE)
    yield* TestClock.adjust("1 second")
    expect(yield* limiter.add(key, 4, MINUTE)).toEqual({ windowStart: 101 * MINUTE, count: 4 })
    const q = yield* limiter.hit(key, 10, MINUTE)
    expect([q.count, q.resetMs]).toEqual([5, MINUTE])
    // Skipping whole windows also starts again.
    yield* TestClock.adjust("3 minutes")
    expect(yield* limiter.add(key, 2, MINUTE)).toEqual({ windowStart: 104 * MINUTE, count: 2 })
  }),

  "concurrent hits and adds of one key are serialised": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(110 * MINUTE)
    const key = freshKey("add-concurrent")
    // Odd ops are hits (n = 1), even ones adds of 2, 3, ... so every op adds a distinct amount.
    const ops = Array.from({ length: 24 }, (_, i) => (i % 2 === 1 ? 1 : i / 2 + 2))
    const counts = yield* Effect.all(
      ops.map((n) =>
        n === 1
          ? Effect.map(limiter.hit(key, 1000, MINUTE), (q) => ({ n, count: q.count }))
          : Effect.map(limiter.add(key, n, MINUTE), (c) => ({ n, count: c.count }))
      ),
      { concurrency: "unbounded" }
    )
    // In some order, each op saw the count before it plus its own amount: no two overlapped.
    const sorted = [...counts].sort((x, y) => x.count - y.count)
    const total = ops.reduce((a, b) => a + b, 0)
    let before = 0
    for (const op of sorted) {
      expect(op.count - op.n).toBe(before)
      before = op.count
    }
    expect(before).toBe(total)
    expect((yield* limiter.add(key, 0, MINUTE)).count).toBe(total)
  }),

  "reset forgets what add counted": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(120 * MINUTE)
    const key = freshKey("add-reset")
    yield* limiter.add(key, 5, MINUTE)
    yield* limiter.hit(key, 5, MINUTE)
    yield* limiter.reset(key)
    expect((yield* limiter.add(key, 0, MINUTE)).count).toBe(0)
    expect((yield* limiter.hit(key, 5, MINUTE)).count).toBe(1)
    expect((yield* limiter.add(key, 3, MINUTE)).count).toBe(4)
  }),

  "add of a negative or fractional n is a defect": Effect.gen(function* () {
    const limiter = yield* RateLimiter
    yield* TestClock.setTime(130 * MINUTE)
    const key = freshKey("add-invalid")
    for (const n of [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const exit = yield* Effect.exit(limiter.add(key, n, MINUTE))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }
    expect((yield* limiter.add(key, 0, MINUTE)).count).toBe(0)
  })
}

/**
 * Registers the `RateLimiter` conformance suite as a `describe(name)` block. `makeLayer` is
 * called once per case; cases use fresh keys, so a shared store works too.
 */
export const rateLimiterContract = (
  name: string,
  makeLayer: () => Layer.Layer<RateLimiter, unknown>,
  options: { readonly skip?: ReadonlyArray<SkippedRateLimiterCase> } = {}
): void => {
  registerCases(name, cases, body, makeLayer, skipReasons("rateLimiterContract", name, cases, options.skip))
}
