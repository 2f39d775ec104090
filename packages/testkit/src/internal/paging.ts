/**
 * What the paging cases of the conformance suites share: reading a list page by page the way
 * `Page.read` does, the newest-first order every list promises, and running a fast-check
 * property inside a case's services.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import type { Page } from "@waybill/core"

/**
 * Every item of a list, read `limit` at a time from the cursor of each page's last item. Checks
 * each page on the way: at most `limit` items, a full page whenever more follow, and every item
 * strictly below the cursor it was read from (so a store that repeats an item fails here
 * instead of paging forever).
 */
export const pageThrough = <K extends ReadonlyArray<string | number>, A, E, R>(
  limit: number,
  keyOf: (item: A) => K,
  fetch: (request: Page.Request<K>) => Effect.Effect<Page.Slice<A>, E, R>,
  startingAfter?: K
): Effect.Effect<ReadonlyArray<A>, E, R> =>
  Effect.gen(function* () {
    const all: Array<A> = []
    let after = startingAfter
    for (;;) {
      const page = yield* fetch({ limit, startingAfter: after })
      expect(page.items.length).toBeLessThanOrEqual(limit)
      for (const item of page.items) {
        if (after !== undefined) expect(compareKeys(keyOf(item), after)).toBe(-1)
        after = keyOf(item)
      }
      all.push(...page.items)
      if (!page.hasMore) return all
      expect(page.items).toHaveLength(limit)
    }
  })

/** Compares two keys part by part: numbers by value, strings by code unit (newest first: `b` vs `a`). */
export const compareKeys = (a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): number => {
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i]!, b[i]!]
    if (x !== y) return x < y ? -1 : 1
  }
  return 0
}

/** `items` in the order every list promises: newest first by key. */
export const newestFirst = <A>(items: ReadonlyArray<A>, keyOf: (item: A) => ReadonlyArray<string | number>) =>
  [...items].sort((a, b) => compareKeys(keyOf(b), keyOf(a)))

/** Checks `property` on `numRuns` samples of `arbitrary`, each run with the case's services. */
export const checkProperty = <T, R>(
  arbitrary: fc.Arbitrary<T>,
  property: (sample: T) => Effect.Effect<void, unknown, R>,
  numRuns = 15
): Effect.Effect<void, never, R> =>
  Effect.flatMap(Effect.context<R>(), (context) =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(arbitrary, (sample) => Effect.runPromise(Effect.provide(property(sample), context))),
        { numRuns }
      )
    )
  )

/**
 * A list's samples: creation times from a narrow range (so many items share one and the id
 * must break the tie), and a page size from 1 to a little more than the list.
 */
export const listSample = fc.record({
  times: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 12 }),
  limit: fc.integer({ min: 1, max: 14 })
})
