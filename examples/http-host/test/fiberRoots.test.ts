import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { describe, expect, it } from "vitest"
import { trackRootFibersInAList } from "../src/fiberRoots.js"

const rootIds = () => Effect.runSync(Fiber.roots).map((f) => f.id().id)

describe("Effect's root fibers in a list (src/fiberRoots.ts)", () => {
  it("takes over the running roots, lists new ones while they run, and forgets them when they end", async () => {
    // A root that started under Effect's own Set, still running when the list takes over.
    const before = Effect.runFork(Effect.never)
    expect(trackRootFibersInAList()).toBe(true)
    expect(trackRootFibersInAList()).toBe(true)
    const store = (globalThis as Record<string, unknown>)["effect/GlobalValue"] as Map<symbol, { roots: unknown }>
    expect(store.get(Symbol.for("effect/FiberScope/Global"))?.roots).not.toBeInstanceOf(Set)
    expect(rootIds()).toContain(before.id().id)

    const gate = Effect.runSync(Deferred.make<void>())
    const waiting = Array.from({ length: 5 }, () => Effect.runFork(Deferred.await(gate)))
    const ids = rootIds()
    for (const f of waiting) expect(ids).toContain(f.id().id)

    // Many short roots, some ending while others wait: none stays listed.
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        Effect.runPromise(i % 2 === 0 ? Effect.yieldNow() : Effect.promise(() => Promise.resolve()))
      )
    )
    Effect.runSync(Deferred.succeed(gate, undefined))
    await Promise.all(waiting.map((f) => Effect.runPromise(Fiber.join(f))))
    await Effect.runPromise(Fiber.interrupt(before))

    const after = rootIds()
    for (const f of [before, ...waiting]) expect(after).not.toContain(f.id().id)
    // Only roots running right now are listed: the ones reading the list (if any).
    expect(after.length).toBeLessThanOrEqual(1)
  })

  it("keeps listing a fiber that ended in the middle of the list correctly", async () => {
    expect(trackRootFibersInAList()).toBe(true)
    const gates = Array.from({ length: 3 }, () => Effect.runSync(Deferred.make<void>()))
    const [a, b, c] = gates.map((g) => Effect.runFork(Deferred.await(g)))
    Effect.runSync(Deferred.succeed(gates[1]!, undefined))
    await Effect.runPromise(Fiber.join(b!))
    const ids = rootIds()
    expect(ids).toContain(a!.id().id)
    expect(ids).toContain(c!.id().id)
    expect(ids).not.toContain(b!.id().id)
    for (const g of [gates[0]!, gates[2]!]) Effect.runSync(Deferred.succeed(g, undefined))
    await Effect.runPromise(Fiber.join(a!))
    await Effect.runPromise(Fiber.join(c!))
    const left = rootIds()
    expect(left).not.toContain(a!.id().id)
    expect(left).not.toContain(c!.id().id)
  })
})
