import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { migrate } from "../src/index.js"
import { makeConnection } from "../src/internal/connection.js"
import { makeRateLimiter } from "../src/RateLimiterKysely.js"
import { recording, targets } from "./dialects.js"

const MINUTE = 60_000

for (const target of targets) {
  describe(`RateLimiterKysely add: ${target.name}`, () => {
    it.scoped("add is one statement, the same SQL as a hit with n bound as a parameter", () =>
      Effect.gen(function* () {
        const { db, queries } = yield* recording(target)
        yield* migrate(db)
        const limiter = makeRateLimiter(makeConnection(db))
        queries.length = 0
        yield* TestClock.setTime(10 * MINUTE)
        yield* limiter.hit("k", 5, MINUTE)
        expect(yield* limiter.add("k", 40, MINUTE)).toEqual({ windowStart: 10 * MINUTE, count: 41 })
        expect(queries).toHaveLength(2)
        expect(queries[0]!.sql).toMatch(/^insert into "waybill_rate_counters".* on conflict .* returning/)
        expect(queries[1]!.sql).toBe(queries[0]!.sql)
        expect(queries[1]!.parameters).toEqual(["k", 10 * MINUTE, 40, 11 * MINUTE])
      })
    )

    it.scoped("add of zero is a select that creates no row", () =>
      Effect.gen(function* () {
        const { db, queries } = yield* recording(target)
        yield* migrate(db)
        const limiter = makeRateLimiter(makeConnection(db))
        yield* TestClock.setTime(10 * MINUTE)
        queries.length = 0
        expect(yield* limiter.add("k", 0, MINUTE)).toEqual({ windowStart: 10 * MINUTE, count: 0 })
        expect(queries.map((q) => q.sql)).toEqual([expect.stringMatching(/^select /)])
        const rows = yield* Effect.promise(() => db.kysely.selectFrom("waybill_rate_counters").selectAll().execute())
        expect(rows).toEqual([])
      })
    )
  })
}
