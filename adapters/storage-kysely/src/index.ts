/**
 * @module @waybill/storage-kysely
 *
 * Waybill's storage ports over a Kysely instance the host creates (SQLite through
 * better-sqlite3, or PostgreSQL). Typical host wiring:
 *
 * ```ts
 * const db = sqliteKysely<WaybillDatabase>(new Database(file))  // or your own Kysely (PostgreSQL, ...)
 * await migrateToLatest(db)                       // or: yield* migrate(db)
 * const storage = StorageKysely.layer(db)         // ShipmentStore | AccountStore | EventOutbox | Transactor
 * ```
 */
export * as Migrations from "./Migrations.js"
export { migrate, migrateToLatest } from "./Migrations.js"
export { type SqliteLike, withStatementCache } from "./StatementCache.js"
export * as StorageKysely from "./StorageKysely.js"
export {
  registeredSqlite,
  registerSqlite,
  type SqliteDatabase,
  sqliteKysely,
  type SqliteStatement
} from "./SyncSqlite.js"
export * as Tables from "./Tables.js"
export type { WaybillDatabase } from "./Tables.js"
