/**
 * @module RateLimiterContract
 *
 * The conformance suite of the `RateLimiter` port: every implementation (core's in-memory one,
 * the SQL one in `@waybill/storage-kysely`, a host's Redis one) must count exactly as
 * `RateLimits.step` says, atomically, in epoch-aligned fixed windows. Abuse detection depends on
 * that: it counts distinct accounts by comparing two counters that must reset at the same
 * instant.
 *
 * Time comes from Effect's `Clock`, so the cases move it with `TestClock`; an implementation must
 * read the clock through Effect (never `Date.now()`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { RateLimiter } from "@waybill/core"

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "the first hit of a window is allowed and resets at the window's end",
  "hits past the limit are refused with nothing remaining, and still counted",
  "a later window starts again at one",
  "windows are aligned to the epoch, not to the first hit",
  "keys count apart",
  "concurrent hits of one key each get their own count",
  "reset forgets a key's count",
  "a limit of zero refuses every hit"
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
  const skipped = new Map<RateLimiterCase, string>()
  for (const entry of options.skip ?? []) {
    if (!(cases as ReadonlyArray<string>).includes(entry.case)) {
      throw new Error(`rateLimiterContract(${name}): unknown case to skip: ${JSON.stringify(entry.case)}`)
    }
    if (entry.reason.trim() === "") {
      throw new Error(`rateLimiterContract(${name}): skipping ${JSON.stringify(entry.case)} needs a reason`)
    }
    skipped.set(entry.case, entry.reason.trim())
  }
  describe(name, () => {
    for (const c of cases) {
      const reason = skipped.get(c)
      if (reason !== undefined) it.effect.skip(`${c} (skipped: ${reason})`, () => Effect.provide(body[c], makeLayer()))
      else it.effect(c, () => Effect.provide(body[c], makeLayer()))
    }
  })
}
