import Database from "better-sqlite3"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { AccountStore, DocumentStore, EventOutbox, ShipmentStore, Transactor } from "@waybill/core"
import { Fixtures } from "@waybill/testkit"
import { type Kysely, Migrator, sql } from "kysely"
import {
  Migrations,
  migrate,
  migrateToLatest,
  type Run,
  sqliteEngine,
  type StorageEngine,
  StorageKysely,
  Tables
} from "../src/index.js"
import { makeConnection } from "../src/internal/connection.js"
import { isUniqueViolation } from "../src/internal/errors.js"
import { shipmentRow, stopRow } from "../src/internal/rows.js"
import { storageLayer, describeSqliteOnly, recording, type Sent, type Target, targets } from "./dialects.js"

/** A raw in-memory SQLite database (for the SQLite-only query plan test) with an engine that records every statement it sends. */
const recordingSqlite = Effect.acquireRelease(
  Effect.sync(() => {
    const sqlite = new Database(":memory:")
    const queries: Array<Sent> = []
    const db = sqliteEngine(sqlite, { onStatement: (sql, parameters) => queries.push({ sql, parameters }) })
    return { sqlite, db, queries }
  }),
  ({ db }) => Effect.promise(() => db.close())
)

/** The tables of `db` (on PostgreSQL: of its own schema only, the server has other tests' too). */
const tablesOf = (target: Target, engine: StorageEngine) =>
  Effect.promise(async () => {
    const db = engine.kysely
    const schema =
      target.dialect === "postgres"
        ? (await sql<{ readonly s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
        : undefined
    const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
    return tables
      .filter((t) => schema === undefined || t.schema === schema)
      .map((t) => t.name)
      .sort()
  })

for (const target of targets) {
  describe(`migrations: ${target.name}`, () => {
    it.scoped("create the waybill_ tables and their own waybill_ bookkeeping, idempotently", () =>
      Effect.gen(function* () {
        // Another database of the same kind, migrated first: on PostgreSQL a schema beside this
        // one on the same server, whose bookkeeping tables Kysely's Migrator must not mistake
        // for this database's.
        const other = yield* target.open()
        yield* migrate(other)
        const db = yield* target.open()
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

        const names = yield* tablesOf(target, db)
        expect(names).toEqual(
          [...Tables.tableNames, Migrations.migrationTableName, Migrations.migrationLockTableName].sort()
        )
        expect(names.every((n) => n.startsWith("waybill_"))).toBe(true)
      })
    )
  })
}

/** A migrator of `engine` that can stop at a given migration (as a database written by an older Waybill). */
const migratorOf = (target: Target, engine: StorageEngine) =>
  Effect.promise(async () => {
    const schema =
      target.dialect === "postgres"
        ? (await sql<{ readonly s: string }>`select current_schema() as s`.execute(engine.kysely)).rows[0]?.s
        : undefined
    return new Migrator({
      db: engine.kysely,
      provider: { getMigrations: () => Promise.resolve({ ...Migrations.migrations }) },
      migrationTableName: Migrations.migrationTableName,
      migrationLockTableName: Migrations.migrationLockTableName,
      ...(schema === undefined ? {} : { migrationTableSchema: schema })
    })
  })

for (const target of targets) {
  describe(`migration 0008_leaner_booking: ${target.name}`, () => {
    it.scoped("moves every leg onto the stop it arrives at, and the shipment reads back the same", () =>
      Effect.gen(function* () {
        const db = yield* target.open()
        const migrator = yield* migratorOf(target, db)
        const before = yield* Effect.promise(() => migrator.migrateTo("0007_leaner_events"))
        expect(before.error).toBeUndefined()
        const s = Fixtures.shipment()
        const k = db.kysely as unknown as Kysely<any>
        // The rows an older Waybill wrote: the shipment, its stops, its legs in their own table.
        yield* Effect.promise(async () => {
          await k.insertInto("waybill_shipments").values(shipmentRow(s)).execute()
          await k
            .insertInto("waybill_stops")
            .values(
              s.stops.map((st) => {
                const { leg_from: _f, leg_miles: _m, leg_seq: _s, ...old } = stopRow(s.trackNo, st, undefined)
                return old
              })
            )
            .execute()
          await k
            .insertInto("waybill_legs")
            .values(
              s.legs.map((l) => ({
                track_no: s.trackNo,
                seq: l.seq,
                from_stop: l.fromStop,
                to_stop: l.toStop,
                miles: l.miles
              }))
            )
            .execute()
        })
        yield* migrate(db)
        const { shipments } = yield* StorageKysely.make(db)
        expect(Option.getOrThrow(yield* shipments.findByTrackNo(s.trackNo))).toEqual({ ...s, pieceDetails: [] })
      })
    )

    it.scoped("refuses, changing nothing, when a leg arrives at no stop", () =>
      Effect.gen(function* () {
        const db = yield* target.open()
        const migrator = yield* migratorOf(target, db)
        yield* Effect.promise(() => migrator.migrateTo("0007_leaner_events"))
        const k = db.kysely as unknown as Kysely<any>
        const s = Fixtures.shipment()
        yield* Effect.promise(async () => {
          await k.insertInto("waybill_shipments").values(shipmentRow(s)).execute()
          await k
            .insertInto("waybill_legs")
            .values({ track_no: s.trackNo, seq: 0, from_stop: 0, to_stop: 7, miles: 1 })
            .execute()
        })
        const result = yield* Effect.promise(() => migrator.migrateToLatest())
        expect(String(result.error)).toMatch(/1 legs do not arrive at a stop of their own/)
        // Nothing changed: the legs table and the old stops columns are as they were, and the
        // migration can run once the legs are fixed.
        expect(yield* Effect.promise(() => k.selectFrom("waybill_legs").selectAll().execute())).toHaveLength(1)
        yield* Effect.promise(() => k.deleteFrom("waybill_legs").execute())
        expect((yield* Effect.promise(() => migrator.migrateToLatest())).error).toBeUndefined()
      })
    )
  })
}

describeSqliteOnly("migrations (SQLite query plans)", "EXPLAIN QUERY PLAN is SQLite's", () => {
  it.scoped("index the lookups on the hot paths (EXPLAIN QUERY PLAN is SQLite's)", () =>
    Effect.gen(function* () {
      const { db, queries, sqlite } = yield* recordingSqlite
      yield* migrate(db)
      const { accounts, outbox } = yield* StorageKysely.make(db)
      const plan = (q: Sent) =>
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

  it.scoped("a booking writes 10 B-trees, and a lookup that needs it uses each index among them", () =>
    Effect.gen(function* () {
      const { db, queries, sqlite } = yield* recordingSqlite
      yield* migrate(db)
      const { documents, outbox, shipments, webhooks } = yield* StorageKysely.make(db)
      const plan = (q: Sent | undefined) =>
        sqlite
          .prepare(`explain query plan ${q!.sql}`)
          .all(...(q!.parameters as Array<unknown>))
          .map((row) => (row as { readonly detail: string }).detail)
          .join("\n")
      const indexes = (table: string) =>
        (
          sqlite
            .prepare("select name from sqlite_master where type = 'index' and tbl_name = ? order by name")
            .all(table) as Array<{
            readonly name: string
          }>
        ).map((r) => r.name)
      // A booking: one shipment row, its stop rows (legs ride on them), one event row. Each
      // table is a B-tree of its own besides its indexes.
      expect(indexes("waybill_shipments")).toEqual([
        "sqlite_autoindex_waybill_shipments_1",
        "waybill_shipments_customer_created_idx",
        "waybill_shipments_customer_reference_lower_idx"
      ])
      expect(indexes("waybill_stops")).toEqual(["sqlite_autoindex_waybill_stops_1"])
      expect(indexes("waybill_events")).toEqual([
        "sqlite_autoindex_waybill_events_1",
        "sqlite_autoindex_waybill_events_2",
        "waybill_events_customer_idx"
      ])
      expect(sqlite.prepare("select name from sqlite_master where name = 'waybill_legs'").all()).toEqual([])

      const s = Fixtures.shipment()
      yield* shipments.insert(s)
      const last = (prefix: string) => queries.filter((q) => q.sql.startsWith(prefix)).at(-1)

      queries.length = 0
      yield* shipments.findByTrackNo(s.trackNo)
      expect(plan(last('select * from "waybill_shipments"'))).toContain("sqlite_autoindex_waybill_shipments_1")
      expect(plan(last('select * from "waybill_stops"'))).toContain("sqlite_autoindex_waybill_stops_1")

      // Documents lookup by customer reference: the customer's shipments, then the reference among them.
      yield* documents.lookupOrders({
        customers: [s.customerNo],
        field: "customer_reference",
        values: [s.billingReference],
        limit: 10
      })
      expect(plan(last("select"))).toContain(
        "waybill_shipments_customer_reference_lower_idx (customer_no=? AND <expr>=?)"
      )
      // Any field: each key by its own index, the reference by the account's (queryPlans.test.ts).
      yield* documents.lookupOrders({ customers: [s.customerNo], field: "any", values: ["x"], limit: 10 })
      expect(plan(last("select"))).toContain(
        "waybill_shipments_customer_reference_lower_idx (customer_no=? AND <expr>=?)"
      )
      // The account's shipment list (and its search): ShipmentSearchKysely.test.ts.

      // Events: by shipment (the unique (track_no, sequence)), by id and by customer and time.
      const event = yield* outbox.append(Fixtures.event({ trackNo: s.trackNo, customerNo: s.customerNo }))
      queries.length = 0
      yield* outbox.listByShipment(s.trackNo)
      expect(plan(last("select"))).toContain("sqlite_autoindex_waybill_events_2")
      yield* webhooks.enqueue("we_none", event.id, 1)
      expect(plan(last('insert into "waybill_webhook_deliveries"'))).toContain("sqlite_autoindex_waybill_events_1")
      yield* webhooks.recover("we_none", 0, 1)
      expect(plan(last('insert into "waybill_webhook_deliveries"'))).toContain("waybill_events_customer_idx")
    })
  )

  it.scoped("paged lists read their keyset as one index range, no sort (0013_paging_indexes)", () =>
    Effect.gen(function* () {
      const { db, queries, sqlite } = yield* recordingSqlite
      yield* migrate(db)
      const { webhooks } = yield* StorageKysely.make(db)
      const plan = () => {
        const q = queries.at(-1)!
        return sqlite
          .prepare(`explain query plan ${q.sql}`)
          .all(...(q.parameters as Array<unknown>))
          .map((row) => (row as { readonly detail: string }).detail)
          .join("\n")
      }
      yield* webhooks.listDeliveries("we_x", { limit: 5, startingAfter: [1, "evt_x"] })
      expect(plan()).toContain("waybill_webhook_deliveries_list_idx")
      expect(plan()).not.toContain("TEMP B-TREE")
      yield* webhooks.listAttempts("we_x", { limit: 5, startingAfter: [1, "evt_x", 2] })
      expect(plan()).toContain("waybill_webhook_attempts_list_idx")
      expect(plan()).not.toContain("TEMP B-TREE")
      yield* webhooks.listEndpoints({ customerNo: "1000001" }, { limit: 5, startingAfter: [1, "we_x"] })
      expect(plan()).toContain("waybill_webhook_endpoints_list_idx")
      expect(plan()).not.toContain("TEMP B-TREE")
    })
  )

  it.scoped("the registration e-mail check uses the index on lower(email)", () =>
    Effect.gen(function* () {
      const { db, queries, sqlite } = yield* recordingSqlite
      yield* migrate(db)
      const { registrations } = yield* StorageKysely.make(db)
      queries.length = 0
      yield* registrations.emailHasCustomer("Someone@Example.com")
      const q = queries.at(-1)!
      const detail = sqlite
        .prepare(`explain query plan ${q.sql}`)
        .all(...(q.parameters as Array<unknown>))
        .map((row) => (row as { readonly detail: string }).detail)
        .join("\n")
      expect(detail).toContain("USING INDEX waybill_registrations_email_lower_idx")
    })
  )
})

for (const target of targets) {
  describe(`StorageKysely: ${target.name}`, () => {
    it.scoped("insert writes one statement per table inside one transaction (legs ride on their stops)", () =>
      Effect.gen(function* () {
        const { all, db } = yield* recording(target)
        yield* migrate(db)
        const { shipments } = yield* StorageKysely.make(db)
        const s = Fixtures.shipment()
        all.length = 0
        yield* shipments.insert(s)
        const inserts = [
          'insert into "waybill_shipments"',
          'insert into "waybill_stops"',
          'insert into "waybill_pieces"'
        ]
        expect(all.map((q) => q.sql.split(" ").slice(0, 3).join(" "))).toEqual(
          target.dialect === "sqlite"
            ? // A unit of the SQLite batch: under its own savepoint, answered after the COMMIT.
              ["begin immediate", "savepoint waybill_unit", ...inserts, "release waybill_unit", "commit"]
            : ["begin", ...inserts, "commit"]
        )
        expect(Option.getOrThrow(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
      })
    )

    it.scoped("a transaction on one database never captures another database's stores", () =>
      Effect.gen(function* () {
        const a = yield* target.open()
        const b = yield* target.open()
        yield* migrate(a)
        yield* migrate(b)
        const storesA = yield* StorageKysely.make(a)
        const storesB = yield* StorageKysely.make(b)
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
        const db = yield* target.open() // not migrated: every table is missing
        const { accounts, shipments } = yield* StorageKysely.make(db)
        const read = yield* Effect.flip(shipments.findByTrackNo(Fixtures.trackNo()))
        expect(read).toMatchObject({ _tag: "StorageError", operation: "shipments.select" })
        const write = yield* Effect.flip(accounts.insertAccount(Fixtures.account()))
        expect(write).toMatchObject({ _tag: "StorageError", operation: "accounts.insert" })
      })
    )

    it.scoped("the driver's own unique violations are DuplicateKey (tracking number, customer number, key hash)", () =>
      Effect.gen(function* () {
        const db = yield* target.open()
        yield* migrate(db)
        const { accounts, shipments } = yield* StorageKysely.make(db)
        const s = Fixtures.shipment()
        yield* shipments.insert(s)
        expect(yield* Effect.flip(shipments.insert(s))).toMatchObject({ _tag: "DuplicateKey", what: "track_no" })
        const account = Fixtures.account()
        yield* accounts.insertAccount(account)
        expect(yield* Effect.flip(accounts.insertAccount(account))).toMatchObject({
          _tag: "DuplicateKey",
          what: "customer_no"
        })
        const key = Fixtures.apiKey({ customerNo: account.customerNo, mode: "live" })
        yield* accounts.putKey(key)
        expect(yield* Effect.flip(accounts.putKey({ ...key, mode: "test" }))).toMatchObject({
          _tag: "DuplicateKey",
          what: "key"
        })
        // The failed statements left nothing behind and the database stays usable.
        expect(Option.getOrThrow(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
        expect((yield* accounts.listKeys(account.customerNo)).map((k) => k.mode)).toEqual(["live"])
      })
    )

    it.scoped("findByTrackNo reads the shipment and its stops from one snapshot", () =>
      Effect.gen(function* () {
        const db = yield* target.open()
        yield* migrate(db)
        const writer = yield* StorageKysely.make(db)
        const s = Fixtures.shipment()
        yield* writer.shipments.insert(s)
        // The reader's engine (same database, same pool) runs an update of the shipment and its
        // stops, from another fiber, right after the reader has fetched the shipment row and
        // before it reads the stops. On SQLite the update waits for the reader's unit (one
        // connection), hence the bounded wait.
        let armed = true
        const pending: Array<Promise<unknown>> = []
        const interleaved =
          (run: Run): Run =>
          (text, parameters, onError) =>
            Effect.tap(run(text, parameters, onError), () => {
              if (!armed || !/^select .* from "waybill_shipments"/.test(text)) return Effect.void
              armed = false
              const write = Effect.runPromise(
                writer.shipments.update({
                  trackNo: s.trackNo,
                  expectedVersion: s.version,
                  state: "assigned",
                  driverId: "drv_1",
                  stops: s.stops.map((st) => ({ seq: st.seq, status: "arrived" as const })),
                  updatedAt: s.updatedAt + 1
                })
              )
              pending.push(write)
              return Effect.promise(() => Promise.race([write, new Promise((resolve) => setTimeout(resolve, 100))]))
            })
        const readerEngine: StorageEngine = {
          ...db,
          run: interleaved(db.run),
          transaction: (snapshot, body) => db.transaction(snapshot, (run) => body(interleaved(run)))
        }
        const reader = yield* StorageKysely.make(readerEngine)
        const read = Option.getOrThrow(yield* reader.shipments.findByTrackNo(s.trackNo))
        yield* Effect.promise(() => Promise.all(pending))
        expect(armed).toBe(false)
        // Either wholly before the update or wholly after it, never a mix.
        const statuses = new Set(read.stops.map((st) => st.status))
        expect(statuses.size).toBe(1)
        if (read.version === s.version) expect([...statuses]).toEqual(["pending"])
        else expect([...statuses]).toEqual(["arrived"])
        const after = Option.getOrThrow(yield* writer.shipments.findByTrackNo(s.trackNo))
        expect(after.version).toBe(s.version + 1)
        expect(after.stops.every((st) => st.status === "arrived")).toBe(true)
      })
    )
  })
}

describe("isUniqueViolation", () => {
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

    it.effect("many setOrderVersion calls from one expected version: exactly one wins", () =>
      Effect.gen(function* () {
        const shipments = yield* ShipmentStore
        const docs = yield* DocumentStore
        const s = Fixtures.shipment()
        yield* shipments.insert(s)
        // From the implicit version 1 (no order row yet), then from a stored one.
        for (const from of [1, 2]) {
          const results = yield* Effect.all(
            Array.from({ length: 8 }, () => Effect.either(docs.setOrderVersion(s.trackNo, from, from + 1))),
            { concurrency: "unbounded" }
          )
          expect(results.filter(Either.isRight)).toHaveLength(1)
          expect(results.filter(Either.isLeft).map((l) => l.left._tag)).toEqual(
            Array.from({ length: 7 }, () => "VersionConflict")
          )
          expect(Option.getOrThrow(yield* docs.findOrder(s.trackNo)).currentVersion).toBe(from + 1)
        }
      }).pipe(Effect.provide(storageLayer(target)))
    )
  })
}

for (const target of targets) {
  describe(`a batch inside an open transaction: ${target.name}`, () => {
    it.scoped("is undone alone when its mustChange statement changes nothing, and the transaction goes on", () =>
      Effect.gen(function* () {
        const engine = yield* target.open()
        yield* Effect.promise(() => sql`create table waybill_t_batch (id integer primary key)`.execute(engine.kysely))
        const conn = makeConnection(engine)
        const placeholder = engine.dialect === "postgres" ? "$1" : "?"
        const insert = (id: number, mustChange = false) => ({
          sql: `insert into waybill_t_batch (id) values (${placeholder}) on conflict do nothing`,
          parameters: [id],
          mustChange
        })
        const outcome = yield* conn.withTransaction(
          Effect.gen(function* () {
            yield* conn.batch("t.first", [insert(1)])
            // 2 is written, then 1 changes nothing: the batch's 2 goes, the transaction stays.
            const again = yield* conn.batch("t.again", [insert(2), insert(1, true), insert(3)])
            yield* conn.batch("t.after", [insert(4)])
            return again
          })
        )
        expect(outcome).toEqual({ unchanged: 1 })
        const rows = yield* Effect.promise(() =>
          sql<{ readonly id: number }>`select id from waybill_t_batch order by id`.execute(engine.kysely)
        )
        expect(rows.rows.map((r) => Number(r.id))).toEqual([1, 4])
      })
    )
  })
}
