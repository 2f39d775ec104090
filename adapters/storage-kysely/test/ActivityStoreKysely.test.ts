/**
 * The `ActivityStore` conformance suite on every target (SQLite and PostgreSQL), and what only
 * this adapter promises: a batch is one insert statement, and key slots keep `last4` and
 * `created_at` (null for keys written before migration 0015).
 */
import Database from "better-sqlite3"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { sql } from "kysely"
import { activityStoreContract, ActivityStoreContract, Fixtures } from "@waybill/testkit"
import { migrate, sqliteEngine, StorageKysely } from "../src/index.js"
import { describeSqliteOnly, recording, type Sent, storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  activityStoreContract(`storage-kysely ActivityStore: ${target.name}`, () => storageLayer(target))
}

for (const target of targets) {
  describe(`ActivityStoreKysely: ${target.name}`, () => {
    it.scoped("a batch is a few multi-row inserts of at most seven fixed shapes, in one transaction", () =>
      Effect.gen(function* () {
        const { db, all } = yield* recording(target)
        yield* migrate(db)
        const { activity } = yield* StorageKysely.make(db)
        const texts = new Set<string>()
        let at = 1_000
        for (const size of [500, 1, 77, 64, 499, 2]) {
          const entries = Array.from({ length: size }, () => ActivityStoreContract.entry("1000001", at++))
          all.length = 0
          yield* activity.append(entries)
          const inserts = all.filter((s) => /^insert into "waybill_activity"/.test(s.sql))
          // 64 rows a statement, the rest by its binary digits (500 = 7 x 64 + 32 + 16 + 4).
          expect(inserts.length).toBe(
            Math.floor(size / 64) + [...(size % 64).toString(2)].filter((d) => d === "1").length
          )
          expect(inserts.reduce((n, s) => n + s.parameters.length, 0)).toBe(size * 9)
          for (const s of inserts) texts.add(s.sql)
          // One commit (on SQLite the group commit's batch, with the unit under a savepoint).
          expect(all.filter((s) => /^commit/i.test(s.sql))).toHaveLength(1)
        }
        expect(texts.size).toBeLessThanOrEqual(7)
      })
    )

    it.scoped("key slots keep last4 and created_at; older rows read as null", () =>
      Effect.gen(function* () {
        const db = yield* target.open()
        yield* migrate(db)
        const { accounts } = yield* StorageKysely.make(db)
        const a = Fixtures.account()
        yield* accounts.insertAccount(a)
        const key = Fixtures.apiKey({ customerNo: a.customerNo, last4: "Ab12", createdAt: 1_234 })
        yield* accounts.putKey(key)
        expect(Option.getOrThrow(yield* accounts.findKey(a.customerNo, "live"))).toEqual(key)
        expect(Option.getOrThrow(yield* accounts.findKeyWithAccount(key.hash)).key).toEqual(key)
        // A key written before the columns existed.
        yield* Effect.promise(() =>
          sql`update waybill_api_keys set last4 = null, created_at = null where customer_no = ${a.customerNo}`.execute(
            db.kysely
          )
        )
        expect(Option.getOrThrow(yield* accounts.findKey(a.customerNo, "live"))).toEqual({
          ...key,
          last4: null,
          createdAt: null
        })
      })
    )
  })
}

describeSqliteOnly("ActivityStoreKysely query plans", "EXPLAIN QUERY PLAN is SQLite's", () => {
  it.scoped("lists, the last use of a key and the purge each read one index range, no sort", () =>
    Effect.gen(function* () {
      const { sqlite, db, queries } = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const sqlite = new Database(":memory:")
          const queries: Array<Sent> = []
          const db = sqliteEngine(sqlite, { onStatement: (sql, parameters) => queries.push({ sql, parameters }) })
          return { sqlite, db, queries }
        }),
        ({ db }) => Effect.promise(() => db.close())
      )
      yield* migrate(db)
      const { activity } = yield* StorageKysely.make(db)
      const plan = (match: RegExp) => {
        const q = queries.filter((s) => match.test(s.sql)).at(-1)!
        return sqlite
          .prepare(`explain query plan ${q.sql}`)
          .all(...(q.parameters as Array<unknown>))
          .map((row) => (row as { readonly detail: string }).detail)
          .join("\n")
      }
      yield* activity.list("1000001", {}, { limit: 5, startingAfter: [1, "01J"] })
      expect(plan(/^select/)).toContain("waybill_activity_customer_idx")
      expect(plan(/^select/)).not.toContain("TEMP B-TREE")
      yield* activity.list("1000001", { mode: "live" }, { limit: 5 })
      expect(plan(/^select/)).toContain("waybill_activity_customer_mode_idx (customer_no=? AND key_mode=?)")
      expect(plan(/^select/)).not.toContain("TEMP B-TREE")
      // A status filter (a class, or one status) reads its hundred's rows of the account (and
      // of the mode) alone: a rare status never walks the whole log (0017).
      for (const status of [
        { from: 400, below: 500 },
        { from: 503, below: 504 }
      ]) {
        yield* activity.list("1000001", { status }, { limit: 5, startingAfter: [1, "01J"] })
        expect(plan(/^select/)).toContain("waybill_activity_customer_class_idx (customer_no=? AND <expr>=?")
        expect(plan(/^select/)).not.toContain("TEMP B-TREE")
        yield* activity.list("1000001", { mode: "test", status }, { limit: 5 })
        expect(plan(/^select/)).toContain(
          "waybill_activity_customer_mode_class_idx (customer_no=? AND key_mode=? AND <expr>=?"
        )
        expect(plan(/^select/)).not.toContain("TEMP B-TREE")
      }
      // An empty range matches nothing and asks nothing.
      const before = queries.length
      expect((yield* activity.list("1000001", { status: { from: 0, below: 0 } }, { limit: 5 })).items).toEqual([])
      expect(queries.length).toBe(before)
      yield* activity.lastUsed("1000001", "test")
      expect(plan(/^select/)).toMatch(/SEARCH waybill_activity USING COVERING INDEX waybill_activity_customer_mode_idx/)
      yield* activity.deleteBefore(1_000, 10)
      expect(plan(/^delete/)).toContain("sqlite_autoindex_waybill_activity_1")
      expect(plan(/^delete/)).not.toMatch(/SCAN waybill_activity(?! USING)/)
    })
  )
})
