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
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { RateLimiter } from "@waybill/core"
import { RateLimitBuffered } from "@waybill/rate-limit-buffered"
import { migrate, sqliteEngine, StorageKysely } from "@waybill/storage-kysely"
import { rateLimiterContract } from "@waybill/testkit"

const MINUTE = 60_000

const dir = mkdtempSync(join(tmpdir(), "waybill-ratelimit-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

/**
 * A fresh database file, and a way to open it as one host would (its own handle, so its own
 * engine), recording the data statements each host sends (transaction control left out).
 */
const sharedDatabase = () => {
  const file = join(dir, `counters-${files++}.db`)
  const queries: Array<string> = []
  const host = () =>
    sqliteEngine(new Database(file), {
      onStatement: (sql) => {
        if (!/^\s*(begin|commit|rollback|savepoint|release)\b/i.test(sql)) queries.push(sql)
      }
    })
  return { host, queries }
}

rateLimiterContract("RateLimitBuffered.bufferedLayer over storage-kysely (SQLite)", () => {
  const engine = sharedDatabase().host()
  return RateLimitBuffered.bufferedLayer().pipe(
    Layer.provide(Layer.effectDiscard(migrate(engine)).pipe(Layer.provideMerge(StorageKysely.layer(engine))))
  )
})

describe("buffered rate limits over SQL", () => {
  it.scoped("a busy key costs one statement per flush, and two hosts share the count", () =>
    Effect.gen(function* () {
      const { host, queries } = sharedDatabase()
      // Two hosts: two handles, two engines, two stores (as two processes would have) over one file.
      const [one, two] = [host(), host()]
      yield* migrate(one)
      const storeOf = (engine: typeof one) => Effect.provide(RateLimiter, StorageKysely.layer(engine))
      const a = RateLimitBuffered.buffered(yield* storeOf(one))
      const b = RateLimitBuffered.buffered(yield* storeOf(two))
      yield* TestClock.setTime(10 * MINUTE)
      queries.length = 0
      for (let i = 0; i < 200; i++) yield* a.hit("k", 1000, MINUTE)
      for (let i = 0; i < 100; i++) yield* b.hit("k", 1000, MINUTE)
      expect(queries).toHaveLength(2) // each host's first hit
      yield* TestClock.adjust("1 second")
      yield* a.flush
      yield* b.flush
      expect(queries).toHaveLength(4)
      const [row] = yield* Effect.promise(() => one.kysely.selectFrom("waybill_rate_counters").selectAll().execute())
      expect(Number(row!.count)).toBe(300)
      yield* TestClock.adjust("1 second")
      expect((yield* a.hit("k", 1000, MINUTE)).count).toBe(301)
      expect((yield* b.hit("k", 1000, MINUTE)).count).toBe(302)
    })
  )
})
