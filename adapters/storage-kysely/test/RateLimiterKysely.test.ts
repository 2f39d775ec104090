import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { rateLimiterContract } from "@waybill/testkit"
import { migrate } from "../src/index.js"
import { makeConnection } from "../src/internal/connection.js"
import { makeRateLimiter } from "../src/RateLimiterKysely.js"
import { recording, storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  rateLimiterContract(`storage-kysely RateLimiter: ${target.name}`, () => storageLayer(target))
}

for (const target of targets) {
  describe(`RateLimiterKysely: ${target.name}`, () => {
    it.scoped("a hit is one statement", () =>
      Effect.gen(function* () {
        const { db, queries } = yield* recording(target)
        yield* migrate(db)
        const limiter = makeRateLimiter(makeConnection(db))
        queries.length = 0
        yield* limiter.hit("k", 5, 60_000)
        yield* limiter.hit("k", 5, 60_000)
        expect(queries).toHaveLength(2)
        expect(queries[0]!.sql).toMatch(/^insert into "waybill_rate_counters".* on conflict .* returning/)
      })
    )

    it.scoped("expired counters are pruned every pruneEvery hits, live ones kept", () =>
      Effect.gen(function* () {
        const { db } = yield* recording(target)
        yield* migrate(db)
        const limiter = makeRateLimiter(makeConnection(db), { pruneEvery: 3 })
        const keys = () =>
          Effect.promise(() =>
            db.kysely.selectFrom("waybill_rate_counters").select("key").orderBy("key").execute()
          ).pipe(Effect.map((rows) => rows.map((r) => r.key as string)))
        yield* limiter.hit("old-1", 5, 60_000)
        yield* limiter.hit("old-2", 5, 60_000)
        yield* TestClock.adjust("2 minutes")
        expect(yield* keys()).toEqual(["old-1", "old-2"])
        yield* limiter.hit("new", 5, 60_000) // the third hit prunes
        expect(yield* keys()).toEqual(["new"])
      })
    )
  })
}
