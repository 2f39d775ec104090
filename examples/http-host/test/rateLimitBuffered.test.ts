/**
 * The host's rate limiting: `@waybill/rate-limit-buffered` in front of `@waybill/storage-kysely`'s
 * SQL counters, as `host.ts` composes them. Adapters never import each other, so the two meet
 * only here.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { type CompiledQuery, Kysely, SqliteDialect } from "kysely"
import { RateLimiter } from "@waybill/core"
import { RateLimitBuffered } from "@waybill/rate-limit-buffered"
import { migrate, StorageKysely } from "@waybill/storage-kysely"
import { rateLimiterContract } from "@waybill/testkit"

const MINUTE = 60_000

/** A fresh in-memory database, and every statement Kysely runs on it. */
const recordedDatabase = () => {
  const queries: Array<CompiledQuery> = []
  const db = new Kysely<any>({
    dialect: new SqliteDialect({ database: new Database(":memory:") }),
    log: (event) => {
      if (event.level === "query") queries.push(event.query)
    }
  })
  return { db, queries }
}

rateLimiterContract("RateLimitBuffered.bufferedLayer over storage-kysely (SQLite)", () => {
  const { db } = recordedDatabase()
  return RateLimitBuffered.bufferedLayer().pipe(
    Layer.provide(Layer.effectDiscard(migrate(db)).pipe(Layer.provideMerge(StorageKysely.layer(db))))
  )
})

describe("buffered rate limits over SQL", () => {
  it.scoped("a busy key costs one statement per flush, and two hosts share the count", () =>
    Effect.gen(function* () {
      const { db, queries } = recordedDatabase()
      yield* migrate(db)
      // Two hosts: two stores (as two processes would have) over one database.
      const storeOf = Effect.provide(RateLimiter, StorageKysely.layer(db))
      const a = RateLimitBuffered.buffered(yield* storeOf)
      const b = RateLimitBuffered.buffered(yield* storeOf)
      yield* TestClock.setTime(10 * MINUTE)
      queries.length = 0
      for (let i = 0; i < 200; i++) yield* a.hit("k", 1000, MINUTE)
      for (let i = 0; i < 100; i++) yield* b.hit("k", 1000, MINUTE)
      expect(queries).toHaveLength(2) // each host's first hit
      yield* TestClock.adjust("1 second")
      yield* a.flush
      yield* b.flush
      expect(queries).toHaveLength(4)
      const [row] = yield* Effect.promise(() => db.selectFrom("waybill_rate_counters").selectAll().execute())
      expect(Number(row!.count)).toBe(300)
      yield* TestClock.adjust("1 second")
      expect((yield* a.hit("k", 1000, MINUTE)).count).toBe(301)
      expect((yield* b.hit("k", 1000, MINUTE)).count).toBe(302)
    })
  )
})
