import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { lockOf } from "../src/internal/lock.js"

/** Lets every fiber that can run, run. */
const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

describe("the per-handle lock of the synchronous path", () => {
  it.effect("is one lock per handle", () =>
    Effect.sync(() => {
      const handle = {}
      expect(lockOf(handle)).toBe(lockOf(handle))
      expect(lockOf({})).not.toBe(lockOf(handle))
    })
  )

  it.effect("excludes: however many fibers contend, one holds it at a time, and all get it", () =>
    Effect.gen(function* () {
      const lock = lockOf({})
      let inside = 0
      let most = 0
      let done = 0
      const critical = Effect.acquireUseRelease(
        lock.acquire,
        () =>
          Effect.gen(function* () {
            inside++
            most = Math.max(most, inside)
            yield* Effect.yieldNow()
            yield* settle
            inside--
            done++
          }),
        () => lock.releaseEffect
      )
      yield* Effect.all(
        Array.from({ length: 20 }, () => critical),
        { concurrency: "unbounded" }
      )
      expect([most, done, lock.locked]).toEqual([1, 20, false])
    })
  )

  it.effect(
    "frees on release instead of handing over: a fiber that comes first takes it, the woken one goes next",
    () =>
      Effect.gen(function* () {
        const lock = lockOf({})
        const order: Array<string> = []
        yield* lock.acquire
        const waiter = yield* Effect.fork(
          Effect.zipRight(
            lock.acquire,
            Effect.sync(() => order.push("waiter"))
          )
        )
        yield* settle
        // Released and taken again in one synchronous step: the woken waiter has not run yet.
        yield* lock.releaseEffect
        expect(lock.locked).toBe(false)
        yield* lock.acquire
        order.push("barger")
        yield* settle
        expect(order).toEqual(["barger"])
        yield* lock.releaseEffect
        yield* Fiber.join(waiter)
        expect(order).toEqual(["barger", "waiter"])
        expect(lock.locked).toBe(true)
        yield* lock.releaseEffect
      })
  )

  it.effect("an interrupted waiter leaves the queue and the next one still gets the lock", () =>
    Effect.gen(function* () {
      const lock = lockOf({})
      yield* lock.acquire
      const first = yield* Effect.fork(lock.acquire)
      const second = yield* Effect.fork(lock.acquire)
      yield* settle
      yield* Fiber.interrupt(first)
      yield* lock.releaseEffect
      yield* Fiber.join(second)
      expect(lock.locked).toBe(true)
      yield* lock.releaseEffect
      expect(lock.locked).toBe(false)
    })
  )
})
