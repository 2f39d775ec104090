/**
 * @module RateLimiterKysely
 *
 * `RateLimiter` over Kysely: one row per counter key in `waybill_rate_counters`, so every host
 * on the database shares the counts (a limit or an abuse threshold holds across a fleet, not per
 * process). `add(key, n)` is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` statement,
 * atomic on SQLite and PostgreSQL alike, implementing core's `RateLimits.step`: `n` hits in the
 * stored window (or an earlier one, when host clocks disagree) add `n`, hits in a later window
 * start again at `n`. A hit is `add(key, 1)`, the same statement. `add(key, 0)` is a plain
 * `SELECT` and creates no row (a missing or expired row reads as 0 in the current window).
 *
 * Counters are never needed after their window ends; every `pruneEvery` writes one statement
 * deletes the expired rows (indexed by `expires_at`), so the table stays the size of one window's
 * active keys without a background job.
 *
 * A hit runs on every keyed request (unless the host buffers counts with core's
 * `RateLimits.buffered`), so the statement is compiled once (`Connection.prepare`) and its SQL
 * text reused with fresh parameters.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { sql } from "kysely"
import type { Connection } from "./internal/connection.js"
import { type RateLimiterShape, RateLimits, StorageError } from "./internal/core.js"

/** Options of {@link makeRateLimiter}. */
export interface RateLimiterOptions {
  /** Delete expired counters once every this many writes (hits and adds of n > 0) of this store (default 1000). */
  readonly pruneEvery?: number
}

/** `RateLimiter` over Kysely: shared fixed-window counters. */
export const makeRateLimiter = (conn: Connection, options: RateLimiterOptions = {}): RateLimiterShape => {
  const { execute, first, prepare, write } = conn
  const pruneEvery = Math.max(1, options.pruneEvery ?? 1000)
  let writes = 0

  const prune = (now: number) =>
    write("rate_counters.prune", (c) => c.deleteFrom("waybill_rate_counters").where("expires_at", "<=", now)).pipe(
      Effect.asVoid
    )

  const newer = sql<boolean>`waybill_rate_counters.window_start < excluded.window_start`
  // The added amount travels as the inserted row's count, so one SQL text serves every n.
  const addSql = prepare(
    (c, p: { readonly key: string; readonly start: number; readonly n: number; readonly end: number }) =>
      c
        .insertInto("waybill_rate_counters")
        .values({ key: p.key, window_start: p.start, count: p.n, expires_at: p.end })
        .onConflict((oc) =>
          oc.column("key").doUpdateSet({
            count: sql<number>`case when ${newer} then excluded.count else waybill_rate_counters.count + excluded.count end`,
            window_start: sql<number>`case when ${newer} then excluded.window_start else waybill_rate_counters.window_start end`,
            expires_at: sql<number>`case when ${newer} then excluded.expires_at else waybill_rate_counters.expires_at end`
          })
        )
        .returning(["window_start", "count"])
  )

  const addRow = Effect.fnUntraced(function* (key: string, start: number, n: number, windowMs: number, now: number) {
    const result = yield* execute("rate_counters.add", addSql({ key, start, n, end: start + windowMs }))
    const row = result.rows[0]
    if (row === undefined) {
      return yield* new StorageError({
        operation: "rate_counters.add",
        cause: new Error("rate counter upsert returned no row")
      })
    }
    writes += 1
    if (writes % pruneEvery === 0) yield* prune(now)
    return { windowStart: Number(row.window_start), count: Number(row.count) }
  })

  const add = (
    key: string,
    n: number,
    windowMs: number,
    now: number
  ): Effect.Effect<RateLimits.Counter, StorageError> => {
    const start = RateLimits.windowStart(now, windowMs)
    if (n === 0) {
      return Effect.map(
        first("rate_counters.read", (c) =>
          c.selectFrom("waybill_rate_counters").select(["window_start", "count"]).where("key", "=", key)
        ),
        (row) =>
          RateLimits.step(
            row === undefined ? undefined : { windowStart: Number(row.window_start), count: Number(row.count) },
            now,
            windowMs,
            0
          )
      )
    }
    return addRow(key, start, n, windowMs, now)
  }

  return {
    hit: (key, limit, windowMs) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(add(key, 1, windowMs, now), (counter) => RateLimits.quotaOf(counter, limit, windowMs, now))
      ),
    add: (key, n, windowMs) =>
      RateLimits.isHitCount(n)
        ? Effect.flatMap(Clock.currentTimeMillis, (now) => add(key, n, windowMs, now))
        : RateLimits.invalidHitCount(n),
    reset: (key) =>
      write("rate_counters.reset", (c) => c.deleteFrom("waybill_rate_counters").where("key", "=", key)).pipe(
        Effect.asVoid
      )
  }
}
