/**
 * @module @waybill/storage-kysely
 *
 * Waybill's storage ports over a database the host hands over: a better-sqlite3 handle or a
 * `pg` pool. Typical host wiring:
 *
 * ```ts
 * const engine = sqliteEngine(new Database(file))   // or postgresEngine(new pg.Pool(...))
 * await migrateToLatest(engine)                      // or: yield* migrate(engine)
 * const storage = StorageKysely.layer(engine)        // ShipmentStore | AccountStore | EventOutbox | Transactor | ...
 * ```
 */
export { type EngineOptions, type Reserved, type Result, type Run, type StorageEngine } from "./Engine.js"
export * as Migrations from "./Migrations.js"
export { type Health, health, migrate, migrateToLatest } from "./Migrations.js"
export {
  type PgClient,
  type PgPool,
  type PgResult,
  postgresEngine,
  type PostgresEngineOptions
} from "./PostgresEngine.js"
export { type SqliteEngineOptions, sqliteEngine, type SqliteHandle, type SqliteStatement } from "./SqliteEngine.js"
export * as StorageKysely from "./StorageKysely.js"
export * as Tables from "./Tables.js"
export type { WaybillDatabase } from "./Tables.js"
