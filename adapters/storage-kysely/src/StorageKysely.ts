/**
 * @module StorageKysely
 *
 * Every storage port of `@waybill/core` (`ShipmentStore`, `AccountStore`, `EventOutbox`,
 * `Transactor`) over one host-supplied Kysely instance. The host owns the connection (dialect,
 * pool, WAL, lifetime); Waybill owns only its `waybill_` tables, created by {@link migrate}.
 *
 * Transactions are Kysely controlled transactions kept in a `FiberRef`: inside
 * `Transactor.withTransaction` every store call made by that fiber (and fibers it forks) runs on
 * the transaction, so use cases compose stores freely without passing a handle around. Store
 * methods that write several statements open their own transaction, or join the caller's.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type ControlledTransaction, type Kysely, sql } from "kysely"
import {
  type AccountStoreShape,
  AccountStoreTag,
  DuplicateKey,
  type EventOutboxShape,
  EventOutboxTag,
  type IpBlocklistShape,
  IpBlocklistTag,
  type ShipmentStoreShape,
  ShipmentStoreTag,
  StorageError,
  type StorageServices,
  type TransactorShape,
  TransactorTag,
  VersionConflict
} from "./internal/core.js"
import { isUniqueViolation } from "./internal/errors.js"
import * as Rows from "./internal/rows.js"
import type { WaybillDatabase } from "./Tables.js"

export { migrate, migrateToLatest } from "./Migrations.js"
export type { StorageServices } from "./internal/core.js"

type Db = Kysely<WaybillDatabase>
type Trx = ControlledTransaction<WaybillDatabase>

/** The four port implementations over one database, before they are put in a Layer. */
export interface Stores {
  readonly shipments: ShipmentStoreShape
  readonly accounts: AccountStoreShape
  readonly outbox: EventOutboxShape
  readonly transactor: TransactorShape
  readonly ipBlocks: IpBlocklistShape
}

/**
 * Builds the stores for `database`. Each call gets its own transaction `FiberRef`, so two
 * databases in one program never see each other's transactions.
 */
