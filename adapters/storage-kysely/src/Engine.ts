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
 * A unit of work that is a fixed list of statements (a booking: the shipment, its stops, its
 * event, the event's webhook deliveries) runs as a {@link StorageEngine.batch}: on SQLite it is
 * queued and run whole, with no caller's code between its statements, in the group commit's next
 * flush; on PostgreSQL it is one transaction.
 *
 * Each engine also carries a Kysely ({@link StorageEngine.kysely}) whose driver is that engine:
 * the stores compile with it, migrations run through it, and a host may send its own queries
 * through it (they never land inside a Waybill transaction).
 */
import * as Effect from "effect/Effect"
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings
} from "kysely"
import { StorageError } from "./internal/core.js"
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

/** One statement of a {@link StorageEngine.batch}. */
export interface BatchStatement {
  readonly sql: string
  readonly parameters: ReadonlyArray<unknown>
  /**
   * The batch stops at this statement when it changes no row (an insert `on conflict do nothing`
   * that met a taken key): what the batch wrote is undone and it answers `{ unchanged: index }`.
   */
  readonly mustChange?: boolean
}

/**
 * What a batch answers: every statement's result in order, or the index of the `mustChange`
 * statement that changed nothing (then nothing of the batch was kept).
 */
export type BatchOutcome =
  | { readonly results: ReadonlyArray<Result>; readonly unchanged?: undefined }
  | { readonly unchanged: number; readonly results?: undefined }

/**
 * Runs `statements` through `run` one after another: every result in order, or the index of the
 * first `mustChange` statement that changed no row (the statements after it do not run).
 * Undoing what ran before it is the caller's: each engine and the connection wrap this in their
 * own transaction or savepoint. `onError(cause, index)` maps a failing statement's error.
 */
export const runInOrder = <E>(
  run: Run,
  statements: ReadonlyArray<BatchStatement>,
  onError: (cause: unknown, index: number) => E
): Effect.Effect<BatchOutcome, E | StorageError> => {
  const results: Array<Result> = []
  const step = (i: number): Effect.Effect<BatchOutcome, E | StorageError> => {
    if (i === statements.length) return Effect.succeed({ results })
    const statement = statements[i]!
    return Effect.flatMap(
      run(statement.sql, statement.parameters, (cause) => onError(cause, i)),
      (result): Effect.Effect<BatchOutcome, E | StorageError> => {
        if (statement.mustChange === true && (result.numAffectedRows ?? 0n) === 0n) {
          return Effect.succeed({ unchanged: i })
        }
        results.push(result)
        return step(i + 1)
      }
    )
  }
  return step(0)
}

/**
 * {@link runInOrder} under a savepoint, so that a `mustChange` statement that changed nothing
 * (or a failing one) undoes only this batch: the way a batch joins a transaction that is already
 * open.
 */
export const runBatch = <E>(
  run: Run,
  statements: ReadonlyArray<BatchStatement>,
  onError: (cause: unknown, index: number) => E
): Effect.Effect<BatchOutcome, E | StorageError> => {
  // On SQLite a statement runs when `run` is called, so each of these is built only when due.
  const control = (sql: string) =>
    run(sql, [], (cause) => new StorageError({ operation: "transaction.savepoint", cause }))
  const undo = () => Effect.flatMap(control(ROLLBACK_BATCH), () => control(RELEASE_BATCH))
  return Effect.flatMap(control(SAVEPOINT_BATCH), () =>
    Effect.onError(
      Effect.flatMap(runInOrder(run, statements, onError), (outcome) =>
        Effect.as(outcome.unchanged === undefined ? control(RELEASE_BATCH) : undo(), outcome)
      ),
      () => Effect.ignore(undo())
    )
  )
}

const SAVEPOINT_BATCH = "savepoint waybill_batch"
const RELEASE_BATCH = "release savepoint waybill_batch"
const ROLLBACK_BATCH = "rollback to savepoint waybill_batch"

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
  /**
   * Runs `statements` in order as one transaction (on SQLite: one unit of the group commit,
   * queued for its next flush and run there whole, answered once the `COMMIT` holding it
   * returned). A failing statement undoes the batch and fails with `onError(cause, index)`;
   * see {@link BatchStatement.mustChange} for the other way a batch stops. A batch inside an
   * open transaction is the connection's business ({@link runBatch}), not this.
   */
  readonly batch: <E>(
    statements: ReadonlyArray<BatchStatement>,
    onError: (cause: unknown, index: number) => E
  ) => Effect.Effect<BatchOutcome, E | StorageError>
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
