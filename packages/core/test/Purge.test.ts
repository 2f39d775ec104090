import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { describe, expect, it } from "vitest"
import { deleteInBatches } from "../src/shared/Purge.js"

describe("deleteInBatches", () => {
  it("deletes a backlog of any size in statements of at most `size`, stopping at the first short one", () =>
    fc.assert(
      fc.property(fc.nat({ max: 5_000 }), fc.integer({ min: 1, max: 300 }), (backlog, size) => {
        let left = backlog
        const limits: Array<number> = []
        const total = Effect.runSync(
          deleteInBatches(size, (limit) =>
            Effect.sync(() => {
              limits.push(limit)
              const n = Math.min(limit, left)
              left -= n
              return n
            })
          )
        )
        expect(total).toBe(backlog)
        expect(left).toBe(0)
        expect(limits.every((l) => l === size)).toBe(true)
        // Whole batches, then one short (possibly empty) batch that ends the loop.
        expect(limits.length).toBe(Math.floor(backlog / size) + 1)
      })
    ))

  it("stops at the first failure, with its error", () => {
    let calls = 0
    const result = Effect.runSync(
      Effect.either(
        deleteInBatches(10, () => {
          calls += 1
          return calls === 3 ? Effect.fail("locked" as const) : Effect.succeed(10)
        })
      )
    )
    expect(result._tag === "Left" && result.left).toBe("locked")
    expect(calls).toBe(3)
  })
})
