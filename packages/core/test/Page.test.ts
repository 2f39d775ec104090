import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Page from "../src/shared/Page.js"

interface Item {
  readonly createdAt: number
  readonly id: string
}
const keying = Page.byCreation<Item>()

/** A list in memory, paged the way the stores page: newest first, keyset, `limit + 1`. */
const memoryList = (items: ReadonlyArray<Item>) => {
  const sorted = [...items].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  return (request: Page.Request<Page.TimeKey>) =>
    Effect.sync(() => {
      const after = request.startingAfter
      const rows = sorted.filter(
        (i) => after === undefined || i.createdAt < after[0] || (i.createdAt === after[0] && i.id < after[1])
      )
      return Page.sliceOf(rows.slice(0, request.limit + 1), request.limit)
    })
}

describe("Page.parseQuery", () => {
  it("defaults to 20 and takes 1 to 100", () => {
    expect(Page.parseQuery(null, null)).toEqual(Either.right({ limit: 20 }))
    expect(Page.parseQuery("", "")).toEqual(Either.right({ limit: 20 }))
    expect(Page.parseQuery("1", "abc")).toEqual(Either.right({ limit: 1, startingAfter: "abc" }))
    expect(Page.parseQuery("100", undefined)).toEqual(Either.right({ limit: 100 }))
  })

  it("refuses anything else with one sentence", () => {
    for (const bad of ["0", "101", "-1", "1.5", "ten", " 5", "1e2", "0x10", "9999"]) {
      const parsed = Page.parseQuery(bad, null)
      expect(Either.isLeft(parsed) && parsed.left.message).toBe("limit must be an integer from 1 to 100.")
    }
    expect(Either.isLeft(Page.parseQuery("5", "x".repeat(513)))).toBe(true)
  })
})

describe("Page cursors", () => {
  it("decode what they encode, and nothing else", () => {
    const cursor = Page.encodeCursor(keying, [1_700_000_000_000, "we_01ABC"])
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(Page.decodeCursor(keying, cursor)).toEqual(Either.right([1_700_000_000_000, "we_01ABC"]))
    const garbage = [
      "",
      "not a cursor",
      cursor + "=",
      Buffer.from('[1.5,"x"]').toString("base64url"),
      Buffer.from('[1,""]').toString("base64url"),
      Buffer.from('[1,"x",3]').toString("base64url"),
      Buffer.from('{"a":1}').toString("base64url"),
      Buffer.from("[[[[[[1]]]]]]").toString("base64url"),
      Buffer.from([0xff, 0xfe]).toString("base64url")
    ]
    for (const bad of garbage) expect(Either.isLeft(Page.decodeCursor(keying, bad))).toBe(true)
  })

  it.effect("a bad cursor or limit fails with InvalidPage before the store is asked", () =>
    Effect.gen(function* () {
      let asked = 0
      const fetch = (r: Page.Request<Page.TimeKey>) =>
        Effect.sync(() => (asked++, memoryList([])(r))).pipe(Effect.flatten)
      const bad = yield* Effect.flip(Page.read({ limit: 5, startingAfter: "nope" }, keying, fetch))
      expect(bad._tag).toBe("InvalidPage")
      expect((yield* Effect.flip(Page.read({ limit: 0 }, keying, fetch)))._tag).toBe("InvalidPage")
      expect(asked).toBe(0)
    })
  )

  it("paging by nextCursor yields every item once, newest first (property)", () =>
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({ createdAt: fc.integer({ min: 0, max: 4 }), id: fc.string({ minLength: 1, maxLength: 4 }) }),
          {
            selector: (i) => i.id,
            maxLength: 30
          }
        ),
        fc.integer({ min: 1, max: 12 }),
        (items, limit) => {
          const fetch = memoryList(items)
          const seen: Array<Item> = []
          let query: Page.Query = { limit }
          for (;;) {
            const page = Effect.runSync(Page.read(query, keying, fetch))
            seen.push(...page.items)
            if (page.nextCursor === null) {
              expect(page.hasMore).toBe(false)
              break
            }
            query = { limit, startingAfter: page.nextCursor }
          }
          expect(seen).toEqual(Effect.runSync(fetch({ limit: 1000 })).items)
          expect(seen).toHaveLength(items.length)
        }
      )
    ))
})