export const make = (database: Kysely<any>): Effect.Effect<Stores> =>
  Effect.sync(() => {
    const db: Db = database
    const current = FiberRef.unsafeMake<Option.Option<Trx>>(Option.none())

    /** The open transaction of this fiber, else the database itself. */
    const connection: Effect.Effect<Db> = Effect.map(
      FiberRef.get(current),
      Option.getOrElse(() => db)
    )

    const query = <A>(operation: string, run: (c: Db) => Promise<A>): Effect.Effect<A, StorageError> =>
      Effect.flatMap(connection, (c) =>
        Effect.tryPromise({ try: () => run(c), catch: (cause) => new StorageError({ operation, cause }) })
      )

    const queryUnique = <A>(
      operation: string,
      what: DuplicateKey["what"],
      run: (c: Db) => Promise<A>
    ): Effect.Effect<A, DuplicateKey | StorageError> =>
      Effect.flatMap(connection, (c) =>
        Effect.tryPromise({
          try: () => run(c),
          catch: (cause): DuplicateKey | StorageError =>
            isUniqueViolation(cause) ? new DuplicateKey({ what }) : new StorageError({ operation, cause })
        })
      )

    const begin: Effect.Effect<Trx, StorageError> = Effect.tryPromise({
      try: () => db.startTransaction().execute(),
      catch: (cause) => new StorageError({ operation: "transaction.begin", cause })
    })

    // Uninterruptible: once COMMIT is sent its outcome must be known before release decides
    // whether a ROLLBACK is still owed.
    const commit = (trx: Trx): Effect.Effect<void, StorageError> =>
      Effect.uninterruptible(
        Effect.tryPromise({
          try: () => trx.commit().execute(),
          catch: (cause) => new StorageError({ operation: "transaction.commit", cause })
        })
      )

    // Runs after a failure, defect, interruption or failed COMMIT. Kysely releases the
    // connection even when ROLLBACK itself fails, so a failed rollback is only worth a log line:
    // the original cause is what the caller needs to see.
    const rollback = (trx: Trx): Effect.Effect<void> =>
      trx.isCommitted || trx.isRolledBack
        ? Effect.void
        : Effect.tryPromise(() => trx.rollback().execute()).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("waybill storage: rollback failed", cause))
          )

    const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
      Effect.flatMap(
        FiberRef.get(current),
        (open): Effect.Effect<A, E | StorageError, R> =>
          Option.isSome(open)
            ? self // nested: join the outer transaction; the outermost call commits or rolls back
            : Effect.acquireUseRelease(
                begin,
                (trx) => Effect.zipLeft(Effect.locally(self, current, Option.some(trx)), commit(trx)),
                rollback
              )
      )

    const children = (trackNo: string) =>
      Effect.all([
        query("stops.select", (c) =>
          c.selectFrom("waybill_stops").selectAll().where("track_no", "=", trackNo).orderBy("seq").execute()
        ),
        query("legs.select", (c) =>
          c.selectFrom("waybill_legs").selectAll().where("track_no", "=", trackNo).orderBy("seq").execute()
        ),
        query("pieces.select", (c) =>
          c.selectFrom("waybill_pieces").selectAll().where("track_no", "=", trackNo).orderBy("seq").execute()
        )
      ]).pipe(
        Effect.map(([stops, legs, pieces]) => ({
          stops: stops.map(Rows.toStop),
          legs: legs.map(Rows.toLeg),
          pieces: pieces.map(Rows.toPiece)
        }))
      )

    const shipments: ShipmentStoreShape = {
      // The booking hot path: one statement per table, in one transaction.
      insert: (s) =>
        withTransaction(
          Effect.gen(function* () {
            yield* queryUnique("shipments.insert", "track_no", (c) =>
              c.insertInto("waybill_shipments").values(Rows.shipmentRow(s)).execute()
            )
            if (s.stops.length > 0) {
              yield* query("stops.insert", (c) =>
                c
                  .insertInto("waybill_stops")
                  .values(s.stops.map(Rows.stopRow(s.trackNo)))
                  .execute()
              )
            }
            if (s.legs.length > 0) {
              yield* query("legs.insert", (c) =>
                c
                  .insertInto("waybill_legs")
                  .values(s.legs.map(Rows.legRow(s.trackNo)))
                  .execute()
              )
            }
            if (s.pieceDetails.length > 0) {
              yield* query("pieces.insert", (c) =>
                c
                  .insertInto("waybill_pieces")
                  .values(s.pieceDetails.map(Rows.pieceRow(s.trackNo)))
                  .execute()
              )
            }
          })
        ),

      // In a transaction so the shipment row and its stops come from the same moment (a
      // concurrent update cannot land between the reads and pair an old version with new
      // stop statuses).
      findByTrackNo: (trackNo) =>
        withTransaction(
          Effect.gen(function* () {
            const row = yield* query("shipments.select", (c) =>
              c.selectFrom("waybill_shipments").selectAll().where("track_no", "=", trackNo).executeTakeFirst()
            )
            if (row === undefined) return Option.none()
            const { legs, pieces, stops } = yield* children(trackNo)
            return Option.some(Rows.toShipment(row, stops, legs, pieces))
          })
        ),

      update: (change) =>
        withTransaction(
          Effect.gen(function* () {
            // The version guard and the write are one statement: whichever writer's UPDATE runs
            // second matches no row (PostgreSQL re-checks the WHERE after the first commits).
            const row = yield* query("shipments.update", (c) =>
              c
                .updateTable("waybill_shipments")
                .set({
                  state: change.state,
                  driver_id: change.driverId,
                  updated_at: change.updatedAt,
                  version: change.expectedVersion + 1
                })
                .where("track_no", "=", change.trackNo)
                .where("version", "=", change.expectedVersion)
                .returningAll()
                .executeTakeFirst()
            )
            if (row === undefined) return yield* new VersionConflict({ trackNo: change.trackNo })
            if (change.stops.length > 0) {
              // One statement for all changed stops; the last status given for a seq wins.
              const statuses = new Map(change.stops.map((s) => [s.seq, s.status] as const))
              const whens = [...statuses].map(([seq, status]) => sql`when ${seq} then ${status}`)
              yield* query("stops.update", (c) =>
                c
                  .updateTable("waybill_stops")
                  .set({ status: sql<string>`case seq ${sql.join(whens, sql` `)} else status end` })
                  .where("track_no", "=", change.trackNo)
                  .where("seq", "in", [...statuses.keys()])
                  .execute()
              )
            }
            const { legs, pieces, stops } = yield* children(change.trackNo)
            return Rows.toShipment(row, stops, legs, pieces)
          })
        )
    }

    const outbox: EventOutboxShape = {
      // Two statements in one transaction. Concurrent appends for one shipment are serialized
      // by the shipment's own version check (events are appended in the transaction of the
      // update they record); a lost race anyway surfaces as a StorageError from the unique
      // (track_no, sequence) constraint, never as a duplicate sequence.
      append: (event) =>
        withTransaction(
          Effect.gen(function* () {
            const top = yield* query("events.next-sequence", (c) =>
              c
                .selectFrom("waybill_events")
                .select((eb) => eb.fn.max("sequence").as("top"))
                .where("track_no", "=", event.trackNo)
                .executeTakeFirst()
            )
            const stored = {
              id: event.id,
              type: event.type,
              customerNo: event.customerNo,
              trackNo: event.trackNo,
              sequence: top?.top === null || top?.top === undefined ? 1 : Number(top.top) + 1,
              livemode: event.livemode,
              occurredAt: event.occurredAt,
              data: event.data
            }
            yield* query("events.insert", (c) => c.insertInto("waybill_events").values(Rows.eventRow(stored)).execute())
            return stored
          })
        ),

      listByShipment: (trackNo) =>
        query("events.select", (c) =>
          c.selectFrom("waybill_events").selectAll().where("track_no", "=", trackNo).orderBy("sequence").execute()
        ).pipe(Effect.map((rows) => rows.map(Rows.toEvent)))
    }

    const accounts: AccountStoreShape = {
      insertAccount: (account) =>
        queryUnique("accounts.insert", "customer_no", (c) =>
          c.insertInto("waybill_accounts").values(Rows.accountRow(account)).execute()
        ).pipe(Effect.asVoid),

      findAccount: (customerNo) =>
        query("accounts.select", (c) =>
          c.selectFrom("waybill_accounts").selectAll().where("customer_no", "=", customerNo).executeTakeFirst()
        ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), Rows.toAccount))),

      // Writes every field but the key; a missing account changes nothing (callers look it up first).
      updateAccount: (account) => {
        const { customer_no, ...fields } = Rows.accountRow(account)
        return query("accounts.update", (c) =>
          c.updateTable("waybill_accounts").set(fields).where("customer_no", "=", customer_no).execute()
        ).pipe(Effect.asVoid)
      },

      // Upsert on the (customer_no, mode) slot. A hash taken by another slot violates the
      // partial unique index instead, which ON CONFLICT does not absorb: that is DuplicateKey.
      putKey: (key) => {
        const row = Rows.keyRow(key)
        const slot = {
          id: row.id,
          status: row.status,
          generation: row.generation,
          hash: row.hash,
          hint: row.hint,
          updated_at: row.updated_at
        }
        return queryUnique("api_keys.put", "key", (c) =>
          c
            .insertInto("waybill_api_keys")
            .values(row)
            .onConflict((oc) => oc.columns(["customer_no", "mode"]).doUpdateSet(slot))
            .execute()
        ).pipe(Effect.asVoid)
      },

      // The literal `hash <> ''` repeats the partial index's predicate so both SQLite and
      // PostgreSQL can prove the index applies (a bound parameter would not let them).
      findKeyByHash: (hash) =>
        hash === ""
          ? Effect.succeed(Option.none())
          : query("api_keys.select-by-hash", (c) =>
              c
                .selectFrom("waybill_api_keys")
                .selectAll()
                .where("hash", "=", hash)
                .where(sql.ref("hash"), "<>", sql.lit(""))
                .executeTakeFirst()
            ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), Rows.toKey))),

      findKey: (customerNo, mode) =>
        query("api_keys.select", (c) =>
          c
            .selectFrom("waybill_api_keys")
            .selectAll()
            .where("customer_no", "=", customerNo)
            .where("mode", "=", mode)
            .executeTakeFirst()
        ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), Rows.toKey))),

      listKeys: (customerNo) =>
        query("api_keys.list", (c) =>
          c.selectFrom("waybill_api_keys").selectAll().where("customer_no", "=", customerNo).orderBy("mode").execute()
        ).pipe(Effect.map((rows) => rows.map(Rows.toKey))),

      linkAccount: (parent, child) =>
        query("account_links.insert", (c) =>
          c
            .insertInto("waybill_account_links")
            .values({ parent_customer_no: parent, child_customer_no: child })
            .onConflict((oc) => oc.columns(["parent_customer_no", "child_customer_no"]).doNothing())
            .execute()
        ).pipe(Effect.asVoid),

      unlinkAccount: (parent, child) =>
        query("account_links.delete", (c) =>
          c
            .deleteFrom("waybill_account_links")
            .where("parent_customer_no", "=", parent)
            .where("child_customer_no", "=", child)
            .execute()
        ).pipe(Effect.asVoid),

      linkedChildren: (parent) =>
        query("account_links.select", (c) =>
          c
            .selectFrom("waybill_account_links")
            .select("child_customer_no")
            .where("parent_customer_no", "=", parent)
            .orderBy("child_customer_no")
            .execute()
        ).pipe(Effect.map((rows) => rows.map((r) => r.child_customer_no)))
    }

    const ipBlock = (r: { ip_key: string; until: unknown; reason: string; created_at: unknown; strikes: unknown }) => ({
      ipKey: r.ip_key,
      until: Number(r.until),
      reason: r.reason,
      createdAt: Number(r.created_at),
      strikes: Number(r.strikes)
    })

    const ipBlocks: IpBlocklistShape = {
      find: (ipKey) =>
        query("ip_blocks.find", (c) =>
          c.selectFrom("waybill_ip_blocks").selectAll().where("ip_key", "=", ipKey).executeTakeFirst()
        ).pipe(Effect.map((r) => Option.map(Option.fromNullable(r), ipBlock))),
      put: (b) =>
        query("ip_blocks.put", (c) =>
          c
            .insertInto("waybill_ip_blocks")
            .values({ ip_key: b.ipKey, until: b.until, reason: b.reason, created_at: b.createdAt, strikes: b.strikes })
            .onConflict((oc) =>
              oc
                .column("ip_key")
                .doUpdateSet({ until: b.until, reason: b.reason, created_at: b.createdAt, strikes: b.strikes })
            )
            .execute()
        ).pipe(Effect.asVoid),
      remove: (ipKey) =>
        query("ip_blocks.remove", (c) =>
          c.deleteFrom("waybill_ip_blocks").where("ip_key", "=", ipKey).executeTakeFirst()
        ).pipe(Effect.map((r) => Number(r.numDeletedRows) > 0)),
      listActive: (now) =>
        query("ip_blocks.list", (c) =>
          c.selectFrom("waybill_ip_blocks").selectAll().where("until", ">", now).orderBy("until").execute()
        ).pipe(Effect.map((rows) => rows.map(ipBlock)))
    }

    return { shipments, accounts, outbox, transactor: { withTransaction }, ipBlocks }
  })

/**
 * All four storage ports over `db`, which must already be migrated ({@link migrate}). The host
 * keeps ownership of `db`: the layer never destroys it.
 */
export const layer = (db: Kysely<any>): Layer.Layer<StorageServices> =>
  Layer.effectContext(
    Effect.map(make(db), (stores) =>
      Context.make(ShipmentStoreTag, stores.shipments).pipe(
        Context.add(AccountStoreTag, stores.accounts),
        Context.add(EventOutboxTag, stores.outbox),
        Context.add(TransactorTag, stores.transactor),
        Context.add(IpBlocklistTag, stores.ipBlocks)
      )
    )
  )
