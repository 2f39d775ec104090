import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { makeLock } from "../src/internal/lock.js"

/** Lets every fiber that can run, run. */
const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

describe("the lock of the SQLite engine's connection", () => {
  it.effect("runs onFree on every release, before a waiter is woken", () =>
    Effect.gen(function* () {
      const events: Array<string> = []
      const lock = makeLock(() => events.push("free"))
      yield* lock.acquire
      const waiter = yield* Effect.fork(
        Effect.zipRight(
          lock.acquire,
          Effect.sync(() => events.push("waiter"))
        )
      )
      yield* Effect.yieldNow()
      lock.release()
      yield* Fiber.join(waiter)
      expect(events).toEqual(["free", "waiter"])
      expect(lock.locked).toBe(true)
    })
  )

  it.effect("excludes: however many fibers contend, one holds it at a time, and all get it", () =>
    Effect.gen(function* () {
      const lock = makeLock()
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
        () => Effect.sync(lock.release)
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
        const lock = makeLock()
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
        yield* Effect.sync(lock.release)
        expect(lock.locked).toBe(false)
        yield* lock.acquire
        order.push("barger")
        yield* settle
        expect(order).toEqual(["barger"])
        yield* Effect.sync(lock.release)
        yield* Fiber.join(waiter)
        expect(order).toEqual(["barger", "waiter"])
        expect(lock.locked).toBe(true)
        yield* Effect.sync(lock.release)
      })
  )

  it.effect("an interrupted waiter leaves the queue and the next one still gets the lock", () =>
    Effect.gen(function* () {
      const lock = makeLock()
      yield* lock.acquire
      const first = yield* Effect.fork(lock.acquire)
      const second = yield* Effect.fork(lock.acquire)
      yield* settle
      yield* Fiber.interrupt(first)
      yield* Effect.sync(lock.release)
      yield* Fiber.join(second)
      expect(lock.locked).toBe(true)
      yield* Effect.sync(lock.release)
      expect(lock.locked).toBe(false)
    })
  )
})
