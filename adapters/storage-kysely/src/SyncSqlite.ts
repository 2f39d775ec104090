/**
 * @module SyncSqlite
 *
 * The synchronous fast path for SQLite. better-sqlite3 runs every statement synchronously, but
 * through Kysely each statement still costs a chain of promises (driver, connection provider,
 * mutex) and, in Effect, an asynchronous suspension of the fiber. When the stores know the
 * better-sqlite3 handle behind a Kysely instance, they compile their SQL with that Kysely (so
 * its dialect and plugins apply) and run it on the handle directly, synchronously; a booking is
 * then a single uninterrupted run of its fiber.
 *
 * ```ts
 * const sqlite = new Database(file)                  // better-sqlite3
 * const db = sqliteKysely<WaybillDatabase>(sqlite)   // a Kysely over it, registered for the fast path
 * await migrateToLatest(db)
 * const storage = StorageKysely.layer(db)            // finds the handle: statements run synchronously
 * ```
 *
 * A host that builds its own Kysely calls {@link registerSqlite} with the same handle instead.
 * Without either, the stores go through Kysely as before (that is the PostgreSQL path too).
 *
 * Transactions on the fast path are SQLite's own `BEGIN` / `COMMIT` on the handle, guarded by
 * one lock per handle that every `StorageKysely` layer over that Kysely shares: while a fiber
 * holds a transaction, other fibers' Waybill statements wait for it. Queries the host itself
 * sends through the same Kysely instance while a Waybill transaction is open would run inside
 * it; send your own writes through another connection, or outside Waybill's calls.
 */
import { Kysely, SqliteDialect } from "kysely"
import { withStatementCache } from "./StatementCache.js"

/** A prepared statement of a synchronous SQLite driver (better-sqlite3's `Statement`). */
export interface SqliteStatement {
  /** Whether the statement returns rows (`SELECT`, `... RETURNING`). */
  readonly reader: boolean
  all(...parameters: Array<any>): Array<unknown>
  run(...parameters: Array<any>): { readonly changes: number | bigint; readonly lastInsertRowid: number | bigint }
}

/** A synchronous SQLite driver's database handle (better-sqlite3's `Database`). */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement
  /** Whether a transaction is open on the handle. */
  readonly inTransaction: boolean
  close(): unknown
}

const registry = new WeakMap<object, SqliteDatabase>()

/**
 * Tells the storage layer that `db` is a Kysely over `database`, so its statements may run on
 * `database` synchronously. Register before building any `StorageKysely` layer over `db`, and
 * register the handle Kysely itself uses.
 */
export const registerSqlite = <K extends Kysely<any>>(db: K, database: SqliteDatabase): K => {
  registry.set(db, database)
  return db
}

/** The handle registered for `db`, if any (the fast path is on for it). */
export const registeredSqlite = (db: Kysely<any>): SqliteDatabase | undefined => registry.get(db)

/**
 * A Kysely over a better-sqlite3 handle, with prepared statements cached for Kysely's own
 * queries ({@link withStatementCache}) and the handle registered for the synchronous path.
 */
export const sqliteKysely = <DB>(database: SqliteDatabase): Kysely<DB> =>
  registerSqlite(
    new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(database) as never }) }),
    database
  )
