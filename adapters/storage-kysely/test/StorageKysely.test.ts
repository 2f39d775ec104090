import Database from "better-sqlite3"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { AccountStore, EventOutbox, ShipmentStore, Transactor } from "@waybill/core"
import { Fixtures } from "@waybill/testkit"
import { type CompiledQuery, Kysely, SqliteDialect } from "kysely"
import { Migrations, migrate, migrateToLatest, StorageKysely, Tables } from "../src/index.js"
import { isUniqueViolation } from "../src/internal/errors.js"
import { storageLayer, targets } from "./dialects.js"

/** A raw in-memory SQLite database with a Kysely over it that records every query it runs. */
const recordingSqlite = Effect.acquireRelease(
  Effect.sync(() => {
    const sqlite = new Database(":memory:")
    const queries: Array<CompiledQuery> = []
    const db = new Kysely<any>({
      dialect: new SqliteDialect({ database: sqlite }),
      log: (event) => {
        if (event.level === "query") queries.push(event.query)
      }
    })
    return { sqlite, db, queries }
  }),
  ({ db }) => Effect.promise(() => db.destroy())
)

describe("migrations", () => {
  it.scoped("create the waybill_ tables and their own waybill_ bookkeeping, idempotently", () =>
    Effect.gen(function* () {
      const { db } = yield* recordingSqlite
      const first = yield* Effect.promise(() => migrateToLatest(db))
      // Every migration applies, in name order (the table's key order is not the order of application).
      expect(first.results?.map((r) => [r.migrationName, r.status])).toEqual(
        Object.keys(Migrations.migrations)
          .sort()
          .map((name) => [name, "Success"])
      )
      expect(Object.keys(Migrations.migrations)).toEqual(
        expect.arrayContaining(["0001_initial", "0002_ip_blocks", "0004_abuse"])
      )
      const second = yield* Effect.promise(() => migrateToLatest(db))
      expect(second.results).toEqual([])
      yield* migrate(db)

      const tables = yield* Effect.promise(() => db.introspection.getTables({ withInternalKyselyTables: true }))
      const names = tables.map((t) => t.name).sort()
      expect(names).toEqual(
        [...Tables.tableNames, Migrations.migrationTableName, Migrations.migrationLockTableName].sort()
      )
      expect(names.every((n) => n.startsWith("waybill_"))).toBe(true)
    })
  )

  it.scoped("index the lookups on the hot paths (SQLite query plans)", () =>
    Effect.gen(function* () {
      const { db, queries, sqlite } = yield* recordingSqlite
      yield* migrate(db)
      const { accounts, outbox } = yield* StorageKysely.make(db)
      const plan = (q: CompiledQuery) =>
        sqlite
          .prepare(`explain query plan ${q.sql}`)
          .all(...(q.parameters as Array<unknown>))
          .map((row) => (row as { readonly detail: string }).detail)
          .join("\n")

      queries.length = 0
      yield* accounts.findKeyByHash(Fixtures.keyHash())
      expect(queries).toHaveLength(1)
      expect(plan(queries[0]!)).toContain("USING INDEX waybill_api_keys_hash_uq")

      queries.length = 0
      yield* outbox.listByShipment(Fixtures.trackNo())
      expect(plan(queries[0]!)).toMatch(/USING INDEX sqlite_autoindex_waybill_events/)
    })
  )
})

