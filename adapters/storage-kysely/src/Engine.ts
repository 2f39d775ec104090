/**
 * @module Engine
 *
 * The one way Waybill's stores run SQL, on SQLite and PostgreSQL alike. The stores build every
 * query with Kysely and compile it with Kysely's compiler (the hot ones once, as templates); an
 * engine runs the compiled text and its parameters on the database, through a small driver of
 * its dialect:
 *
 * - SQLite ({@link sqliteEngine}): a better-sqlite3 handle, statements run synchronously and
 *   prepared once per SQL text; transactions are group-committed (units that arrive while one
 *   batch is open commit together, each under its own `SAVEPOINT`).
 * - PostgreSQL ({@link postgresEngine}): a `pg` pool; a transaction holds one pooled client from
 *   `BEGIN` to `COMMIT`.
 *
 * Each engine also carries a Kysely ({@link StorageEngine.kysely}) whose driver is that engine:
 * the stores compile with it, migrations run through it, and a host may send its own queries
 * through it (they never land inside a Waybill transaction).
 */
import type * as Effect from "effect/Effect"
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings
} from "kysely"
import type { StorageError } from "./internal/core.js"
import type { WaybillDatabase } from "./Tables.js"

/** What running a statement returns: its rows, and for writes without `RETURNING` how many rows changed. */
export interface Result<R = any> {
  readonly rows: Array<R>
  readonly numAffectedRows?: bigint
}

/**
 * Runs one compiled statement; a driver error becomes `onError(cause)`. On SQLite the statement
 * runs when `Run` is called and the answer is an `Exit` (no promise, no suspension, and callers
 * can map it without a runtime step), unless it has to wait its turn.
 * A write outside a transaction is committed before the effect completes; when that commit
 * fails, the error is a `StorageError("transaction.commit")`.
 */
export type Run = <E>(
  sql: string,
  parameters: ReadonlyArray<unknown>,
  onError: (cause: unknown) => E
) => Effect.Effect<Result, E | StorageError>

/** A connection reserved for Kysely's own driver (migrations, a host's queries). */
export interface Reserved {
  readonly run: (sql: string, parameters: ReadonlyArray<unknown>) => Promise<Result>
  /**
   * Gives the connection back. `broken`: it may be unusable (say, a `ROLLBACK` failed), so a pool
   * discards it instead of handing it out again.
   */
  readonly release: (broken?: boolean) => void
}

/** Options every engine takes. */
export interface EngineOptions {
  /**
   * Called with every statement the engine sends, before it runs (transaction control
   * included): for tracing, or for tests counting statements.
   */
  readonly onStatement?: (sql: string, parameters: ReadonlyArray<unknown>) => void
}

/** A database as Waybill's stores see it. Build one with `sqliteEngine` or `postgresEngine`. */
export interface StorageEngine {
  readonly dialect: "sqlite" | "postgres"
  /**
   * A Kysely over this engine: the stores build and compile their queries with it; migrations
   * and a host's own queries run through it. `destroy()` closes the engine (and the handle or
   * pool under it).
   */
  readonly kysely: Kysely<WaybillDatabase>
  /** Runs a statement outside any transaction. */
  readonly run: Run
  /**
   * Runs `body` in a transaction, its statements through the `Run` it is given. Commits when
   * `body` succeeds, rolls back on failure, defect or interruption. `snapshot` asks for one
   * snapshot for every read (PostgreSQL: `repeatable read`; a SQLite transaction always reads
   * one). Nesting is the caller's business: this always opens a new one. Once `body`'s effect
   * has ended, the engine runs no code of the caller's before it answers (the connection relies
   * on this to scope the fiber's transaction mark).
   */
  readonly transaction: <A, E, R>(
    snapshot: boolean,
    body: (run: Run) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | StorageError, R>
  /** An exclusive connection for Kysely's driver; no Waybill transaction is open on it. */
  readonly reserve: () => Promise<Reserved>
  /**
   * Whether the database answers and has every migration of this library version applied, for
   * a readiness probe. Never rejects (an unreachable database is `reachable: false`).
   */
  readonly health: () => Promise<{ readonly reachable: boolean; readonly migrated: boolean }>
  /** Closes the engine and the handle or pool it was given. */
  readonly close: () => Promise<void>
}

/**
 * A Kysely dialect whose driver is `engine` (every statement Kysely runs goes through
 * {@link StorageEngine.reserve}), with `base`'s compiler, adapter and introspector.
 */
export const engineDialect = (engine: () => StorageEngine, base: Dialect): Dialect => ({
  createAdapter: () => base.createAdapter(),
  createQueryCompiler: () => base.createQueryCompiler(),
  createIntrospector: (db) => base.createIntrospector(db),
  createDriver: () => new EngineDriver(engine)
})

class EngineConnection implements DatabaseConnection {
  constructor(readonly reserved: Reserved) {}
  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.reserved.run(compiledQuery.sql, compiledQuery.parameters)
    return result as QueryResult<R>
  }
  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("@waybill/storage-kysely: streaming queries are not supported")
  }
}

class EngineDriver implements Driver {
  constructor(private readonly engine: () => StorageEngine) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return new EngineConnection(await this.engine().reserve())
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel === undefined ? "" : ` isolation level ${settings.isolationLevel}`
    const sql = this.engine().dialect === "postgres" && level !== "" ? `start transaction${level}` : "begin"
    await connection.executeQuery(CompiledQuery.raw(sql))
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"))
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"))
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    ;(connection as EngineConnection).reserved.release()
  }
  async destroy(): Promise<void> {
    await this.engine().close()
  }
}
