/**
 * @module RateLimiterKysely
 *
 * `RateLimiter` over Kysely: one row per counter key in `waybill_rate_counters`, so every host
 * on the database shares the counts (a limit or an abuse threshold holds across a fleet, not per
 * process). A hit is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` statement, atomic on
 * SQLite and PostgreSQL alike, implementing core's `RateLimits.step`: a hit in the stored window
 * (or an earlier one, when host clocks disagree) adds one, a hit in a later window starts again
 * at one.
 *
 * Counters are never needed after their window ends; every `pruneEvery` hits one statement
 * deletes the expired rows (indexed by `expires_at`), so the table stays the size of one window's
 * active keys without a background job.
 *
 * A hit runs on every keyed request, so the statement is built and compiled by the host's Kysely
 * once (its dialect and plugins apply) and its SQL text reused with fresh parameters, provided
 * Kysely bound exactly the four values in order; otherwise it is compiled per call as usual.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { CompiledQuery, sql } from "kysely"
import type { Connection, Db } from "./internal/connection.js"
import { type RateLimiterShape, RateLimits } from "./internal/core.js"

/** Options of {@link makeRateLimiter}. */
export interface RateLimiterOptions {
  /** Delete expired counters once every this many hits of this store (default 1000). */
  readonly pruneEvery?: number
}

/** `RateLimiter` over Kysely: shared fixed-window counters. */
export const makeRateLimiter = (conn: Connection, options: RateLimiterOptions = {}): RateLimiterShape => {
  const { query } = conn
  const pruneEvery = Math.max(1, options.pruneEvery ?? 1000)
  let hits = 0

  const prune = (now: number) =>
    query("rate_counters.prune", (c) =>
      c.deleteFrom("waybill_rate_counters").where("expires_at", "<=", now).execute()
    ).pipe(Effect.asVoid)

  const newer = sql<boolean>`waybill_rate_counters.window_start < excluded.window_start`
  const build = (c: Db, key: string, start: number, end: number) =>
    c
      .insertInto("waybill_rate_counters")
      .values({ key, window_start: start, count: 1, expires_at: end })
      .onConflict((oc) =>
        oc.column("key").doUpdateSet({
          count: sql<number>`case when ${newer} then 1 else waybill_rate_counters.count + 1 end`,
          window_start: sql<number>`case when ${newer} then excluded.window_start else waybill_rate_counters.window_start end`,
          expires_at: sql<number>`case when ${newer} then excluded.expires_at else waybill_rate_counters.expires_at end`
        })
      )
      .returning(["window_start", "count"])

  /** SQL text of the hit statement: unknown until first use, null when it cannot be reused. */
  let hitSql: string | null | undefined
  const runHit = async (c: Db, key: string, start: number, end: number) => {
    const parameters = [key, start, 1, end]
    if (hitSql === undefined) {
      const compiled = build(c, key, start, end).compile()
      const same =
        compiled.parameters.length === parameters.length && compiled.parameters.every((p, i) => p === parameters[i])
      hitSql = same ? compiled.sql : null
    }
    const compiled = hitSql === null ? build(c, key, start, end).compile() : CompiledQuery.raw(hitSql, parameters)
    const result = await c.executeQuery<{ readonly window_start: unknown; readonly count: unknown }>(compiled)
    const row = result.rows[0]
    if (row === undefined) throw new Error("rate counter upsert returned no row")
    return row
  }

  return {
    hit: (key, limit, windowMs) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const start = RateLimits.windowStart(now, windowMs)
        const row = yield* query("rate_counters.hit", (c) => runHit(c, key, start, start + windowMs))
        hits += 1
        if (hits % pruneEvery === 0) yield* prune(now)
        return RateLimits.quotaOf(
          { windowStart: Number(row.window_start), count: Number(row.count) },
          limit,
          windowMs,
          now
        )
      }),
    reset: (key) =>
      query("rate_counters.reset", (c) => c.deleteFrom("waybill_rate_counters").where("key", "=", key).execute()).pipe(
        Effect.asVoid
      )
  }
}