describe("StorageKysely", () => {
  it.scoped("insert writes one statement per table inside one transaction", () =>
    Effect.gen(function* () {
      const { db, queries } = yield* recordingSqlite
      yield* migrate(db)
      const { shipments } = yield* StorageKysely.make(db)
      const s = Fixtures.shipment()
      queries.length = 0
      yield* shipments.insert(s)
      expect(queries.map((q) => q.sql.split(" ").slice(0, 3).join(" "))).toEqual([
        "begin",
        'insert into "waybill_shipments"',
        'insert into "waybill_stops"',
        'insert into "waybill_legs"',
        'insert into "waybill_pieces"',
        "commit"
      ])
      expect(Option.getOrThrow(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
    })
  )

  it.scoped("a transaction on one database never captures another database's stores", () =>
    Effect.gen(function* () {
      const a = yield* recordingSqlite
      const b = yield* recordingSqlite
      yield* migrate(a.db)
      yield* migrate(b.db)
      const storesA = yield* StorageKysely.make(a.db)
      const storesB = yield* StorageKysely.make(b.db)
      const s = Fixtures.shipment()
      const result = yield* Effect.either(
        storesA.transactor.withTransaction(
          Effect.zipRight(storesB.shipments.insert(s), Effect.fail("abort A" as const))
        )
      )
      expect(result).toEqual(Either.left("abort A"))
      // B's write was its own (committed) transaction, not part of A's rolled-back one.
      expect(Option.isSome(yield* storesB.shipments.findByTrackNo(s.trackNo))).toBe(true)
      expect(Option.isNone(yield* storesA.shipments.findByTrackNo(s.trackNo))).toBe(true)
    })
  )

  it.scoped("driver failures other than unique violations are StorageError with the operation", () =>
    Effect.gen(function* () {
      const { db } = yield* recordingSqlite // not migrated: every table is missing
      const { accounts, shipments } = yield* StorageKysely.make(db)
      const read = yield* Effect.flip(shipments.findByTrackNo(Fixtures.trackNo()))
      expect(read).toMatchObject({ _tag: "StorageError", operation: "shipments.select" })
      const write = yield* Effect.flip(accounts.insertAccount(Fixtures.account()))
      expect(write).toMatchObject({ _tag: "StorageError", operation: "accounts.insert" })
    })
  )

  it("recognises unique violations of SQLite and PostgreSQL only", () => {
    expect(isUniqueViolation({ code: "SQLITE_CONSTRAINT_UNIQUE" })).toBe(true)
    expect(isUniqueViolation({ code: "SQLITE_CONSTRAINT_PRIMARYKEY" })).toBe(true)
    expect(isUniqueViolation({ code: "23505" })).toBe(true)
    expect(isUniqueViolation({ code: "SQLITE_CONSTRAINT_FOREIGNKEY" })).toBe(false)
    expect(isUniqueViolation({ code: "23503" })).toBe(false)
    expect(isUniqueViolation(new Error("UNIQUE constraint failed"))).toBe(false)
    expect(isUniqueViolation(null)).toBe(false)
  })
})

for (const target of targets) {
  describe(`storage-kysely: ${target.name}`, () => {
    it.effect("many writers from one version: one update and one event land", () =>
      Effect.gen(function* () {
        const shipments = yield* ShipmentStore
        const outbox = yield* EventOutbox
        const tx = yield* Transactor
        const s = Fixtures.shipment()
        yield* shipments.insert(s)
        // Each writer does what a lifecycle use case does: update, then append, in one transaction.
        const writer = (i: number) =>
          tx.withTransaction(
            Effect.gen(function* () {
              const updated = yield* shipments.update({
                trackNo: s.trackNo,
                expectedVersion: s.version,
                state: "assigned",
                driverId: `drv_${i}`,
                stops: [],
                updatedAt: s.updatedAt + i
              })
              yield* outbox.append(
                Fixtures.event({ trackNo: s.trackNo, customerNo: s.customerNo, type: "shipment.assigned" })
              )
              return updated
            })
          )
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => Effect.either(writer(i))),
          {
            concurrency: "unbounded"
          }
        )
        const winners = results.filter(Either.isRight)
        const losers = results.filter(Either.isLeft)
        expect(winners).toHaveLength(1)
        expect(losers.map((l) => l.left._tag)).toEqual(Array.from({ length: 7 }, () => "VersionConflict"))
        const stored = Option.getOrThrow(yield* shipments.findByTrackNo(s.trackNo))
        expect(stored).toEqual(winners[0]!.right)
        expect((yield* outbox.listByShipment(s.trackNo)).map((e) => e.sequence)).toEqual([1])
        // The account port shares the database and stays usable after the contention.
        const account = Fixtures.account()
        yield* (yield* AccountStore).insertAccount(account)
        expect(Option.isSome(yield* (yield* AccountStore).findAccount(account.customerNo))).toBe(true)
      }).pipe(Effect.provide(storageLayer(target)))
    )
  })
}
