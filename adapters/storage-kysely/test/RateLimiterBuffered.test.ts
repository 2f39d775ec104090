import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { RateLimits } from "@waybill/core"
import { rateLimiterContract } from "@waybill/testkit"
import { migrate } from "../src/index.js"
import { makeConnection } from "../src/internal/connection.js"
import { makeRateLimiter } from "../src/RateLimiterKysely.js"
import { recording, storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  rateLimiterContract(`RateLimits.bufferedLayer over storage-kysely: ${target.name}`, () =>
    RateLimits.bufferedLayer().pipe(Layer.provide(storageLayer(target)))
  )
}

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

    it.scoped("buffered over SQL: a busy key costs one statement per flush, and two hosts share the count", () =>
      Effect.gen(function* () {
        const { db, queries } = yield* recording(target)
        yield* migrate(db)
        // Two hosts: two stores (as two processes would have) over one database.
        const a = RateLimits.buffered(makeRateLimiter(makeConnection(db)))
        const b = RateLimits.buffered(makeRateLimiter(makeConnection(db)))
        yield* TestClock.setTime(10 * MINUTE)
        queries.length = 0
        for (let i = 0; i < 200; i++) yield* a.hit("k", 1000, MINUTE)
        for (let i = 0; i < 100; i++) yield* b.hit("k", 1000, MINUTE)
        expect(queries).toHaveLength(2) // each host's first hit
        yield* TestClock.adjust("1 second")
        yield* a.flush
        yield* b.flush
        expect(queries).toHaveLength(4)
        const [row] = yield* Effect.promise(() => db.kysely.selectFrom("waybill_rate_counters").selectAll().execute())
        expect(Number(row!.count)).toBe(300)
        yield* TestClock.adjust("1 second")
        expect((yield* a.hit("k", 1000, MINUTE)).count).toBe(301)
        expect((yield* b.hit("k", 1000, MINUTE)).count).toBe(302)
      })
    )
  })
}
